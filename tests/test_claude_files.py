"""Claude Code's own memory files: where they are found for a user and a working
directory (CLAUDE.md files up the tree, rules, `@path` imports, auto memory), the
browser's read-only view of them, driven headless, and the web view's."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient
from textual.widgets import Label, Markdown, Tree

from memlane import Memory
from memlane import claude_files as cf
from memlane.server.web import build_app
from memlane.tui.app import Browser
from memlane.tui.claude_view import NOTHING, ClaudeFiles
from test_web import LOCAL, opener

SIZE = (120, 36)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A user with memory files of every kind, and a project `code/my.app` (a git
    repository) with its own, its parent's, and auto memory."""
    home = tmp_path / "home"
    write(home / ".claude/CLAUDE.md", "# Me\n\nI prefer tabs. See @~/notes/style.md\n")
    write(home / "notes/style.md", "Tabs, width 4.\n")
    write(home / ".claude/rules/python.md", "Type everything.\n")
    project = home / "code/my.app"
    (project / ".git").mkdir(parents=True)
    write(project / "CLAUDE.md", "# App\n\nArchitecture: @docs/arch.md\n\n```\n@docs/fenced.md\n"
          "```\nNot `@docs/spanned.md`, nor mail@docs/x.md.\n")  # fmt: skip
    write(project / "docs/arch.md", "Layers, see @../CLAUDE.md and @deeper\\ notes.md\n")
    write(project / "docs/deeper notes.md", "The deepest import.\n")
    for unused in ("fenced.md", "spanned.md", "x.md"):
        write(project / "docs" / unused, "never imported\n")
    write(project / ".claude/CLAUDE.md", "Team notes.\n")
    write(project / "CLAUDE.local.md", "My sandbox URL.\n")
    write(project / ".claude/rules/tests.md", "Real SQLite in tests.\n")
    write(project / "src/sub/CLAUDE.md", "Nearest.\n")
    write(home / "code/CLAUDE.md", "Every project under code/.\n")
    auto = home / ".claude/projects" / cf.project_slug(project) / "memory"
    for name in ("b-topic.md", "MEMORY.md", "a-topic.md", "notes.txt"):
        write(auto / name, f"# {name}\n")
    return home


def cwd_of(home: Path) -> Path:
    return home / "code/my.app/src/sub"


def shown(home: Path, files: list[cf.MemoryFile]) -> list[tuple[str, str, str | None]]:
    """(group, label, importer's label) of each file under the test's own directory."""
    return [
        (f.group, f.label(home), cf.MemoryFile(f.imported_by, "").label(home) if f.imported_by
         else None)
        for f in files
        if f.path.is_relative_to(home)
    ]  # fmt: skip


def test_every_kind_of_memory_file_is_found_once_in_the_order_claude_code_reads_them(
    home: Path,
) -> None:
    app = "~/code/my.app"
    assert shown(home, cf.located(home, cwd_of(home))) == [
        ("user", "~/.claude/CLAUDE.md", None),
        ("user", "~/notes/style.md", "~/.claude/CLAUDE.md"),
        ("user", "~/.claude/rules/python.md", None),
        ("project", f"{app}/src/sub/CLAUDE.md", None),
        ("project", f"{app}/CLAUDE.md", None),
        ("project", f"{app}/docs/arch.md", f"{app}/CLAUDE.md"),
        ("project", f"{app}/docs/deeper notes.md", f"{app}/docs/arch.md"),
        ("project", f"{app}/.claude/CLAUDE.md", None),
        ("project", f"{app}/CLAUDE.local.md", None),
        ("project", "~/code/CLAUDE.md", None),
        ("project", f"{app}/.claude/rules/tests.md", None),
        ("auto memory", f"~/.claude/projects/{cf.project_slug(home / 'code/my.app')}/memory/MEMORY.md", None),
        ("auto memory", f"~/.claude/projects/{cf.project_slug(home / 'code/my.app')}/memory/a-topic.md", None),
        ("auto memory", f"~/.claude/projects/{cf.project_slug(home / 'code/my.app')}/memory/b-topic.md", None),
    ]  # fmt: skip


def test_a_user_with_no_memory_files_has_none(tmp_path: Path) -> None:
    (tmp_path / "home/project").mkdir(parents=True)
    found = cf.located(tmp_path / "home", tmp_path / "home/project")
    assert [f for f in found if f.path.is_relative_to(tmp_path)] == []


def test_the_project_slug_makes_every_other_character_a_dash() -> None:
    assert cf.project_slug(Path("/home/w/mait-code")) == "-home-w-mait-code"
    assert cf.project_slug(Path("/Users/ada/my.app_2")) == "-Users-ada-my-app-2"


def test_auto_memory_is_the_git_roots_even_from_a_worktree(tmp_path: Path) -> None:
    claude = tmp_path / ".claude"
    tree = tmp_path / "wt"
    write(tree / ".git", "gitdir: /elsewhere/.git/worktrees/wt\n")  # a worktree's marker
    index = write(claude / "projects" / cf.project_slug(tree) / "memory/MEMORY.md", "- a\n")
    assert cf.git_root(tree / "deep/down") == tree
    assert cf.auto_memory(claude, tree / "deep/down") == [index]
    assert cf.auto_memory(claude, tmp_path / "elsewhere") == []


