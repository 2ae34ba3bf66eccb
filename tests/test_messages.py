"""Every message names real commands and flags: the strings in src/memlane (errors,
hints, help texts, docstrings) and the command lines in README.md and docs/ are
checked against the command tree click builds.

What counts as a mention, and what it is checked against:

    `memlane links list --json`   a command line (backticked or in prose): the path must
                                  exist, each flag must be an option of that command (or
                                  of the root group), a Choice value one of its choices
    `wake --begin`, wake --begin  the same, for a line that starts at a command's name
    --scope (bare)                an option of the commands the text belongs to: the
                                  command whose help it is, the commands the CLI module
                                  defines, else any command
    `pg_dump --file x`            another program's line: FOREIGN_PROGRAMS says whose

and importance, wherever it is written, has one range: 1 to MAX_IMPORTANCE.
"""

from __future__ import annotations

import ast
import re
import shlex
import typing
from collections.abc import Callable, Iterator
from pathlib import Path

import click
import pytest

from memlane.cli.main import cli
from memlane.model import MAX_IMPORTANCE, REINFORCE_CAP
from memlane.server.tools import Importance

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "memlane"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# Programs other than memlane whose command lines messages spell out, with why.
FOREIGN_PROGRAMS = {
    "pg_dump": "a PostgreSQL store is backed up with the server's own tools",
    "pg_restore": "and restored with them",
    "pip": "an extra is installed with it: `pip install 'memlane[tui]'`",
}
# Flags of other programs that memlane's texts name, with why.
FOREIGN_FLAGS = {
    "--token": "a secret given on another tool's command line, which the secret screen finds",
    "--no-password": "a key naming a secret on another tool's command line (the screen)",
    "--no-preserve-root": "rm's, in a harmful command the injection screen refuses",
    "--force": "git's, in a rule the PreToolUse hook weighs (`git push --force`)",
    "--target": "dbt's, a setting a rule may speak to (`--target prod`)",
    "--in-place": "sed's, which makes a sed command a write",
    "--force-with-lease": "git's, what a rule allows instead of `--force` (the PreToolUse hook)",
}

