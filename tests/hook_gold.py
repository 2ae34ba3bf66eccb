"""Gold set for passive injection (the user-prompt hook's gate). Plain data.

MEMORIES  a coding agent's store for project `proj`: (key, kind, importance, content)
CASES     a prompt, the memory keys it should surface (empty: the hook must stay
          silent), the split (dev: tune the gate on it; test: held out), and the
          session's recent tool calls when the case has any.
ACTION_CASES  those of CASES that name an action (commit, push, deploy, migrate, test,
          release, install), in a request or in another sense.

A case "should inject" when a competent colleague who knew the store would mention
one of its memories before answering. Every listed key is an acceptable injection;
anything else injected counts against precision. The silent cases include near-miss
distractors: prompts that share a striking word with some memory ("Friday", "Berlin",
"Redis", "cron") while asking about something else.

bench/hook_gate.py scores the gate on it; tests/test_hooks.py holds the floors.
"""

from __future__ import annotations

from dataclasses import dataclass

DEV, TEST = "dev", "test"

# fmt: off
MEMORIES: list[tuple[str, str, int, str]] = [
    ("pnpm", "convention", 7, "Use pnpm, not npm or yarn, for the web app; the lockfile is pnpm-lock.yaml and CI fails on any other lockfile."),
    ("pytest", "procedure", 6, "Run the Python test suite with `pytest -n 4 -p no:cacheprovider`; the integration tests need MEMLANE_EMBED_PROFILE=hash."),
    ("utc", "convention", 7, "Store every timestamp in UTC as ISO 8601 with a Z suffix; convert to local time only when rendering dates for people."),
    ("friday", "constraint", 8, "Never deploy to production on Fridays; the on-call rotation is thin over the weekend."),
    ("staging", "procedure", 6, "Deploy to staging with the deploy-staging GitHub Actions workflow; it needs the STAGING_KUBECONFIG secret."),
    ("postgres", "decision", 8, "Decision: PostgreSQL 16 with pgvector backs the shared server, chosen over Qdrant to keep one database to back up."),
    ("alembic", "convention", 7, "Database migrations are written with Alembic; never edit a migration that has shipped, add a new revision instead."),
    ("tabs", "preference", 6, "The user prefers tabs in Go code and four spaces in Python; never reformat lines you did not change."),
    ("commits", "convention", 6, "Commit messages use the imperative mood, a subject under 72 characters, and reference the issue number like (#123)."),
    ("ruff", "convention", 6, "Lint and format Python with ruff (line length 100); black and isort are no longer used."),
    ("mypy", "fact", 5, "mypy runs in strict mode on src/; the tests are type-checked without strict."),
    ("flaky", "lesson", 6, "test_upload_large_file is flaky on CI because of the 30 s S3 mock timeout; rerun it once before debugging."),
    ("redis", "fact", 5, "User sessions are cached in Redis with a 15 minute TTL under the sess: key prefix."),
    ("jwt", "fact", 6, "The auth service signs JWTs with RS256; the signing keys rotate every 90 days through the rotate-keys cron job."),
    ("rest", "decision", 7, "Decision: the public API stays REST with OpenAPI docs; GraphQL was rejected for its caching and rate-limiting cost."),
    ("flags", "convention", 6, "New checkout features ship behind a LaunchDarkly feature flag named checkout-<feature>."),
    ("logging", "constraint", 8, "Log with structlog and never log request bodies: payment requests carry card numbers."),
    ("docker", "lesson", 6, "On Apple Silicon (M1/M2 Macs) build images with `docker buildx build --platform linux/amd64`, or the cluster cannot run them."),
    ("release", "procedure", 7, "Release: bump the version in pyproject.toml, tag vX.Y.Z, and the publish workflow uploads the wheel to PyPI."),
    ("ci-cache", "lesson", 5, "CI caches the pnpm store keyed by the lockfile hash; clear that cache in the Actions tab when installed dependencies look stale."),
    ("alice", "fact", 6, "Alice Chen owns the billing module and must review every change to it."),
    ("ts-strict", "constraint", 7, "The frontend TypeScript config enables strict and noUncheckedIndexedAccess; never disable them to silence type errors."),
    ("sqlite", "lesson", 6, "The local store is SQLite in WAL mode: never copy the .db file while it is open; use the backup command."),
    ("query", "decision", 6, "Server state in the React app goes through TanStack Query; we decided against adding Redux."),
    ("dotenv", "constraint", 8, ".env files are never committed; local development secrets come from 1Password with `op run`."),
    ("bench", "convention", 5, "Benchmark numbers are only recorded from the 2-core bench runner; laptop numbers are not comparable."),
    ("exit-codes", "fact", 5, "CLI exit codes: 0 ok, 1 not found or runtime failure, 2 usage error or refused input."),
    ("rate-limit", "fact", 5, "The public API allows 100 requests per minute per token; throttled calls get HTTP 429 with a Retry-After header."),
    ("i18n", "convention", 6, "Every user-facing string goes through the t() helper with keys in locales/en.json; no hard-coded English in components."),
    ("email", "fact", 5, "Transactional email goes through Postmark; every non-production environment uses the Postmark sandbox server."),
    ("coverage", "constraint", 6, "Pull requests must keep line coverage at 85 percent or more; the coverage job fails below that."),
    ("new-service", "procedure", 6, "A new service needs the checklist in docs/new-service.md: health endpoint, metrics, alerts and a runbook."),
    ("terraform", "constraint", 7, "Infrastructure changes go through Terraform in the infra repository; never change resources by hand in the AWS console."),
    ("macos-tmp", "lesson", 5, "On macOS the temp directory is a symlink (/var -> /private/var); resolve paths before comparing them in tests."),
    ("sam", "preference", 7, "The user is Sam, works from the Berlin timezone, and wants short answers without preamble."),
    ("numpy", "fact", 6, "numpy is pinned below 2.0 in the ml-service because the ONNX export breaks on numpy 2.x."),
    ("cron", "fact", 5, "Nightly batch jobs run as Kubernetes CronJobs in the batch namespace at 02:00 UTC."),
    ("pagination", "convention", 6, "List endpoints paginate with opaque cursors, never page numbers; the largest page size is 200."),
    ("tailwind", "convention", 5, "Styling uses Tailwind utility classes; do not add new CSS modules or styled-components."),
    ("orders-index", "lesson", 7, "Outage postmortem: a missing index on orders.customer_id made checkout time out; run EXPLAIN on every new query against the orders table."),
    # The rules that govern an action (see ACTION_CASES), and memories that only mention one.
    ("make-lint", "convention", 6, "Always run `make lint` before committing."),
    ("db-tests", "decision", 7, "Decision: the DB integration tests run against a throwaway PostgreSQL container from docker compose, never SQLite."),
    ("main-branch", "convention", 7, "Never push directly to main; open a pull request and squash-merge it after one approval."),
    ("uv", "procedure", 6, "Install dependencies with `uv sync --frozen`; never pip install packages into the system interpreter."),
    ("changelog", "convention", 5, "Every user-facing change gets a line in CHANGELOG.md under Unreleased; a release moves those lines under its version."),
    ("deploy-log", "event", 4, "Deployed v2.3.1 to production on 3 March; the rollout took 40 minutes."),
    ("suite-time", "fact", 4, "The full test suite takes about 14 minutes on CI since the runner upgrade."),
    ("mongo", "event", 5, "Migrated the analytics events from MongoDB to ClickHouse in 2023."),
]
# fmt: on


