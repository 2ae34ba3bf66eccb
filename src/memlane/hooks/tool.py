"""What a tool call is about to touch, and which stored rules bear on it. Pure.

Before a tool runs, the host names it and its input: a shell command, or a file to
edit or write. The call's anchors are what it touches: the files it names and their
directories (in this project), the words of the command (the program unless it only
looks around, its subcommands, options and plain arguments), lightly stemmed as the
prompt gate stems (hooks.gate.stem), and what it sets (`--target dev`,
`DBT_TARGET=prod`). A quoted argument with spaces or a here-document (a commit message,
a file's text) is what the call carries, not what it touches.

Silence is the default, and the bar is high: the agent asked for nothing, and a
hazard shown on every `git status` teaches it to skip them. A memory bears on a call
only when it is a rule (a lesson, constraint, convention or preference) whose hazard
names the call's anchors with enough weight (see the weights below): a file or
directory the call touches, or two of its words.

A rule is read for its hazard first (read_rule): what it forbids, guards or warns of,
not what it prescribes instead ("don't touch gen/ by hand: edit proto/ and run `make
proto`") or says is fine ("get/logs are fine"). A command is weighed against the
hazard's clauses about running commands, a file edit against those about changing
files. A call is about another hazard when it gives the options the rule asks for or
allows (`--force-with-lease`), lacks the options the hazard qualifies its command with
(`--force`), sets a setting otherwise (`--target dev`), or names no environment the
prohibition is confined to ("never ... against prod").

Words cannot read everything a rule means (which selection includes a model, whether
an edit's new text adds a secret): on projects written by others the lane is less
precise than on its gold set, so `install` registers it only when asked.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any

import msgspec

from memlane.hooks.gate import FUNCTION_WORDS, stem
from memlane.model import Kind, Record

# Tool names (casefolded) whose input is a shell command, and those that write a file:
# Claude Code's and Codex's, and the common names of other hosts' equivalents.
SHELL_TOOLS = frozenset({"bash", "shell", "exec_command", "local_shell", "run_shell_command"})
FILE_TOOLS = frozenset({"edit", "write", "multiedit", "notebookedit", "apply_patch"})
# `bash -lc SCRIPT`: a host running a command line through a shell.
SHELLS = frozenset({"sh", "bash", "zsh", "dash"})
SHELL_FLAGS = frozenset({"-c", "-lc", "-ic", "-lic"})
# The kinds that say what to do or not to do; a fact or an event that mentions a
# command tells the agent nothing about running it.
RULE_KINDS = frozenset({Kind.LESSON, Kind.CONSTRAINT, Kind.CONVENTION, Kind.PREFERENCE})
# A file the call touches, named by a memory, is evidence enough; a word, or an option
# the call gives, is half of it. A program is a quarter: "git" is in half the lessons
# about git; named with its subcommand ("make release") it makes up a word; named as
# what not to use ("use pnpm, not npm") it needs one more word ("install").
FILE_WEIGHT = 2
PROGRAM_WEIGHT = 0.5
PAIR_WEIGHT = 0.5
REFUSED_WEIGHT = 1.5
# A setting the call gives as a rule's hazard names it ("DBT_TARGET=prod") is its name
# and its value: two words. A command run without the option a rule asks for is one.
SETTING_WEIGHT = 2
MISSING_WEIGHT = 1
MIN_EVIDENCE = 2
# At most this many memories before one tool call.
MAX_INJECTED = 2
# Programs that only look around or move through the tree: they name no hazard, and
# every lesson about the files they read would match them.
LOOKING = frozenset(
    """cd ls ll cat less more head tail echo printf pwd grep egrep rg ag find fd wc sort
    uniq tr cut awk xargs true false test which type file stat du df tree diff jq yq
    env export set unset source alias history clear date sleep time watch""".split()
)
# Wrappers whose next word is the real program.
WRAPPERS = frozenset({"sudo", "env", "time", "nohup", "exec", "command", "nice", "timeout"})
# Runners whose next word is the real program ("uv run pytest", "npx prisma").
RUNNERS = {"uv": "run", "poetry": "run", "pipenv": "run", "pnpm": "exec", "bundle": "exec"}
LAUNCHERS = frozenset({"npx", "bunx", "pnpx"})
# Directory names every project has: they tell nothing about a file.
PLAIN_DIRS = frozenset(
    """src lib libs app apps pkg pkgs internal cmd test tests spec specs docs doc home
    users user root tmp var opt usr etc workspace workspaces repo repos project projects
    work code dev main source sources""".split()
)
# Subcommands that only look ("git diff", "docker compose ps", "kubectl get"): the
# call changes nothing a rule guards, whatever else it names.
READING = frozenset(
    """status log diff show fetch blame reflog shortlog describe ls-files rev-parse ps logs
    get describe inspect images list ls version help info top view history whoami
    outdated audit""".split()
)
# Names of branches and remotes every repository has: "main" in a command says as
# little as "the" in a prompt.
REFS = frozenset({"main", "master", "origin", "upstream", "head", "develop", "trunk"})
# Programs whose arguments name history, not files to edit ("git add invoice.py"
# stages a file; the rules about editing it are for the edit).
HISTORY = frozenset({"git", "hg", "svn", "jj"})
# Words per command segment read as anchors: a long argument list (many files, a
# generated command) says less the longer it is.
MAX_WORDS = 12
_WORD = re.compile(r"[^\W_]+")
# A compound name is one name: "tally-prod", "sync-dags", "fct_transactions".
_COMPOUND = re.compile(r"(?<![\w-])[a-z0-9]+(?:[-_][a-z0-9]+)+(?![\w-])", re.IGNORECASE)
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A rule's settings: "--target prod", "--target=prod", "DBT_TARGET=prod".
_SETTING = re.compile(r"(?<![\w-])(?:--([a-z][a-z0-9-]*)[ =]|\b([A-Z][A-Z0-9_]*)=)([\w.:/-]+)")
_LONG_OPTION = re.compile(r"(?<![\w-])--([a-z][a-z0-9-]+)")
_SHORT_OPTION = re.compile(r"(?<![\w-])-([a-z]{1,3})\b")
_SEGMENTS = re.compile(r"\|\||&&|[|;&\n]")
# A here-document's body (a commit message, a file's text) is what the command
# carries, not what it does.
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1[^\n]*\n.*?\n\s*\2\b", re.DOTALL)
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)
# A file: a name with an extension, or a path from here, above or home; a directory
# ("data/"), a branch ("fix/rounding") or "tests/db" is read for its last word.
_FILE_LIKE = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$|^(?:\.{1,2}/|/|~)")


class Subject(msgspec.Struct, frozen=True):
    """What one tool call touches: file names (casefolded) and word stems, and a
    recall query made of them."""

    files: frozenset[str]
    words: frozenset[str]
    query: str
    # A command's programs, each with its subcommand when one follows it at once
    # ("npm install", "git push", "pytest"), in the order they run.
    programs: tuple[str, ...] = ()
    # The options a command gives: long names ("force") and short letters ("f").
    options: frozenset[str] = frozenset()
    # What a long option or a variable is set to: "target=dev", "dbt_target=prod".
    values: frozenset[str] = frozenset()
    # The directories of the files it touches, as paths ("models/staging/stripe",
    # "staging/stripe", "stripe"), casefolded.
    dirs: frozenset[str] = frozenset()
    # A shell command (weighed against a rule's clauses about running commands), not a
    # file tool (against those about changing files).
    command: bool = False
    # A command's arguments, options and assignments as written, casefolded.
    tokens: frozenset[str] = frozenset()
    # The environments the call names anywhere ("-n tally-prod", "RAILS_ENV=production",
    # "values-prod.yaml"), as ENVIRONMENTS' values.
    environments: frozenset[str] = frozenset()

    @property
    def empty(self) -> bool:
        return not self.files and not self.words


def subject(tool: str, tool_input: Mapping[str, Any], cwd: str | None = None) -> Subject | None:
    """The anchors of a call (see the module docstring); None for a tool that neither
    runs a command nor writes a file (reads, searches, web fetches)."""
    name = tool.casefold()
    if name in SHELL_TOOLS:
        command = tool_input.get("command")
        if isinstance(command, list):
            command = _script(command)
        return _command(command) if isinstance(command, str) else None
    if name in FILE_TOOLS:
        return _files(_paths(tool_input), cwd)
    return None


def _script(argv: list[Any]) -> str:
    """An argv list as one command line: the script of `bash -lc SCRIPT`, else the
    arguments joined as a shell would read them."""
    parts = [str(part) for part in argv]
    if len(parts) == 3 and PurePosixPath(parts[0]).name in SHELLS and parts[1] in SHELL_FLAGS:
        return parts[2]
    return shlex.join(parts)


def _command(command: str) -> Subject:
    files: list[str] = []
    words: list[str] = []  # the programs, then the other words
    programs: list[str] = []
    options: list[str] = []
    values: list[str] = []
    dirs: set[str] = set()
    whole: set[str] = set()
    for segment in _SEGMENTS.split(_HEREDOC.sub("", command)):
        try:
            tokens = shlex.split(segment, comments=True)
        except ValueError:  # an unclosed quote: read the words as they stand
            tokens = segment.split()
        for target in _redirected(tokens):  # "echo x >> seeds/codes.csv" writes the file
            path = PurePosixPath(target)
            files.append(path.name.casefold())
            dirs |= _dirs_of(path)
        program, rest = _program(tokens)
        if program in SHELLS and rest[:1] and rest[0] in SHELL_FLAGS and rest[1:2]:
            inner = _command(rest[1])  # `bash -c 'SCRIPT'`: the script is the command
            files += inner.files
            words += inner.query.split()
            programs += inner.programs
            options += inner.options
            values += inner.values
            dirs |= inner.dirs
            whole |= inner.tokens
            continue
        if program is None or _looks(program, rest):
            continue
        whole |= {t.casefold() for t in tokens if not any(c.isspace() for c in t)}
        words.append(program)
        subcommand = rest[0] if rest and not rest[0].startswith("-") else ""
        following = subcommand if subcommand.replace("-", "").isalpha() else None
        programs.append(f"{program} {following.casefold()}" if following else program)
        options += [o for t in rest for o in _option_names(t)]
        values += _settings(tokens)
        if following and "-" in following:  # "sync-dags-dev" is not "sync-dags"
            words.append(following)
            rest = rest[1:]
        for token in rest[:MAX_WORDS]:
            if any(c.isspace() for c in token) or token.startswith((">", "<")):
                continue  # quoted prose, a redirection
            value = token.partition("=")[2] if "=" in token else token
            if "/" in value and not _FILE_LIKE.search(value):
                # "tests/unit", "fix/rounding": its last part, unless it names history.
                last = PurePosixPath(value).name
                value = "" if program in HISTORY or last.casefold() in PLAIN_DIRS else last
            elif _FILE_LIKE.search(value) and not value.startswith("-"):
                if program not in HISTORY:
                    path = PurePosixPath(value.replace("\\", "/"))
                    files.append(path.name.casefold())
                    dirs |= _dirs_of(path)
                value = token.partition("=")[0] if "=" in token else ""
            if _COMPOUND.fullmatch(value):
                words.append(value)
                continue
            words += [w for w in _WORD.findall(value) if _word(w) and w.casefold() not in REFS]
    named = frozenset(f for f in files if f and f not in PLAIN_DIRS)
    stems = frozenset(w.casefold() if _COMPOUND.fullmatch(w) else stem(w.casefold()) for w in words)
    query = " ".join(dict.fromkeys([*files, *words]))
    return Subject(
        named,
        stems,
        query,
        tuple(programs),
        frozenset(options),
        frozenset(values),
        frozenset(dirs),
        command=True,
        tokens=frozenset(whole),
        environments=_environments(" ".join([*whole, *files, *dirs])),
    )


def _environments(text: str) -> frozenset[str]:
    """The environments a text names (see ENVIRONMENTS)."""
    return frozenset(ENVIRONMENTS[p] for p in _PARTS.findall(text.casefold()) if p in ENVIRONMENTS)


def _confined(text: str) -> frozenset[str]:
    """The environments a hazard is confined to (see _CONFINED)."""
    return frozenset(e for target in _CONFINED.findall(text) for e in _environments(target))


def _redirected(tokens: list[str]) -> list[str]:
    """The files a segment's output is written to ("> out.txt", ">>log"), but devices."""
    found = []
    for i, token in enumerate(tokens):
        target = ""
        if token in (">", ">>", "1>", "2>", "&>") and i + 1 < len(tokens):
            target = tokens[i + 1]
        elif token.lstrip("12&").startswith(">"):
            target = token.lstrip("12&").lstrip(">")
        if target and not target.startswith(("&", "/dev/")):
            found.append(target.replace("\\", "/"))
    return found


