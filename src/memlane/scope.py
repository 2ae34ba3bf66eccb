"""Scopes (`global`, `project:NAME`, `project:NAME@BRANCH`) and the working context.

The context is detected from the working directory: the git root's name (or the
directory's own name) is the project, the checked-out branch is the branch. A
project alias map keeps a renamed directory under its old project name.
"""

from __future__ import annotations

import difflib
import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from pathlib import Path

import msgspec

from memlane.errors import Invalid

GLOBAL = "global"
ALL = "all"
# A project name: letters and digits of any script (NFC), then also . _ -; on ASCII
# exactly [A-Za-z0-9][A-Za-z0-9._-]*, so names derived before stay the same.
_NAME = r"[^\W_][\w.-]*"
_BRANCH = r"[A-Za-z0-9][A-Za-z0-9._/+-]*"
_SCOPE = re.compile(rf"^project:(?P<project>{_NAME})(?:@(?P<branch>{_BRANCH}))?$")
# Misspellings of `global` that would strand a memory where no default read looks.
_GLOBAL_NEAR_MISSES = ("user:global", "users:global", "userglobal", "globals", "*")


class Context(msgspec.Struct, frozen=True):
    """Where the caller stands: project and branch, when known."""

    project: str | None = None
    branch: str | None = None

    @property
    def default_scope(self) -> str:
        """Most specific scope available: branch, then project, then global."""
        if self.project and self.branch:
            return f"project:{self.project}@{self.branch}"
        if self.project:
            return f"project:{self.project}"
        return GLOBAL

    @property
    def chain(self) -> tuple[str, ...]:
        """Scopes a default read covers: this branch, this project, global."""
        scopes = [GLOBAL]
        if self.project:
            scopes.insert(0, f"project:{self.project}")
            if self.branch:
                scopes.insert(0, f"project:{self.project}@{self.branch}")
        return tuple(scopes)


def parse_scope(text: str) -> str:
    """Validate a scope; near-misses of `global` are refused naming the canonical form."""
    if not isinstance(text, str):
        raise Invalid(f"scope must be a string, not {type(text).__name__}")
    value = unicodedata.normalize("NFC", text.strip())
    if value == GLOBAL or _SCOPE.match(value):
        return value
    lowered = value.lower()
    if lowered in _GLOBAL_NEAR_MISSES or difflib.get_close_matches(lowered, [GLOBAL], cutoff=0.7):
        raise Invalid(f"invalid scope {text!r}: did you mean 'global'?")
    if lowered.startswith("project") and not lowered.startswith("project:"):
        raise Invalid(f"invalid scope {text!r}: write project:NAME or project:NAME@BRANCH")
    raise Invalid(
        f"invalid scope {text!r}: use global, project:NAME or project:NAME@BRANCH "
        "(names: letters, digits, . _ -)"
    )


def scope_project(scope: str) -> tuple[str | None, str | None]:
    match = _SCOPE.match(scope)
    if not match:
        return None, None
    return match["project"], match["branch"]