@dataclass(frozen=True, slots=True)
class Case:
    prompt: str
    expected: tuple[str, ...]  # memory keys; () = stay silent
    split: str
    tools: tuple[str, ...] = ()  # the session's recent tool calls (see the last cases)


def _cases(split_start: str, rows: list[tuple[str, tuple[str, ...]]]) -> list[Case]:
    """Rows alternating between the splits, starting with `split_start`."""
    other = TEST if split_start == DEV else DEV
    return [Case(p, e, split_start if i % 2 == 0 else other) for i, (p, e) in enumerate(rows)]


SHOULD_INJECT: list[tuple[str, tuple[str, ...]]] = [
    ("add lodash to the web app dependencies", ("pnpm",)),
    ("how do I run the python tests locally?", ("pytest",)),
    ("save the date each order was created in the database", ("utc",)),
    ("can we ship the hotfix to production this Friday afternoon?", ("friday",)),
    ("deploy my branch to staging please", ("staging",)),
    ("should we use Qdrant for vector search on the shared server instead?", ("postgres",)),
    ("I need to change the users table schema and add a column", ("alembic",)),
    ("reformat this Go file to use spaces instead of tabs", ("tabs",)),
    ("write a commit message for these changes", ("commits",)),
    ("set up black and isort for the new package", ("ruff",)),
    ("why is mypy complaining about missing type annotations in src?", ("mypy",)),
    ("test_upload_large_file failed on CI again", ("flaky",)),
    ("how long do user sessions stay cached?", ("redis",)),
    ("how are the JWT signing keys rotated?", ("jwt",)),
    ("let's add a GraphQL endpoint to the public API", ("rest",)),
    ("put the new one-click checkout feature behind a flag", ("flags",)),
    ("log the full request body when the payment endpoint fails", ("logging",)),
    ("the docker image I built on my M1 Mac won't start on the cluster", ("docker",)),
    ("publish version 1.4.0 to PyPI", ("release",)),
    ("CI keeps installing stale dependencies, is the pnpm cache broken?", ("ci-cache", "pnpm")),
    ("who should review my refactor of the billing module?", ("alice",)),
    (
        "turn off noUncheckedIndexedAccess in the TypeScript config, it causes too many errors",
        ("ts-strict",),
    ),
    ("copy the memlane .db file to my backup drive", ("sqlite",)),
    ("should I add Redux to manage server state in the React app?", ("query",)),
    ("commit the .env file so the others get the local settings", ("dotenv",)),
    ("record these benchmark numbers from my laptop in the results", ("bench",)),
    ("which exit code should the CLI return for refused input?", ("exit-codes",)),
    ("the client keeps getting HTTP 429 from the public API", ("rate-limit",)),
    ("add a Save button label to the settings component in English", ("i18n",)),
    ("send a test password reset email from the staging environment", ("email",)),
    ("the coverage job failed on my pull request", ("coverage",)),
    ("I'm starting a new service for invoices; what does it need?", ("new-service",)),
    ("bump the RDS instance size by hand in the AWS console", ("terraform",)),
    ("a path comparison test fails only on macOS", ("macos-tmp",)),
    ("upgrade numpy to 2.1 in the ml-service", ("numpy",)),
    ("at what time do the nightly batch jobs run?", ("cron",)),
    ("add page numbers to the orders list endpoint", ("pagination",)),
    ("write a CSS module for the new sidebar", ("tailwind",)),
    ("add a query that filters the orders table by customer", ("orders-index",)),
    ("what timezone does Sam work from?", ("sam",)),
]