def _settings(tokens: list[str]) -> list[str]:
    """What a command sets: "--target dev" and "--target=dev" as "target=dev", and a
    variable ("DBT_TARGET=prod") as "dbt_target=prod"; casefolded."""
    found = []
    for i, token in enumerate(tokens):
        name, eq, value = token.partition("=")
        if token.startswith("--") and eq:
            found.append(f"{name[2:]}={value}")
        elif token.startswith("--") and i + 1 < len(tokens) and not tokens[i + 1].startswith("-"):
            found.append(f"{token[2:]}={tokens[i + 1]}")
        elif eq and _VARIABLE.fullmatch(name):
            found.append(f"{name}={value}")
    return [f.casefold() for f in found]


def _dirs_of(path: PurePosixPath) -> set[str]:
    """The directories a file sits in, as the paths a rule may name them by: every run
    of its parent path's parts ("models/staging", "staging/stripe"); a lone directory
    only when it says something ("migrations", not "src")."""
    parts = [p.casefold() for p in path.parts[:-1] if p not in ("/", ".", "..", "~")]
    runs = {"/".join(parts[i:j]) for i in range(len(parts)) for j in range(i + 1, len(parts) + 1)}
    return {r for r in runs if "/" in r or (len(r) >= 3 and r not in PLAIN_DIRS)}


