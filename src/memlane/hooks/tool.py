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
only when it is a rule (a lesson, constraint, convention or preference) and names the
call's anchors with enough weight (see the weights below): a file or directory the call
touches, or two of its words. A rule that qualifies its command (options the call
does not give, a setting it sets otherwise) is about another call.

Matching words cannot tell a rule's forbidden command from the one it prescribes
instead ("edit proto/ and run `make proto`"): on projects written by others the lane
is far less precise than on its gold set, so `install` registers it only when asked.
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
    for segment in _SEGMENTS.split(_HEREDOC.sub("", command)):
        try:
            tokens = shlex.split(segment, comments=True)
        except ValueError:  # an unclosed quote: read the words as they stand
            tokens = segment.split()
        program, rest = _program(tokens)
        if program in SHELLS and rest[:1] and rest[0] in SHELL_FLAGS and rest[1:2]:
            inner = _command(rest[1])  # `bash -c 'SCRIPT'`: the script is the command
            files += inner.files
            words += inner.query.split()
            programs += inner.programs
            options += inner.options
            values += inner.values
            dirs |= inner.dirs
            continue
        if program is None or _looks(program, rest):
            continue
        words.append(program)
        following = rest[0] if rest and rest[0].isalpha() else None
        programs.append(f"{program} {following.casefold()}" if following else program)
        options += [o for t in rest for o in _option_names(t)]
        values += _settings(tokens)
        for token in rest[:MAX_WORDS]:
            if any(c.isspace() for c in token):  # quoted prose
                continue
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
            words += [w for w in _WORD.findall(value) if _word(w) and w.casefold() not in REFS]
    named = frozenset(f for f in files if f and f not in PLAIN_DIRS)
    stems = frozenset(stem(w.casefold()) for w in words)
    query = " ".join(dict.fromkeys([*files, *words]))
    return Subject(
        named, stems, query, tuple(programs), frozenset(options), frozenset(values), frozenset(dirs)
    )


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
    return program in LOOKING or any(t in READING for t in plain)


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
        else:
            return base, tokens[i + 1 :]
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
    return Subject(frozenset(files), frozenset(), query, dirs=frozenset(dirs))


def evidence(about: Subject, record: Record) -> float:
    """How strongly a memory names what the call touches (see the weights above); 0
    for a memory that is not a rule, or that qualifies its command by options the call
    does not give ("never git push --force" is not about `git push`)."""
    if record.kind not in RULE_KINDS:
        return 0.0
    text = f"{record.title}\n{record.body}\n{' '.join(record.tags)}".casefold()
    if about.programs and not _options_met(text, about.options):
        return 0.0
    settings = _rule_settings(text)
    if any(_unmet(name, wanted, about.values) for name, wanted in settings.items()):
        return 0.0
    found = _stems(text)
    programs = {stem(p.split()[0]) for p in about.programs}
    weight = float(sum(FILE_WEIGHT for f in about.files if _names_file(text, f)))
    weight += FILE_WEIGHT if any(_names_dir(text, d) for d in about.dirs) else 0.0
    weight += len(about.values & {f"{n}={v}" for n, vs in settings.items() for v in vs})
    weight += len((about.words - programs) & found)
    for program in {p.split()[0] for p in about.programs}:
        if _refused(text, program):
            weight += REFUSED_WEIGHT
        elif stem(program) in found:
            weight += PROGRAM_WEIGHT
    weight += sum(PAIR_WEIGHT for p in about.programs if " " in p and _names_command(text, p))
    return weight + len(about.options & _options(text))


def _rule_settings(text: str) -> dict[str, set[str]]:
    """What a rule sets its options and variables to: name -> values (casefolded)."""
    found: dict[str, set[str]] = {}
    for long, variable, value in _SETTING.findall(text):
        if value.casefold() not in FUNCTION_WORDS:
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


def _options_met(text: str, given: frozenset[str]) -> bool:
    """Whether the options a rule names (none: any call) include one the call gives: a
    long option by its name or its first letter ("--force", "-f")."""
    named = _LONG_OPTION.findall(text)
    return not named or any(n in given or n[0] in given for n in named)


def _refused(text: str, program: str) -> bool:
    """Whether the rule names the program as what not to use ("use pnpm, not npm")."""
    pattern = rf"\b(?:not|instead of|rather than|(?:don'?t|do not|never|avoid|stop) us(?:e|ing))\s+(?:\w+\s+(?:or|and|nor)\s+)?{re.escape(program)}\b"
    return re.search(pattern, text) is not None


def _names_command(text: str, command: str) -> bool:
    """Whether the rule names the program and its subcommand together ("make release")."""
    return re.search(rf"(?<![\w-]){re.escape(command)}(?![\w-])", text) is not None


def _stems(text: str) -> frozenset[str]:
    """Every word's stem, function words too: a program may be one ("make")."""
    return frozenset(stem(w) for w in _WORD.findall(text) if len(w) >= 2)


def _names_file(text: str, name: str) -> bool:
    """The file's name as a whole word of the text ("alembic.ini", not "alembic.init")."""
    return re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-]|\.\w)", text) is not None


def bearing(about: Subject, records: Iterable[Record]) -> list[Record]:
    """The memories that bear on the call (see the module docstring), strongest first,
    at most MAX_INJECTED; among equals, in the order given (recall's)."""
    weighed = [(evidence(about, r), i, r) for i, r in enumerate(records)]
    kept = sorted((w for w in weighed if w[0] >= MIN_EVIDENCE), key=lambda w: (-w[0], w[1]))
    return [r for _, _, r in kept[:MAX_INJECTED]]