SHOULD_STAY_SILENT: list[tuple[str, tuple[str, ...]]] = [
    # nothing in the store bears on these
    ("thanks, that's perfect", ()),
    ("continue", ()),
    ("explain what a Python decorator is", ()),
    ("write a haiku about autumn leaves", ()),
    ("what's the difference between a list and a tuple?", ()),
    ("rename the variable x to count in this function", ()),
    ("summarize this paragraph for me", ()),
    ("translate good morning into Spanish", ()),
    ("what is 17 times 23?", ()),
    ("refactor this loop into a list comprehension", ()),
    ("how does quicksort work?", ()),
    ("what's a good name for a pet turtle?", ()),
    ("summarize the plot of The Matrix", ()),
    ("/compact", ()),
    # near misses: a striking shared word, another subject
    ("write a poem about Fridays", ()),
    ("what timezone is Tokyo in?", ()),
    ("what is the capital of Germany? I think it is Berlin", ()),
    ("explain how Redis sorted sets work", ()),
    ("draw an ASCII picture of the Docker whale", ()),
    ("who invented the cron daemon?", ()),
    ("tell me about the history of the PostgreSQL project", ()),
    ("how many spaces wide is a tab in vim by default?", ()),
    ("write a unit test for the fibonacci function", ()),
    ("explain the difference between REST and SOAP in general", ()),
    ("tell me a joke about Kubernetes", ()),
    ("what is the population of Berlin?", ()),
    ("sort these names alphabetically: Sam, Alice, Bob", ()),
    ("compute a minimum set cover for these five sets", ()),
    ("what does the word cursor mean in English?", ()),
    ("give me a recipe for a Friday night pizza", ()),
    ("what is the release date of Python 3.13?", ()),
    ("explain how HTTP cookies store a session", ()),
]