def _option_names(token: str) -> list[str]:
    """An option's names: "--force" -> ["force"], "-rf" -> ["r", "f"]; else none."""
    if token.startswith("--") and len(token) > 2:
        return [token[2:].partition("=")[0].casefold()]
    if token.startswith("-") and len(token) > 1 and token[1:].isalpha():
        return list(token[1:])
    return []


def _looks(program: str, rest: list[str]) -> bool:
    """A segment that only looks around: a looking program (sed unless it edits in
    place), or a subcommand that reads among the first two words after the program."""
    if program == "sed":
        return not any(t.startswith("-i") or t == "--in-place" for t in rest)
    plain = [t.casefold() for t in rest if not t.startswith("-")][:2]
    # "list-runs", "describe-instances", "get-secret-value" read as their first word.
    return program in LOOKING or any(t.split("-")[0] in READING for t in plain)


def _program(tokens: list[str]) -> tuple[str | None, list[str]]:
    """The real program of a command segment (past assignments, wrappers and their
    flags, runners), casefolded without its directory, and the tokens after it."""
    i = 0
    while i < len(tokens):
        token = tokens[i]
        base = PurePosixPath(token).name.casefold()
        if token.startswith("-") or "=" in token or token.isdigit():
            i += 1  # an assignment, or a wrapper's flag or argument ("sudo -E", "timeout 60")
        elif base in WRAPPERS or base in LAUNCHERS:
            i += 1
        elif tokens[i + 1 : i + 2] == [
            RUNNERS.get(base, "-m" if base.startswith("python") else "")
        ]:
            i += 2  # "uv run pytest", "python -m pytest"
        else:  # "pip3", "python3.12": the program's name without its version
            return base.rstrip("0123456789.") or base, tokens[i + 1 :]
    return None, []


