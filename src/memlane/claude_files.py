"""Claude Code's own memory files for one user and one working directory, found and
read, never written: what the browser's Claude Code view and the web view list.

Claude Code loads, at the start of a session:
- the user's memory, `~/.claude/CLAUDE.md`, and their rules, `~/.claude/rules/**/*.md`;
- the project's: in the working directory and each directory above it (up to, not
  including, the file system's root), `CLAUDE.md`, `.claude/CLAUDE.md` and
  `CLAUDE.local.md`; and the project's rules, `.claude/rules/**/*.md` in its root (the
  git root, else the working directory);
- the files those import with `@path` (relative to the importing file, `~/` for the
  home directory, or absolute), up to IMPORT_HOPS deep, never inside code;
- its auto memory, `~/.claude/projects/<project>/memory/`: the MEMORY.md index and a
  markdown file per topic. `<project>` is the project's absolute path (the git root's,
  else the working directory's) with every character but a letter or digit made `-`
  (or, as older versions made it, only each `/`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import msgspec

USER, PROJECT, AUTO = "user", "project", "auto memory"
GROUPS = (USER, PROJECT, AUTO)
# How many hops of `@path` imports Claude Code follows from a memory file.
IMPORT_HOPS = 5
# The most of one file shown: far past any memory file Claude Code would load whole.
SHOWN_BYTES = 256 * 1024
INDEX = "MEMORY.md"
PROJECT_NAMES = ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md")
# An import: `@` at the start of a line or after white space, then a path that ends at
# white space (a backslash keeps a space in it).
IMPORT = re.compile(r"(?:^|(?<=\s))@((?:[^\s\\]|\\ )+)", re.M)
FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+).+?\1", re.S)


class MemoryFile(msgspec.Struct, frozen=True):
    """One memory file: its group (USER, PROJECT or AUTO), and the file that imports
    it, when one does."""

    path: Path
    group: str
    imported_by: Path | None = None

    def label(self, home: Path) -> str:
        """The path as shown: under the home directory as `~/...`."""
        try:
            return f"~/{self.path.relative_to(home)}"
        except ValueError:
            return str(self.path)


def located(home: Path, cwd: Path) -> list[MemoryFile]:
    """Every memory file Claude Code keeps for the user at `home` working in `cwd`,
    user's first, then the project's nearest first, then auto memory; each one once,
    each import right after the file importing it."""
    claude = home / ".claude"
    loaded = [
        *(MemoryFile(p, USER) for p in _existing([claude / "CLAUDE.md", *_rules(claude)])),
        *(MemoryFile(p, PROJECT) for p in _existing(project_candidates(cwd))),
        *(MemoryFile(p, PROJECT) for p in _rules((git_root(cwd) or cwd) / ".claude")),
    ]
    seen: set[Path] = set()
    out: list[MemoryFile] = []
    for found in loaded:
        out += _with_imports(found, home, seen)
    auto = [MemoryFile(p, AUTO) for p in auto_memory(claude, cwd)]
    return out + [f for f in auto if _first_time(f.path, seen)]


def project_candidates(cwd: Path) -> list[Path]:
    """The project memory files Claude Code looks for from `cwd`, nearest first."""
    folders = [f for f in (cwd, *cwd.parents) if f != f.parent]  # the root is its own
    return [folder / name for folder in folders for name in PROJECT_NAMES]


def _rules(claude_dir: Path) -> list[Path]:
    rules = claude_dir / "rules"
    return sorted(rules.rglob("*.md")) if rules.is_dir() else []


def auto_memory(claude_dir: Path, cwd: Path) -> list[Path]:
    """The auto memory files of the project `cwd` is in: MEMORY.md, then the topic
    files by name."""
    root = git_root(cwd) or cwd
    slugs = dict.fromkeys([project_slug(root), str(root).replace("/", "-")])
    folders = [claude_dir / "projects" / slug / "memory" for slug in slugs]
    folder = next((f for f in folders if f.is_dir()), None)
    if folder is None:
        return []
    files = sorted(p for p in folder.glob("*.md") if p.is_file())
    return sorted(files, key=lambda p: p.name != INDEX)


def project_slug(path: Path) -> str:
    """The name of a project's directory under ~/.claude/projects: its absolute path
    with every character but an ASCII letter or digit made `-`."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(path))


def git_root(start: Path) -> Path | None:
    """The nearest directory from `start` up holding `.git` (a directory, or the file
    of a worktree)."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def imports(text: str) -> list[str]:
    """The paths a memory file imports, in order: each `@path` outside fenced code
    blocks and code spans."""
    prose = CODE_SPAN.sub(" ", FENCE.sub(" ", text))
    return [m.group(1).replace("\\ ", " ") for m in IMPORT.finditer(prose)]


def resolve_import(name: str, importer: Path, home: Path) -> Path:
    """Where an import points: `~/` under `home`, an absolute path as it is, anything
    else beside the importing file."""
    if name == "~" or name.startswith("~/"):
        return home / name[2:]
    path = Path(name)
    return path if path.is_absolute() else importer.parent / path


def read(path: Path) -> str:
    """The file's text (its first SHOWN_BYTES), or what kept it from being read."""
    try:
        with path.open("rb") as file:
            data = file.read(SHOWN_BYTES + 1)
    except OSError as exc:
        return f"*Cannot read {path}: {exc.strerror or exc}*"
    text = data[:SHOWN_BYTES].decode("utf-8", errors="replace")
    return text + ("\n\n*(cut: the file is longer)*" if len(data) > SHOWN_BYTES else "")


def _with_imports(found: MemoryFile, home: Path, seen: set[Path]) -> list[MemoryFile]:
    """`found` and the files it imports, depth first, each file once."""
    if not _first_time(found.path, seen):
        return []
    chain = _imported(found.path, home, IMPORT_HOPS, seen)
    return [found, *(MemoryFile(p, found.group, imported_by=by) for p, by in chain)]


def _imported(
    importer: Path, home: Path, hops: int, seen: set[Path]
) -> Iterator[tuple[Path, Path]]:
    """(file, its importer) for each file `importer` imports, within `hops`."""
    if hops == 0:
        return
    for name in imports(read(importer)):
        path = resolve_import(name, importer, home)
        if path.is_file() and _first_time(path, seen):
            yield path, importer
            yield from _imported(path, home, hops - 1, seen)


def _first_time(path: Path, seen: set[Path]) -> bool:
    """Whether `path` (as resolved: a link and its target are one file) is new to
    `seen`; it is in `seen` afterwards."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError):  # a loop of links: the path as given names it
        real = path.absolute()
    if real in seen:
        return False
    seen.add(real)
    return True


def _existing(paths: list[Path]) -> list[Path]:
    return [p for p in paths if p.is_file()]