def _find_git(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _git_dir(root: Path) -> Path:
    marker = root / ".git"
    if marker.is_file():  # a worktree or submodule: ".git" names the real directory
        text = marker.read_text(encoding="utf-8", errors="replace").strip()
        if text.startswith("gitdir:"):
            return (root / text.removeprefix("gitdir:").strip()).resolve()
    return marker


def _branch(root: Path) -> str | None:
    try:
        head = (_git_dir(root) / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if head.startswith("ref: refs/heads/"):
        return head.removeprefix("ref: refs/heads/")
    return None  # detached HEAD: no branch


def _safe_name(name: str) -> str | None:
    """A directory's name as a project name: NFC, each run of other characters a `-`."""
    cleaned = re.sub(r"[^\w.-]+", "-", unicodedata.normalize("NFC", name)).strip("-._")
    return cleaned or None


def load_aliases(path: Path | None) -> dict[str, str]:
    if path is None or not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise Invalid(f"project alias map {path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise Invalid(f"project alias map {path} must be a JSON object of name -> project")
    return {str(k): str(v) for k, v in data.items()}


def detect_context(cwd: Path, aliases: dict[str, str] | None = None) -> Context:
    """Project from the git root (or `cwd`) name, mapped through aliases; branch from HEAD."""
    root = _find_git(cwd.resolve())
    name = _safe_name((root or cwd.resolve()).name)
    if name is None:
        return Context()
    project = (aliases or {}).get(name, name)
    branch = _branch(root) if root else None
    if branch is not None and not re.fullmatch(_BRANCH, branch):
        branch = None
    return Context(project=project, branch=branch)


def save_alias(path: Path, directory_name: str, project: str) -> dict[str, str]:
    """Add `directory_name -> project` to the alias map file; returns the whole map.
    A self-alias, or one that would close a cycle of aliases, is refused unwritten."""
    directory_name, project = (unicodedata.normalize("NFC", n) for n in (directory_name, project))
    for name in (directory_name, project):
        if not re.fullmatch(_NAME, name):
            raise Invalid(f"invalid project name {name!r}: letters, digits, . _ -")
    if directory_name == project:
        raise Invalid(f"cannot alias {directory_name!r} to itself")
    aliases = load_aliases(path)
    aliases[directory_name] = project
    if (cycle := _cycle(_alias_chain(directory_name, aliases))) is not None:
        raise Invalid(f"alias {directory_name} -> {project} would make a cycle: {cycle}")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(aliases, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)
    return aliases


def project_scope(scope: str) -> bool:
    """Whether `scope` is a whole project's (project:NAME, no branch)."""
    project, branch = scope_project(scope)
    return project is not None and branch is None


def with_branches(scope: str, known: Iterable[str]) -> tuple[str, ...]:
    """`scope` and, for a whole project's scope, every branch scope of it among `known`:
    what narrowing to a project reads."""
    if not project_scope(scope):
        return (scope,)
    return (scope, *sorted(s for s in set(known) if s.startswith(f"{scope}@")))


def rekeyed(scope: str, old: str, new: str) -> str | None:
    """Where a memory of `scope` goes when scope `old` is rekeyed to `new`: `new` for
    `old` itself; when both name whole projects, a branch of `old` goes to the same
    branch of `new`; None for a scope the rekey leaves alone."""
    if scope == old:
        return new
    if project_scope(old) and project_scope(new) and scope.startswith(f"{old}@"):
        return f"{new}@{scope.removeprefix(old + '@')}"
    return None


def _alias_chain(name: str, aliases: Mapping[str, str]) -> list[str]:
    """The names an alias chain from `name` passes, `name` first; when the chain comes
    back to a name it passed, that name ends it a second time (a cycle). A name aliased
    to itself ends a chain."""
    chain = [name]
    while (target := aliases.get(name)) is not None and target != name:
        if not re.fullmatch(_NAME, target):
            raise Invalid(f"project alias map names an invalid project {target!r}")
        chain.append(target)
        if chain.index(target) < len(chain) - 1:
            return chain
        name = target
    return chain


def _cycle(chain: list[str]) -> str | None:
    """The cycle an alias chain ends in, as `a -> b -> a`; None for a chain that ends."""
    first = chain.index(chain[-1])
    return " -> ".join(chain[first:]) if first < len(chain) - 1 else None


def canonical_project(name: str, aliases: Mapping[str, str]) -> str:
    """The project `name` stands for under the alias map, following chains of aliases
    (a -> b -> c gives c). Invalid naming the cycle when a chain loops: no name in a
    cycle is canonical, and folding by it would swap projects on every run."""
    chain = _alias_chain(name, aliases)
    if (cycle := _cycle(chain)) is not None:
        raise Invalid(f"project alias map has a cycle: {cycle} (remove one of these aliases)")
    return chain[-1]


def canonical_scope(scope: str, aliases: Mapping[str, str]) -> str:
    """`scope` with its project (and any branch) under the project's canonical name."""
    project, branch = scope_project(scope)
    if project is None:
        return scope
    canonical = canonical_project(project, aliases)
    return f"project:{canonical}" + (f"@{branch}" if branch else "")