# Prompts that name an action (commit, push, deploy, migrate, test, release, install):
# the procedures, conventions, constraints and decisions that govern it should come up,
# even when the prompt says little else. Every governing memory is listed as acceptable;
# a fact or an event that merely mentions the action is not.
COMMIT = ("make-lint", "commits", "dotenv")
DEPLOY = ("staging", "friday")
TESTS = ("pytest", "db-tests")
RELEASE = ("release", "changelog")
ACTION_SHOULD_INJECT: list[tuple[str, tuple[str, ...]]] = [
    ("commit these changes", COMMIT),
    ("ok, go ahead and commit", COMMIT),
    ("please commit the fix", COMMIT),
    ("can you make a commit for the refactor?", COMMIT),
    ("what should I do before committing?", COMMIT),
    ("commit and push", (*COMMIT, "main-branch")),
    ("push my branch", ("main-branch",)),
    ("push it to main", ("main-branch",)),
    ("can you push the commits to origin?", ("main-branch", *COMMIT)),
    ("is it ok to push now?", ("main-branch",)),
    ("deploy the app", DEPLOY),
    ("start the deployment", DEPLOY),
    ("how do I deploy this?", DEPLOY),
    ("deploy it to production", DEPLOY),
    ("run the migrations", ("alembic",)),
    ("migrate the database", ("alembic",)),
    ("write a migration for the new invoices table", ("alembic",)),
    ("migrating now, anything I should know?", ("alembic",)),
    ("run the database tests please", TESTS),
    ("run the tests", TESTS),
    ("test it before we merge", TESTS),
    ("run the integration tests", TESTS),
    ("please run the unit tests", TESTS),
    ("release version 2.0", RELEASE),
    ("let's cut a new release", RELEASE),
    ("prepare the release", RELEASE),
    ("how do we release?", RELEASE),
    ("install the dependencies", ("uv", "pnpm")),
    ("install requests", ("uv",)),
    ("installing the new package now", ("uv",)),
]
# The same words in another sense, or in a question that no project rule bears on.
ACTION_SHOULD_STAY_SILENT: list[tuple[str, tuple[str, ...]]] = [
    ("commit to memory that I like tea", ()),
    ("commit that to memory: my dog is called Rex", ()),
    ("let's test the waters with a small beta group", ()),
    ("my daughter has a spelling test tomorrow, any tips?", ()),
    ("the push notifications on my phone are too loud", ()),
    ("push back on this deadline politely in my reply", ()),
    ("when was the first release of Linux?", ()),
    ("what is a git commit, in simple terms?", ()),
    ("do birds migrate south in the winter?", ()),
    ("explain the difference between a unit test and an integration test", ()),
    ("how do I install Python on Windows?", ()),
    ("release the lock before returning from this function", ()),
    ("I made a commitment to finish this by Monday", ()),
    ("what does a deployment diagram in UML show?", ()),
    ("write a test plan template for a school science fair", ()),
    ("is testing cosmetics on animals banned in the EU?", ()),
]
ACTION_CASES: list[Case] = [
    *_cases(DEV, ACTION_SHOULD_INJECT),
    *_cases(DEV, ACTION_SHOULD_STAY_SILENT),
]

CASES: list[Case] = [
    *_cases(DEV, SHOULD_INJECT),
    *_cases(DEV, SHOULD_STAY_SILENT),
    # With the session's recent tool calls (the prompt alone says little): a shell
    # command each, or "Edit:<path>" for a file edit.
    Case(
        "why does it keep failing?",
        ("flaky",),
        DEV,
        ("pytest tests/test_upload.py::test_upload_large_file",),
    ),
    Case(
        "ok, now the same for the second model",
        ("alembic",),
        TEST,
        ("alembic revision -m 'add email'", "Edit:src/app/models.py", "git diff"),
    ),
    Case("looks good, what next?", (), TEST, ("git status", "pytest -q", "ruff check src")),
    Case("write a short haiku about the sea", (), DEV, ("git status", "pnpm install")),
    # Long prompts (pasted logs and drafts): many words, few of them the point.
    Case(
        "Here's the CI log from the failed run:\n"
        "FAILED tests/test_api.py::test_upload_large_file - TimeoutError: S3 mock did not "
        "respond within 30 s\n12 passed, 1 failed in 48.2s\n"
        "The same test passed yesterday and nothing in the upload path changed. Can you dig "
        "in and tell me what's going on before I start bisecting the last ten commits?",
        ("flaky",),
        DEV,
    ),
    Case(
        "I'm writing the migration for the invoices feature. The plan: add an invoices "
        "table, backfill it from the orders table with a script, then add a foreign key. I "
        "already edited the migration file we shipped last week to add the new table since "
        "it's basically the same change; is that fine, or should I restructure it?",
        ("alembic",),
        TEST,
    ),
    Case(
        "Here is a paragraph from my blog draft: 'Last Friday I finally moved my homelab "
        "from an old laptop to a small Kubernetes cluster. The hardest part was storage: "
        "the database kept losing its volume whenever a node restarted, and the cron jobs "
        "I had written years ago assumed a single machine.' Can you make it sound less stiff?",
        (),
        DEV,
    ),
    Case(
        "Proofread this email to my landlord: 'Hi Tom, the heating in the flat stopped "
        "working on Friday night and the boiler shows error 429 again. Could someone come "
        "by this week? I work from home, so any time between 9 and 5 is fine. Thanks, Sam'",
        (),
        TEST,
    ),
    *ACTION_CASES,
]