def _word(word: str) -> bool:
    folded = word.casefold()
    return len(folded) >= 2 and not folded.isdigit() and folded not in FUNCTION_WORDS


def _paths(tool_input: Mapping[str, Any]) -> list[str]:
    for key in ("file_path", "notebook_path", "path"):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return [value]
    patch = tool_input.get("input") or tool_input.get("patch")
    return _PATCH_FILE.findall(patch) if isinstance(patch, str) else []


def _files(paths: Iterable[str], cwd: str | None) -> Subject | None:
    files: set[str] = set()
    dirs: set[str] = set()
    for raw in paths:
        path = PurePosixPath(raw.strip().replace("\\", "/"))
        if cwd and path.is_absolute():
            if not path.is_relative_to(cwd):
                continue  # another project's file: this store's rules are not about it
            path = path.relative_to(cwd)
        if not path.name:
            continue
        files.add(path.name.casefold())
        dirs |= _dirs_of(path)
    if not files:
        return None
    # The recall that finds the rules is asked the names, and the lone directories.
    query = " ".join([*sorted(files), *sorted(d for d in dirs if "/" not in d)])
    named = " ".join([*files, *dirs])
    return Subject(
        frozenset(files),
        frozenset(),
        query,
        dirs=frozenset(dirs),
        environments=_environments(named),
    )