LONG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)(\{)?")
SHORT = re.compile(r"-[a-zA-Z]")
HOLE = "{}"  # an f-string's replacement field, or a str.format one
SPAN = re.compile(r"`([^`]+)`")
# Prose breaks into clauses here; a command line never runs across one.
CLAUSE = re.compile(r"[;:,()\n\"]|\.(?:\s|$)")
EDGES = "[](),.;:'\"!?"
# A string holding these is a regular expression (the screens' patterns), not a message.
REGEX_MARKS = ("\\s", "\\b", "(?:", "[^")


# ---- the command tree ----------------------------------------------------------------------


def _tree(
    group: click.Group, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        yield (*path, name), command
        if isinstance(command, click.Group):
            yield from _tree(command, (*path, name))


TREE: dict[tuple[str, ...], click.Command] = {(): cli, **dict(_tree(cli))}
HELP_OPTIONS = ("--help", "-h")


def options(command: click.Command) -> dict[str, click.Parameter]:
    """Each option name a command takes (long and short) and its parameter."""
    named = {o: p for p in command.params for o in (*p.opts, *p.secondary_opts)}
    return {o: p for o, p in named.items() if o.startswith("-")}


def flags_of(*commands: click.Command) -> frozenset[str]:
    return frozenset({*HELP_OPTIONS, *options(cli), *(o for c in commands for o in options(c))})


ALL_FLAGS = flags_of(*TREE.values())


def module_flags(module: str) -> frozenset[str] | None:
    """The flags of the commands a CLI module defines (None: it defines none)."""
    mine = [c for c in TREE.values() if getattr(c.callback, "__module__", "") == module]
    return flags_of(*mine) if mine else None


def subtree_flags(path: tuple[str, ...]) -> frozenset[str]:
    return flags_of(*(c for p, c in TREE.items() if p[: len(path)] == path))


# ---- the checker ---------------------------------------------------------------------------


def clean(word: str) -> str:
    return word.strip(EDGES)


def split(text: str) -> list[str]:
    try:
        words = shlex.split(text)
    except ValueError:  # an apostrophe or an unclosed quote: prose, not shell
        words = text.split()
    return [w for w in (clean(w) for w in words) if w]


def flag_parts(word: str) -> list[str]:
    """The option names one word holds: `-f/--file`, `[--cap`, `--format=custom`."""
    if not word.startswith("-"):
        return []
    parts = (p.split("=")[0] for p in re.split(r"[/|]", word))
    return [p for p in parts if LONG.fullmatch(p) or SHORT.fullmatch(p)]


def is_memlane(word: str) -> bool:
    """The program is memlane: `memlane`, `.venv/bin/memlane`."""
    return word == "memlane" or word.endswith("/memlane")


def placeholder(word: str) -> bool:
    """A word filled in later: `{}`, `COMMAND`, `<url>`."""
    return HOLE in word or re.fullmatch(r"[A-Z][A-Z0-9_.]*|<.*>", word) is not None


def literal(word: str) -> bool:
    """A value written out (`recent`), not a placeholder (`ID`, `{}`, `<url>`)."""
    return re.fullmatch(r"[a-z][a-z0-9_-]*", word) is not None


def choice_problems(param: click.Parameter, value: str, where: str) -> list[str]:
    if not isinstance(param.type, click.Choice):
        return []
    choices = set(param.type.choices)
    wrong = [v for v in value.split("|") if literal(v) and v not in choices]
    return [
        f"{where} {param.human_readable_name}: {v!r} is not one of {sorted(choices)}" for v in wrong
    ]


def bare_problems(text: str, allowed: frozenset[str] | None) -> list[str]:
    """Flags not tied to a command: each must be one the text's commands take."""
    known = ALL_FLAGS if allowed is None else allowed
    problems = []
    for match in LONG.finditer(text):
        flag, prefix = match.group(1), match.group(2)
        if flag in FOREIGN_FLAGS:
            continue
        found = any(k.startswith(flag) for k in known) if prefix else flag in known
        if not found:
            problems.append(f"{flag}{'{...}' if prefix else ''} is not an option here")
    return problems


def _resolve(words: list[str]) -> tuple[tuple[str, ...], int, list[str]]:
    """The command path a line names, where its options start, and what is wrong."""
    command: click.Command = cli
    path: tuple[str, ...] = ()
    i = 0
    while i < len(words) and isinstance(command, click.Group):
        word = words[i]
        if word.startswith("-") and not path and flag_parts(word):
            known = options(cli)  # a root option before the command
            if word.split("=")[0] not in (*known, *HELP_OPTIONS):
                return path, i, [f"`memlane` has no option {word}"]
            i += 1 + _value_taken(known, word)
            continue
        if word.startswith("-") or placeholder(word):
            break
        try:
            name, sub, _ = command.resolve_command(click.Context(command), [word])
        except click.UsageError:
            return path, i, [f"no command `memlane {' '.join((*path, word))}`"]
        assert name is not None and sub is not None
        path, command = (*path, name), sub
        i += name == word  # a group may route a bare argument to a default command
    return path, i, []


def _value_taken(known: dict[str, click.Parameter], word: str) -> int:
    param = known.get(word)
    takes = isinstance(param, click.Option) and not (param.is_flag or param.count)
    return int(takes and "=" not in word)


def command_line_problems(words: list[str]) -> list[str]:
    """What is wrong with `memlane WORDS...`: its path, its flags, its Choice values."""
    path, i, problems = _resolve(words)
    if problems:
        return problems
    if i < len(words) and placeholder(words[i]) and isinstance(TREE[path], click.Group):
        return bare_problems(" ".join(words[i:]), None)  # the command is filled in later
    command = TREE[path]
    known = {**options(cli), **options(command)}
    where = f"`{' '.join(('memlane', *path))}`"
    arguments = [p for p in command.params if isinstance(p, click.Argument)]
    while i < len(words):
        word, i = words[i], i + 1
        names = flag_parts(word)
        for name in names:
            if name not in known and name not in HELP_OPTIONS:
                problems.append(f"{where} has no option {name}")
        if len(names) == 1 and _value_taken(known, names[0]) and i < len(words):
            problems += choice_problems(known[names[0]], words[i], where)
            i += 1
        elif not names and arguments and not word.startswith("-"):
            problems += choice_problems(arguments[0], word, where)
            arguments = arguments[1:] if arguments[0].nargs == 1 else arguments
    return problems


def span_problems(span: str, allowed: frozenset[str] | None) -> list[str]:
    """A backticked span: a memlane line, a line of a memlane command, flags, or another
    program's line."""
    words = split(span)
    if not words or not (is_memlane(words[0]) or LONG.search(span)):
        return []
    if is_memlane(words[0]):
        return command_line_problems(words[1:])
    if (words[0],) in TREE:
        return command_line_problems(words)
    if words[0].startswith("-") or placeholder(words[0]):
        return bare_problems(span, allowed)
    if words[0] in FOREIGN_PROGRAMS or "/" in words[0]:  # a path: a script of its own
        return []
    return [f"`{span}`: {words[0]} is no memlane command"]


def clause_problems(clause: str, allowed: frozenset[str] | None) -> list[str]:
    """Prose: `memlane X ...` or `X --flag ...` (X a command) is a command line; other
    flags are bare."""
    words = clause.split()
    problems: list[str] = []
    for j, raw in enumerate(words):
        word = clean(raw)
        rest = [w for w in (clean(w) for w in words[j + 1 :]) if w]
        if is_memlane(word) and rest:
            if (rest[0],) in TREE or rest[0].startswith("-") or placeholder(rest[0]):
                return problems + command_line_problems(rest)
            if any(flag_parts(w) for w in rest):
                return [*problems, f"no command `memlane {rest[0]}`"]
        elif flag_parts(word):
            before = [clean(w) for w in words[:j]]
            if FOREIGN_PROGRAMS.keys() & before[-3:]:
                return problems  # the rest is another program's line: `pip install --user`
            start = _command_start(before)
            if start is not None:
                return problems + command_line_problems([clean(w) for w in words[start:]])
            problems += bare_problems(raw, allowed)
    return problems


def _command_start(before: list[str]) -> int | None:
    """Where the command path ending just before a flag starts, if one does."""
    for start in (len(before) - 2, len(before) - 1):
        if start >= 0 and tuple(before[start:]) in TREE:
            return start
    return None


def text_problems(text: str, allowed: frozenset[str] | None = None) -> list[str]:
    """Every wrong command or flag a user-facing text names."""
    problems: list[str] = []

    def take_span(match: re.Match[str]) -> str:
        problems.extend(span_problems(match.group(1), allowed))
        return ";"

    prose = SPAN.sub(take_span, text)
    for clause in CLAUSE.split(prose):
        problems += clause_problems(clause, allowed)
    return problems


# ---- where the texts are -------------------------------------------------------------------


def argv_lines(tree: ast.AST) -> Iterator[tuple[int, list[str], list[ast.expr]]]:
    """Command lines written as argument lists: `[*command, "recall", query, "--json"]`,
    `_run(ctx, db, "list", "--limit", "5")`."""
    for node in ast.walk(tree):
        items = (
            node.args
            if isinstance(node, ast.Call)
            else node.elts
            if isinstance(node, ast.List | ast.Tuple)
            else []
        )
        words = [
            i.value if isinstance(i, ast.Constant) and isinstance(i.value, str) else HOLE
            for i in items
        ]
        for k, word in enumerate(words):
            starts = k == 0 or words[k - 1] in (HOLE, "memlane")
            if (word,) in TREE and starts and any(flag_parts(w) for w in words[k + 1 :]):
                yield node.lineno, words[k:], items
                break


def source_texts(tree: ast.AST, skip: set[int]) -> Iterator[tuple[int, str]]:
    """Every string literal of a module (but those in `skip`), an f-string with its
    fields as HOLE."""
    inside = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    inside |= skip
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else HOLE for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in inside:
                continue
            text = node.value
        else:
            continue
        if not any(mark in text for mark in REGEX_MARKS):
            yield node.lineno, text


def code_problems(source: str, module: str) -> Iterator[tuple[int, str]]:
    """(line, problem) for each wrong command or flag a module's strings name."""
    allowed = module_flags(module) if module.startswith("memlane.cli.") else None
    tree = ast.parse(source)
    argv = list(argv_lines(tree))
    for line, words, _ in argv:
        yield from ((line, p) for p in command_line_problems(words))
    for line, text in source_texts(tree, {id(i) for _, _, items in argv for i in items}):
        yield from ((line, p) for p in text_problems(text, allowed))


def source_problems(path: Path) -> Iterator[str]:
    module = ".".join(path.relative_to(SRC.parent).with_suffix("").parts)
    for line, problem in code_problems(path.read_text(encoding="utf-8"), module):
        yield f"{path.relative_to(ROOT)}:{line}: {problem}"


def help_problems() -> Iterator[str]:
    """A command's help and its options' help name the command's own flags (a group's:
    those of its commands too)."""
    for path, command in TREE.items():
        allowed = subtree_flags(path) if isinstance(command, click.Group) else flags_of(command)
        texts = [command.help, command.epilog, command.short_help]
        texts += [p.help for p in command.params if isinstance(p, click.Option)]
        for text in filter(None, texts):
            for problem in text_problems(text, allowed):
                yield f"memlane {' '.join(path)} --help: {problem}"


FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
SHELL = {"", "sh", "bash", "console", "shell"}


def shell_lines(block: str) -> Iterator[list[str]]:
    """The memlane commands of a shell block: one per line, pipe or `&&` segment."""
    for line in block.replace("\\\n", " ").splitlines():
        for segment in re.split(r"&&|\|\||[|;]", line.split(" #")[0].removeprefix("$ ")):
            words = split(segment)
            while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
                words = words[1:]  # an environment assignment before the program
            if words and is_memlane(words[0]):
                yield words[1:]


def doc_problems(text: str) -> Iterator[str]:
    """Wrong commands and flags in Markdown: its shell blocks, code spans and prose."""
    for match in FENCE.finditer(text):
        if match.group(1) in SHELL:
            for words in shell_lines(match.group(2)):
                for problem in command_line_problems(words):
                    yield f"`memlane {' '.join(words)}`: {problem}"
    yield from text_problems(FENCE.sub("", text))


# ---- the checker can fail ------------------------------------------------------------------

WRONG = [
    ("wake needs an agent: set MEMLANE_AGENT (or pass --agent)", "--agent is not an option"),
    ("run `memlane wake --agent x`", "`memlane wake` has no option --agent"),
    ("set MEMLANE_AGENT or run memlane wake --agent x", "`memlane wake` has no option --agent"),
    ("run `wake --agent x` first", "`memlane wake` has no option --agent"),
    ("then wake --agent x", "`memlane wake` has no option --agent"),
    ("see `memlane wak --json`", "no command `memlane wak`"),
    ("see memlane wak --json", "no command `memlane wak`"),
    ("see `memlane links lst`", "no command `memlane links lst`"),
    ("`memlane --dbx x.db list`", "`memlane` has no option --dbx"),
    ("`memlane list --sort newest`", "'newest' is not one of"),
    ("`memlane export -f jsonl|yaml`", "'yaml' is not one of"),
    ("`memlane types kind`", "'kind' is not one of"),
    ("`memlane add -z x`", "`memlane add` has no option -z"),
    ("pass --agnet", "--agnet is not an option here"),
    ("`--has-{}`, `--lacks-{}`", "--lacks-{...} is not an option here"),
    ("`wak --json`", "wak is no memlane command"),
    ("`.venv/bin/memlane quickstart --kep`", "`memlane quickstart` has no option --kep"),
]
RIGHT = [
    "`memlane links list --json`",
    "memlane --db x.db recall deploy --limit 3",
    "restore --from SNAPSHOT --force (a snapshot `memlane backup` made)",
    "`memlane import FILE --capture-mode manual`",
    "`memlane export -f jsonl|csv|md -o PATH`",
    "`memlane reembed --all --profile {}`",
    "`memlane {} --json`, `memlane COMMAND --help`",
    "`--has-{}` and `--missing-{}`",
    "memlane is your memory; memlane reads schema 3",
    "back it up with `pg_dump --format=custom --file memlane.dump URL`",
    "then pip install --user memlane",
    "`.venv/bin/memlane quickstart --keep`",
]


@pytest.mark.parametrize(("text", "problem"), WRONG, ids=[t for t, _ in WRONG])
def test_the_checker_reports_a_wrong_command_flag_or_value(text: str, problem: str) -> None:
    found = text_problems(text)
    assert any(problem in p for p in found), found


@pytest.mark.parametrize("text", RIGHT)
def test_the_checker_passes_real_commands_and_other_programs(text: str) -> None:
    assert text_problems(text) == []


def test_a_bare_flag_belongs_to_the_commands_of_its_module_or_its_help() -> None:
    assert text_problems("pass --respond", module_flags("memlane.cli.capture"))
    assert not text_problems("pass --respond", module_flags("memlane.cli.wake"))
    assert module_flags("memlane.cli.common") is None  # no commands: any command's flag
    retire = flags_of(TREE[("retire",)])
    assert text_problems("it stays for --as-of reads", retire)
    assert not text_problems("it stays for reads of the past (`list --as-of`)", retire)


def test_argument_lists_and_shell_blocks_are_command_lines() -> None:
    source = '_run(ctx, db, "list", "--limit", "5")\nrun([*cmd, "recall", q, "--jsn"])\n'
    found = dict(code_problems(source, "memlane.cli.quickstart"))
    assert found == {2: "`memlane recall` has no option --jsn"}
    source = '_run(ctx, db, "lst", "--limit", "5")\n'  # no command: its flags are bare
    found = dict(code_problems(source, "memlane.cli.quickstart"))
    assert found == {1: "--limit is not an option here"}
    doc = "Run `memlane serach q`.\n\n```sh\n$ MEMLANE_AGENT=ada memlane wake --agent ada\n```\n"
    assert list(doc_problems(doc)) == [
        "`memlane wake --agent ada`: `memlane wake` has no option --agent",
        "no command `memlane serach`",
    ]


# ---- the real texts ------------------------------------------------------------------------


def test_the_tree_is_the_cli() -> None:
    assert ("links", "list") in TREE and ("import", "markdown") in TREE
    assert {"--db", "--help", "-h", "--version"} <= flags_of()
    assert {"-f", "--file", "--content-file", "-t"} <= set(options(TREE[("add",)]))


def test_source_messages_name_real_commands_and_flags() -> None:
    problems = [p for path in sorted(SRC.rglob("*.py")) for p in source_problems(path)]
    assert not problems, "\n".join(problems)


def test_help_texts_name_the_commands_own_flags() -> None:
    problems = list(help_problems())
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_docs_run_real_commands_and_flags(path: Path) -> None:
    problems = list(doc_problems(path.read_text(encoding="utf-8")))
    assert not problems, "\n".join(problems)


# ---- one importance range ------------------------------------------------------------------

USUAL = 10  # the scale the docs and prompts ask for; recall scores 10 or more alike
# After "importance" (a clause on): "1-10", "between 1 and 100", "(at most 10)", "up to 100".
IMPORTANCE = re.compile(r'importance\b"?([^.;"]{0,80})', re.IGNORECASE)
RANGE_END = re.compile(r"(?:\b1\s*(?:-|–|\.\.|to)\s*|between 1 and |at most |up to )(\d+)")


def all_texts() -> Iterator[tuple[str, str]]:
    for path in sorted(SRC.rglob("*.py")):
        for line, text in source_texts(ast.parse(path.read_text(encoding="utf-8")), set()):
            yield f"{path.relative_to(ROOT)}:{line}", text
    for path in DOCS:
        yield path.name, path.read_text(encoding="utf-8")


def importance_ranges(text: str) -> list[tuple[str, int]]:
    """Each importance bound a text states, with the words stating it."""
    return [
        (m.group(0), int(n))
        for m in IMPORTANCE.finditer(text)
        for n in RANGE_END.findall(m.group(1))
    ]


def test_the_range_checker_reads_bounds() -> None:
    assert importance_ranges("Importance 1-10 (above 10 allowed).")[0][1] == USUAL
    said = "importance must be between 1 and 50; tags at most 8"
    assert [n for _, n in importance_ranges(said)] == [50]


def test_every_importance_range_written_is_the_real_one() -> None:
    ranges = [(where, *r) for where, text in all_texts() for r in importance_ranges(text)]
    wrong = [r for r in ranges if r[2] not in (USUAL, MAX_IMPORTANCE)]
    assert len(ranges) >= 5 and not wrong, wrong
    assert REINFORCE_CAP == USUAL  # "raises importance by 1 (at most 10)" counts on it


def test_the_mcp_schema_and_every_importance_option_name_the_range() -> None:
    limits = typing.get_args(Importance)[1].metadata
    assert [getattr(m, "ge", None) or getattr(m, "le", None) for m in limits] == [1, MAX_IMPORTANCE]
    helps = {
        path: p.help
        for path, c in TREE.items()
        for p in c.params
        if "--importance" in getattr(p, "opts", ())
    }
    assert set(helps) == {("add",), ("update",), ("supersede",), ("merge",)}
    assert all(f"up to {MAX_IMPORTANCE}" in (h or "") for h in helps.values()), helps


def _writer(run: Callable[..., typing.Any], name: str) -> list[str]:
    """`memlane NAME ...` up to its --importance, for a fresh memory where it needs one."""
    if name == "add":
        return ["add", "A note on deploys."]
    memory_id = run("add", f"A note for {name}.", "--json").json()["id"]
    tail = {"update": [], "supersede": ["--content", "Newer."], "merge": ["--into", "One."]}
    return [name, memory_id, *tail[name]]


@pytest.mark.parametrize("name", ["add", "update", "supersede", "merge"])
def test_every_writer_takes_one_importance_range(run: typing.Any, name: str) -> None:
    for value in (0, MAX_IMPORTANCE + 1):
        result = run(*_writer(run, name), "--importance", str(value))
        expected = f"importance must be between 1 and {MAX_IMPORTANCE} (1-10 is the usual scale)"
        assert result.exit_code == 2 and expected in result.stderr, result.stderr
    result = run(*_writer(run, name), "--importance", str(MAX_IMPORTANCE), "--json")
    assert result.exit_code == 0, result.stderr
