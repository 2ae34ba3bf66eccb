"""A gold set for the PreToolUse lane: a project's memories, and tool calls an agent
makes, each with the memories that should be shown before it runs (none: silence).

Half the calls are `dev` (what the lane's rules were checked on), half `test`. The
store mixes rules (lessons, constraints, conventions, preferences) with facts, events
and decisions that mention the same tools, which must never be shown before a call.
"""

from __future__ import annotations

from typing import Any

# key -> (kind, text)
MEMORIES: dict[str, tuple[str, str]] = {
    "prod-migrations": (
        "constraint",
        "Never run migrations against prod by hand; the deploy pipeline migrates prod.",
    ),
    "force-push": (
        "lesson",
        "Never git push --force to main: it rewrote the shared history once and cost a day.",
    ),
    "generated-client": (
        "convention",
        "src/api/client.gen.ts is generated from openapi.yaml: edit the template in "
        "codegen/, then run make codegen.",
    ),
    "pnpm": ("preference", "Use pnpm for installs in this repo, not npm or yarn."),
    "shipped-migrations": (
        "lesson",
        "Do not edit a migration under alembic/versions once it has shipped; write a new one.",
    ),
    "release-main": (
        "constraint",
        "make release only from main, after the changelog is updated.",
    ),
    "docker-compose": (
        "lesson",
        "Don't use docker compose for the database here; the devcontainer's built-in "
        "Postgres listens on port 5433.",
    ),
    "terraform": (
        "constraint",
        "Change infrastructure only through terraform plan and terraform apply in CI, "
        "never kubectl apply by hand.",
    ),
    "settings-py": (
        "convention",
        "settings.py reads every secret from the environment; never write a key into it.",
    ),
    "pytest-workers": (
        "lesson",
        "pytest with -n auto deadlocks the database tests; run them with -n 2.",
    ),
    "rm-data": ("lesson", "rm -rf data/ deleted the only copy of the fixtures once: keep backups."),
    # Not rules: they mention the same tools and files, and must stay out.
    "fact-git": ("fact", "The main branch is protected on GitHub; git history goes back to 2019."),
    "event-deploy": ("event", "Deployed 2.3.1 to prod with kubectl after the outage."),
    "decision-npm": ("decision", "We publish the SDK to npm under the @acme scope."),
    "fact-settings": ("fact", "settings.py was split into base and local in March."),
    "fact-pytest": ("fact", "The test suite has 2,400 pytest tests and takes six minutes."),
}


def bash(command: str) -> dict[str, Any]:
    return {"tool_name": "Bash", "tool_input": {"command": command}}


def edit(path: str) -> dict[str, Any]:
    return {"tool_name": "Edit", "tool_input": {"file_path": path, "old_string": "a"}}


def write(path: str) -> dict[str, Any]:
    return {"tool_name": "Write", "tool_input": {"file_path": path, "content": "x"}}


# (split, call, expected memory keys)
CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("dev", bash("git push --force origin main"), ["force-push"]),
    ("test", bash("git push -f origin main"), ["force-push"]),
    ("dev", bash("DATABASE_URL=$PROD_URL alembic upgrade head"), ["prod-migrations"]),
    ("test", bash("python manage.py migrate --settings=prod"), ["prod-migrations"]),
    ("dev", bash("make migrate ENV=prod"), ["prod-migrations"]),
    ("dev", edit("/repo/src/api/client.gen.ts"), ["generated-client"]),
    ("test", write("src/api/client.gen.ts"), ["generated-client"]),
    ("dev", bash("npm install lodash"), ["pnpm"]),
    ("test", bash("cd web && npm install --save-dev vitest"), ["pnpm"]),
    ("dev", edit("/repo/alembic/versions/3f2a_add_invoices.py"), ["shipped-migrations"]),
    ("test", edit("alembic/versions/9c1d_backfill.py"), ["shipped-migrations"]),
    ("dev", bash("make release"), ["release-main"]),
    ("test", bash("git checkout feature/x && make release VERSION=2.0"), ["release-main"]),
    ("dev", bash("docker compose up -d postgres"), ["docker-compose"]),
    ("test", bash("docker compose run db psql"), ["docker-compose"]),
    ("dev", bash("kubectl apply -f k8s/deploy.yaml"), ["terraform"]),
    ("test", bash("terraform apply -auto-approve"), ["terraform"]),
    ("dev", edit("/repo/app/settings.py"), ["settings-py"]),
    ("test", write("/repo/app/settings.py"), ["settings-py"]),
    ("dev", bash("pytest -n auto tests/db"), ["pytest-workers"]),
    ("test", bash("uv run pytest -n auto"), ["pytest-workers"]),
    ("dev", bash("rm -rf data/"), ["rm-data"]),
    ("test", bash("rm -rf data/fixtures"), ["rm-data"]),
    # Silence: calls that touch nothing a rule names, or only brush one word of it.
    ("dev", bash("git status"), []),
    ("test", bash("git log --oneline -5"), []),
    ("dev", bash("ls -la src/api"), []),
    ("test", bash("cat app/settings.py"), []),
    ("dev", bash('git commit -m "fix the release script for prod"'), []),
    ("test", bash('grep -rn "migrate" src/'), []),
    ("dev", bash("pytest tests/unit -q"), []),
    ("test", bash("npm run build"), []),
    ("dev", edit("/repo/src/api/routes.ts"), []),
    ("test", edit("/repo/README.md"), []),
    ("dev", bash("make lint"), []),
    ("test", bash("docker ps"), []),
    ("dev", write("/repo/tests/test_settings_loader.py"), []),
    ("test", bash("git push origin feature/invoices"), []),
    ("dev", bash("python -m http.server 8000"), []),
    ("test", bash("kubectl get pods"), []),
    ("dev", bash("echo done"), []),
    # Editing the template: the reminder to run make codegen after it helps.
    ("test", edit("/repo/codegen/templates/client.ts.j2"), ["generated-client"]),
]
