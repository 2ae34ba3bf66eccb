"""What a tool call is about to touch, and which stored rules bear on it. Pure.

Before a tool runs, the host names it and its input: a shell command, or a file to
edit or write. The call's anchors are what it touches: the files it names (by their
names) and the words of the command (the program unless it only looks around, its
subcommands and long options, plain arguments), lightly stemmed as the prompt gate
stems (hooks.gate.stem). A quoted argument with spaces (a commit message, a search
pattern) is prose, not what the call touches, so its words are not anchors.

Silence is the default, and the bar is high: the agent asked for nothing, and a
hazard shown on every `git status` teaches it to skip them. A memory bears on a call
only when it is a rule (a lesson, constraint, convention or preference) and names the
call's anchors: one of the files it touches, or at least two of its words ("git" alone
is in half the lessons about git; "git" and "push" is a lesson about pushing).
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
# A file the call touches, named by a memory, is evidence enough; a word is half of it.
FILE_WEIGHT = 2
MIN_EVIDENCE = 2
# At most this many memories before one tool call.
MAX_INJECTED = 2
# Programs that only look around or move through the tree: they name no hazard, and
# every lesson about the files they read would match them.
LOOKING = frozenset(
    """cd ls ll cat less more head tail echo printf pwd grep egrep rg ag find fd wc sort
    uniq tr cut awk sed xargs true false test which type file stat du df tree diff jq yq
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
# Words per command segment read as anchors: a long argument list (many files, a
# generated command) says less the longer it is.
MAX_WORDS = 12
_WORD = re.compile(r"[^\W_]+")
_SEGMENTS = re.compile(r"\|\||&&|[|;&\n]")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)
_FILE_LIKE = re.compile(r"[/\\]|\.[A-Za-z][A-Za-z0-9]{0,7}$")


class Subject(msgspec.Struct, frozen=True):
    """What one tool call touches: file names (casefolded) and word stems, and a
    recall query made of them."""

    files: frozenset[str]
    words: frozenset[str]
    query: str
    # A command's programs, each with its subcommand when one follows it at once
    # ("npm install", "git push", "pytest"), in the order they run.
    programs: tuple[str, ...] = ()

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
    for segment in _SEGMENTS.split(command):
        try:
            tokens = shlex.split(segment, comments=True)
        except ValueError:  # an unclosed quote: read the words as they stand
            tokens = segment.split()
        program, rest = _program(tokens)
        if program is None or program in LOOKING:
            continue
        words.append(program)
        following = rest[0] if rest and rest[0].isalpha() else None
        programs.append(f"{program} {following.casefold()}" if following else program)
        for token in rest[:MAX_WORDS]:
            if any(c.isspace() for c in token):  # quoted prose
                continue
            value = token.partition("=")[2] if "=" in token else token
            if _FILE_LIKE.search(value) and not value.startswith("-"):
                files.append(PurePosixPath(value.replace("\\", "/")).name.casefold())
                value = token.partition("=")[0] if "=" in token else ""
            words += [w for w in _WORD.findall(value) if _word(w)]
    named = frozenset(f for f in files if f and f not in PLAIN_DIRS)
    stems = frozenset(stem(w.casefold()) for w in words)
    query = " ".join(dict.fromkeys([*files, *words]))
    return Subject(named, stems, query, tuple(programs))


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
    words: set[str] = set()
    for raw in paths:
        path = PurePosixPath(raw.strip().replace("\\", "/"))
        if cwd and path.is_relative_to(cwd):
            path = path.relative_to(cwd)
        if not path.name:
            continue
        files.add(path.name.casefold())
        words |= {stem(p.casefold()) for p in path.parts[:-1] if _dir_word(p)}
    if not files:
        return None
    query = " ".join([*sorted(files), *sorted(words)])
    return Subject(frozenset(files), frozenset(words), query)


def _dir_word(part: str) -> bool:
    folded = part.casefold()
    return folded.isalpha() and len(folded) >= 3 and folded not in PLAIN_DIRS


def evidence(about: Subject, record: Record) -> int:
    """How strongly a memory names what the call touches: FILE_WEIGHT per file it
    names, one per word stem it shares; 0 for a memory that is not a rule."""
    if record.kind not in RULE_KINDS:
        return 0
    text = f"{record.title}\n{record.body}\n{' '.join(record.tags)}".casefold()
    named = sum(FILE_WEIGHT for f in about.files if _names_file(text, f))
    return named + len(about.words & _stems(text))


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