# ---- what a rule says ------------------------------------------------------------------

# A rule says what to avoid (its hazard) and often what to do instead ("don't touch
# gen/ by hand: edit proto/ and run `make proto`"). Only the hazard bears on a call:
# running the prescribed command, or editing the template a generated file is made
# from, is doing as the rule says. A rule is read clause by clause (sentences,
# semicolons, colons, dashes). A clause that negates, restricts or guards is a hazard;
# one that tells what to do, with nothing negated, is a prescription; a clause that
# does neither (a reason, an incident) is a hazard, unless it follows a colon or an
# "e.g.", where it continues the clause before it.
_CLAUSE_END = re.compile(
    r"(?<=[.!?])\s+(?=\S)|;\s+|:\s+|\s+[—–]\s+|\n+"
    r"|,\s+(?=(?:never|don'?t|do not|but|use|run|change|edit|write|regenerate|rerun)\b)",
    re.IGNORECASE,
)
_CONTINUES = re.compile(r"(?:\b(?:e\.g|i\.e|for example|such as)[.,]?|:)\s*$")
_NEGATED = re.compile(
    r"\b(?:never|not|no|nor|don'?t|dont|doesn'?t|avoid|stop|must|mustn'?t|cannot|can'?t"
    r"|shouldn'?t|won'?t|without|nobody|nothing)\b|n't\b"
    # "only from main", "only through CI", "Only CI deploys": a restriction of when or
    # by whom; "with uv only" and "fix only the files you changed" say what to use.
    r"|\bonly\s+(?:from|through|via|in|on|by|when|if|after|before|as|with|against)\b|^\W*only\b"
)
# Files that are guarded: made by a tool, frozen, owned by others, needing a review.
_GUARDED = re.compile(
    r"\b(?:generated|autogenerated|auto-generated|frozen|append-only|load-bearing|output"
    r"|owned|read-only|readonly|vendored|protected|locked)\b"
    r"|\b(?:needs?|requires?)\b.*\b(?:review|reviewer|sign-off|signoff|approval|ticket)\b"
)
# What a generated or owned file is made from, or by whom, is not the guarded file.
_SOURCE = re.compile(r"\b(generated|output|owned)\s+(?:by|from|with)\b.*$")
# "A is generated by X and B is generated from A": two statements, each with its source.
_STATEMENTS = re.compile(r"\s+and\s+(?=[^,;]*\b(?:is|are)\b)")
_PRESCRIBING = frozenset(
    """use run edit change write bump add fix let build call put pass mark reference
    regenerate regen rerun ask open check keep prefer go manage create update do try
    start restart set ping wait follow send ship stick always prefix append record
    rerecord scale flag raise revert rebase squash pin tag lint format review drop
    split""".split()
)
# The verbs of a hazard about changing files, and about running commands. A hazard
# clause with neither is about both.
_EDITING = re.compile(
    r"\b(?:edit\w*|hand-\w+|touch\w*|chang(?:e|es|ed|ing)|modif\w+|writ(?:e|es|ing|ten)"
    r"|wrote|renam\w+|renumber\w*|reorder\w*|overwrit\w+|rewrit\w+)\b"
)
_RUNNING = re.compile(
    r"(?<![\w./-])(?:run|runs|ran|running|execut(?:e|es|ed|ing)|deploy(?:s|ed|ing)?"
    r"|sync(?:s|ed|ing)?|rsync|push(?:es|ed|ing)?|appl(?:y|ies|ied|ying)"
    r"|install(?:s|ed|ing)?|point(?:s|ed|ing)?|scal(?:e|es|ed|ing)|invok(?:e|es|ed|ing)"
    r"|trigger(?:s|ed|ing)?|launch(?:es|ed|ing)?|upgrad(?:e|es|ed|ing)|rollback"
    r"|uninstall(?:s|ed|ing)?|connect(?:s|ed|ing)?)(?![\w/-]|\.\w)|`"
)
# The options a rule asks for ("always pass --reset-dagruns", "unless --dry-run is
# given"): a call that gives them is doing as it says.
_UNLESS_OPTION = re.compile(
    r"\bunless\s+(?:you\s+)?(?:pass\w*\s+|us\w+\s+|add\w*\s+)?--([a-z][a-z0-9-]+)"
)
# "get/logs are fine", "tally-staging is fair game", "locally, go nuts".
_PERMITTING = re.compile(
    r"\b(?:fine|ok|okay|allowed|fair game|go nuts|all you want|do whatever|no problem"
    r"|free to|instead)\b"
)
# A token that names one thing: a long option, a path, a task, a hyphenated or dotted
# name ("--force-with-lease", "db:migrate:status", "tally-staging").
_TOKEN = re.compile(r"[\w./:@=-]+")
_JOINERS = frozenset("-:./=_")
# The environments a hazard is confined to ("against prod", "on the prod redis", "in
# staging"): a call that names none of them is about another.
ENVIRONMENTS = {
    "prod": "prod",
    "production": "prod",
    "prd": "prod",
    "live": "prod",
    "staging": "staging",
    "stage": "staging",
    "stg": "staging",
    "preprod": "preprod",
    "uat": "uat",
}
_CONFINED = re.compile(r"\b(?:against|in|on)\s+(?:the\s+|a\s+)?([\w-]+)")
_PARTS = re.compile(r"[a-z0-9]+")
_ASKING = re.compile(r"^\W*(?:always|pass|add|make sure|remember)\b")
# "make release only from main", "built only by the DAG": what follows names the way
# the rule allows, not its hazard.
_ALLOWED = re.compile(
    r"\bonly\s+(?:from|through|via|in|on|by|when|if|after|before|as|with|against)\b[^,]*"
)
# An address in a rule ("gs://bucket-airflow-prod") is one name, not its words.
_ADDRESS = re.compile(r"\S+://\S*")
# An option a hazard names as missing ("no --select at all") is not one a call must give.
_WITHOUT_OPTION = re.compile(r"\b(?:no|without)\s+--([a-z][a-z0-9-]+)")