def test_auto_memory_named_only_by_its_slashes_is_found_too(tmp_path: Path) -> None:
    """A folder an older Claude Code named, with only each `/` made `-`."""
    claude, project = tmp_path / ".claude", tmp_path / "my.app"
    project.mkdir()
    older = str(project).replace("/", "-")
    index = write(claude / "projects" / older / "memory/MEMORY.md", "- a\n")
    assert cf.project_slug(project) != older and cf.auto_memory(claude, project) == [index]


def test_imports_are_read_outside_code_only() -> None:
    text = (
        "@first.md at the start, then @~/second.md and @/abs/third.md.\n"
        "```md\n@fenced.md\n```\n"
        "~~~\n@tilde-fenced.md\n~~~\n"
        "a `@span.md` and ``@double `span`.md``; mail@example.com; @with\\ space.md\n"
    )
    assert cf.imports(text) == [
        "first.md", "~/second.md", "/abs/third.md.", "with space.md"]  # fmt: skip


def test_an_import_resolves_beside_its_file_or_under_home() -> None:
    importer, home = Path("/p/docs/CLAUDE.md"), Path("/home/u")
    assert cf.resolve_import("arch.md", importer, home) == Path("/p/docs/arch.md")
    assert cf.resolve_import("../x.md", importer, home) == Path("/p/docs/../x.md")
    assert cf.resolve_import("~/notes.md", importer, home) == Path("/home/u/notes.md")
    assert cf.resolve_import("/etc/x.md", importer, home) == Path("/etc/x.md")


def test_imports_stop_after_five_hops(tmp_path: Path) -> None:
    for i in range(8):
        write(tmp_path / f"f{i}.md", f"next: @f{i + 1}.md\n")
    chain = list(cf._imported(tmp_path / "f0.md", tmp_path, cf.IMPORT_HOPS, set()))
    assert [p.name for p, _ in chain] == ["f1.md", "f2.md", "f3.md", "f4.md", "f5.md"]


def test_a_long_file_is_cut_and_an_unreadable_one_says_so(tmp_path: Path) -> None:
    long = write(tmp_path / "long.md", "x" * (cf.SHOWN_BYTES + 10))
    text = cf.read(long)
    assert text.startswith("x" * 100) and text.endswith("*(cut: the file is longer)*")
    assert cf.read(tmp_path / "gone.md").startswith(f"*Cannot read {tmp_path / 'gone.md'}:")


def state_of(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p): (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()
    }


@pytest.mark.anyio
async def test_the_browser_lists_them_and_shows_each_without_writing(
    mem: Memory, home: Path
) -> None:
    before = state_of(home)
    app = Browser(mem, store_label="test.db", home=home, cwd=cwd_of(home))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, ClaudeFiles)
        tree: Tree[int] = app.screen.query_one(Tree)
        groups = [str(n.label) for n in tree.root.children]
        assert groups == ["user (3)", "project (8)", "auto memory (3)"]
        card = app.screen.query_one("#claude-file", Markdown)
        assert card.source.startswith("# Me")
        await pilot.press("down")
        await pilot.pause()
        assert card.source == "Tabs, width 4.\n"
        where = str(app.screen.query_one("#claude-path", Label).render())
        assert where == "~/notes/style.md  (imported by ~/.claude/CLAUDE.md)"
        await pilot.press("s", "x")  # the browser's search and retire do not reach here
        await pilot.pause()
        assert isinstance(app.screen, ClaudeFiles)
        await pilot.press("r", "escape")
        await pilot.pause()
        assert not isinstance(app.screen, ClaudeFiles)
    assert state_of(home) == before


@pytest.mark.anyio
async def test_the_view_says_when_there_is_nothing(mem: Memory, tmp_path: Path) -> None:
    (tmp_path / "empty/work").mkdir(parents=True)
    app = Browser(mem, home=tmp_path / "empty", cwd=tmp_path / "empty/work")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await pilot.pause()
        assert app.screen.query_one("#claude-file", Markdown).source == NOTHING


def test_the_web_view_lists_them_and_shows_each_escaped_without_writing(
    db_path: Path, home: Path
) -> None:
    write(home / ".claude/projects" / cf.project_slug(home / "code/my.app") / "memory/MEMORY.md",
          "# Index\n\n<script>alert(1)</script>\n\n- [tabs](a-topic.md)\n")  # fmt: skip
    before = state_of(home)
    app = build_app(opener(db_path), home=home, cwd=cwd_of(home))
    with TestClient(app, base_url=LOCAL) as client:
        listing = client.get("/claude")
        first = client.get("/claude", params={"file": "0"})
        index = client.get("/claude", params={"file": "11"})
        missing = client.get("/claude", params={"file": "99"})
        bad = client.get("/claude", params={"file": "../../etc/passwd"})
    assert listing.status_code == 200
    assert "<h2>user (3)</h2>" in listing.text and "<h2>auto memory (3)</h2>" in listing.text
    assert '<a href="/claude?file=1">↳ ~/notes/style.md</a>' in listing.text
    assert "<h1>~/.claude/CLAUDE.md</h1>" in first.text and "<h1>Me</h1>" in first.text
    assert "MEMORY.md</h1>" in index.text and "<h1>Index</h1>" in index.text
    assert "<script>" not in index.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in index.text
    assert (missing.status_code, bad.status_code) == (404, 400)
    assert "no Claude Code memory file 99" in missing.text
    assert state_of(home) == before