class Reading(msgspec.Struct, frozen=True):
    """A rule read for its hazard: the clauses about changing files (`edits`) and about
    running commands (`runs`: all but those guarding files), the long options it asks a
    call to give, and what it allows."""

    edits: str
    runs: str
    required: frozenset[str]
    # What the rule prescribes or allows and its hazard does not name, as whole tokens
    # ("--force-with-lease", "tally-staging", "db:migrate:status").
    allowed: frozenset[str] = frozenset()
    # The environments its prohibitions are confined to ("never X against prod").
    confined: frozenset[str] = frozenset()


def read_rule(text: str) -> Reading:
    """A rule's hazard clauses (as written) and the options it asks for (casefolded)."""
    edits: list[str] = []
    runs: list[str] = []
    required: set[str] = set(_UNLESS_OPTION.findall(text.casefold()))
    allowed: set[str] = set()
    hazards: set[str] = set()
    confined: set[str] = set()
    was: tuple[bool, bool] | None = None  # the kind of the hazard clause this one continues
    text = text.replace("…", "")
    hazard = True
    continues = False
    start = 0
    ends = [*_CLAUSE_END.finditer(text), None]
    for end in ends:
        clause = text[start : end.start() if end else len(text)].strip()
        after = text[start : end.end()] if end else ""
        start = end.end() if end else len(text)
        if not clause:
            continue
        folded = clause.casefold()
        negated = _NEGATED.search(folded) is not None
        guarded = _GUARDED.search(folded) is not None
        if not negated and _PERMITTING.search(folded):
            hazard = guarded = False  # "read-only stuff like db:migrate:status is fine"
        elif negated or guarded:
            hazard = True
            confined |= _confined(folded)
        elif _prescribes(folded):
            hazard = False
        elif not continues:
            hazard = True
        was = was if continues else None
        continues = _CONTINUES.search(after) is not None
        if not hazard:
            if _ASKING.search(folded):
                required |= set(_LONG_OPTION.findall(folded))
            allowed |= _names(folded)
            continue
        if guarded:
            clause = " and ".join(_SOURCE.sub(r"\1", c) for c in _STATEMENTS.split(clause))
        clause = _ALLOWED.sub("only", clause)
        hazards |= _names(clause.casefold())
        editing = guarded or _EDITING.search(folded) is not None
        running = _RUNNING.search(folded) is not None
        if was and not editing and not running:  # "...by hand: a half-synced dags/ breaks"
            editing, running = was
        was = (editing, running) if continues else None
        if editing or not running:
            edits.append(clause)
        if not guarded:
            runs.append(clause)
    return Reading(
        "\n".join(edits),
        "\n".join(runs),
        frozenset(required),
        frozenset(allowed - hazards),
        frozenset(confined),
    )


def _names(text: str) -> set[str]:
    """The tokens of a text that name one thing (see _TOKEN), but short options."""
    found = set()
    for token in _TOKEN.findall(text):
        token = token.rstrip(".:,=/-")
        if token.startswith("--") or (len(token) >= 4 and _JOINERS & set(token.lstrip("-"))):
            found.add(token)
    return found


def _prescribes(clause: str) -> bool:
    """Whether a clause with nothing negated tells what to do: a prescribing verb among
    its first words ("use pnpm", "for history fixes use a backfill")."""
    return any(w in _PRESCRIBING for w in _WORD.findall(clause)[:5])


def evidence(about: Subject, record: Record) -> float:
    """How strongly a rule's hazard names what the call touches (see the weights
    above); 0 for a memory that is not a rule, a call the rule prescribes (it gives the
    options the rule asks for), or one the hazard qualifies away (options the call does
    not give, a setting it sets otherwise: "never git push --force" is not about `git
    push`). A command is weighed against the hazard's clauses about running commands,
    a file tool against those about changing files."""
    if record.kind not in RULE_KINDS:
        return 0.0
    title = record.title.rstrip("…. ")
    rule = read_rule(record.body if title in record.body else f"{title}\n{record.body}")
    tags = " ".join(record.tags)
    if not about.command:
        text = f"{rule.edits}\n{tags}".casefold()
        if not _within(about, rule):
            return 0.0
        weight = float(sum(FILE_WEIGHT for f in about.files if _names_file(text, f)))
        return weight + (FILE_WEIGHT if any(_names_dir(text, d) for d in about.dirs) else 0.0)
    settings = _rule_settings(rule.runs)
    text = f"{rule.runs}\n{tags}".casefold()
    if not _within(about, rule):
        return 0.0
    if any(_unmet(name, wanted, about.values) for name, wanted in settings.items()):
        return 0.0
    asked = {*_WITHOUT_OPTION.findall(text), *settings, *rule.required}
    if about.programs and not _options_met(text, about.options, asked):
        return 0.0
    if rule.required and all(_given(o, about.options) for o in rule.required):
        return 0.0
    if about.tokens & rule.allowed:  # doing what the rule prescribes or allows
        return 0.0
    found = _stems(_ADDRESS.sub(" ", text))
    programs = {p.split()[0] for p in about.programs}
    # The files a command names bear on a rule about running it; otherwise the command
    # changes them ("sed -i", "> file"), and only a rule about changing them bears.
    edits = rule.edits.casefold()
    hazard = f"{edits}\n{text}" if any(stem(p) in found for p in programs) else edits
    weight = float(sum(FILE_WEIGHT for f in about.files if _names_file(hazard, f)))
    weight += FILE_WEIGHT if any(_names_dir(hazard, d) for d in about.dirs) else 0.0
    matched = about.values & {f"{n}={v}" for n, vs in settings.items() for v in vs}
    weight += SETTING_WEIGHT * len(matched)
    weight += len((about.words - {stem(p) for p in programs}) & found)
    for program in programs:
        if _refused(text, program):
            weight += REFUSED_WEIGHT
        elif stem(program) in found:
            weight += PROGRAM_WEIGHT
            weight += MISSING_WEIGHT if rule.required else 0.0
    for pair in (p for p in about.programs if " " in p and _names_command(text, p)):
        # "bundle update": the subcommand counts as a word, whatever the word.
        weight += PAIR_WEIGHT + (stem(pair.split()[1]) not in about.words)
    named = {m.partition("=")[0] for m in matched}
    return weight + len((about.options - named) & _options(text))


def _within(about: Subject, rule: Reading) -> bool:
    """Whether the call names an environment the rule's prohibitions are confined to,
    if they are."""
    return not rule.confined or bool(rule.confined & about.environments)


def _given(option: str, given: frozenset[str]) -> bool:
    """Whether a call gives a long option, by its name or its first letter."""
    return option in given or option[0] in given


def _rule_settings(text: str) -> dict[str, set[str]]:
    """What a rule sets its options and variables to: name -> values (casefolded)."""
    found: dict[str, set[str]] = {}
    for long, variable, value in _SETTING.findall(text):
        if variable or value.casefold() not in FUNCTION_WORDS:  # "--target the ..."
            found.setdefault((long or variable).casefold(), set()).add(value.casefold())
    return found


def _unmet(name: str, wanted: set[str], given: frozenset[str]) -> bool:
    """Whether the call sets `name` to a value other than those the rule speaks of
    ("--target dev" against a rule on "--target prod")."""
    values = {g.partition("=")[2] for g in given if g.partition("=")[0] == name}
    return bool(values) and not values & wanted


def _names_dir(text: str, path: str) -> bool:
    """Whether the rule names the directory itself, not a file in it: "migrations/" or,
    for a path of several parts, "alembic/versions" with or without its slash."""
    tail = r"/(?![\w.-])" if "/" not in path else r"/?(?![\w./-])"
    return re.search(rf"(?<![\w./-]){re.escape(path)}{tail}", text) is not None


def _options(text: str) -> set[str]:
    """The options a rule names: long names and short letters ("-n", "-rf")."""
    short = {c for group in _SHORT_OPTION.findall(text) for c in group}
    return set(_LONG_OPTION.findall(text)) | short


def _options_met(text: str, given: frozenset[str], aside: set[str]) -> bool:
    """Whether the options a hazard names (none: any call), but those set aside
    (settings, options it asks for or names as missing), include one the call gives: a
    long one by its name or first letter, a short one by its letter."""
    named = [n for n in _LONG_OPTION.findall(text) if n not in aside]
    short = {c for group in _SHORT_OPTION.findall(text) for c in group}
    return not (named or short) or any(_given(n, given) for n in named) or bool(short & given)


def _refused(text: str, program: str) -> bool:
    """Whether the rule names the program as what not to use ("use pnpm, not npm")."""
    pattern = rf"\b(?:not|instead of|rather than|(?:don'?t|do not|never|avoid|stop) us(?:e|ing))\s+(?:\w+\s+(?:or|and|nor)\s+)?{re.escape(program)}\b"
    return re.search(pattern, text) is not None


def _names_command(text: str, command: str) -> bool:
    """Whether the rule names the program and its subcommand together ("make release")."""
    return re.search(rf"(?<![\w-]){re.escape(command)}(?![\w-])", text) is not None


def _stems(text: str) -> frozenset[str]:
    """Every word's stem, function words too (a program may be one: "make"), and every
    compound name whole ("sync-dags")."""
    words = {stem(w) for w in _WORD.findall(text) if len(w) >= 2}
    return frozenset(words | set(_COMPOUND.findall(text)))


def _names_file(text: str, name: str) -> bool:
    """The file's name as a whole word of the text ("alembic.ini", not "alembic.init")."""
    return re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-]|\.\w)", text) is not None


def bearing(about: Subject, records: Iterable[Record]) -> list[Record]:
    """The memories that bear on the call (see the module docstring), strongest first,
    at most MAX_INJECTED; among equals, in the order given (recall's)."""
    weighed = [(evidence(about, r), i, r) for i, r in enumerate(records)]
    kept = sorted((w for w in weighed if w[0] >= MIN_EVIDENCE), key=lambda w: (-w[0], w[1]))
    return [r for _, _, r in kept[:MAX_INJECTED]]
