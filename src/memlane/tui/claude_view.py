"""The browser's Claude Code view: Claude Code's own memory files for this user and
project (see `memlane.claude_files`), each shown as its markdown. Read-only: nothing here
writes, and the files are Claude Code's to keep.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Header, Label, Markdown, Tree

from memlane.claude_files import AUTO, GROUPS, MemoryFile, located, read

NOTHING = "No Claude Code memory files for this user or project."


class ClaudeFiles(ModalScreen[None]):
    """Claude Code's memory files as a tree by group (user, project, auto memory),
    the highlighted file's markdown beside it.

    Modal, though it fills the screen: the browser's keys act on memlane's memories,
    and none of them should reach past this view.
    """

    DEFAULT_CSS = """
    ClaudeFiles { background: $background; }
    ClaudeFiles #claude-tree { width: 40%; border-right: tall $primary; }
    ClaudeFiles #claude-scroll { padding: 0 1; }
    ClaudeFiles #claude-path { padding: 0 1; text-style: bold; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "rescan", "rescan"),
        Binding("escape,q,n", "close", "back"),
    ]

    def __init__(self, home: Path, cwd: Path) -> None:
        super().__init__()
        self.home, self.cwd = home, cwd
        self.files: list[MemoryFile] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield Label(id="claude-path")
        with Horizontal():
            tree: Tree[int] = Tree("Claude Code memory", id="claude-tree")
            tree.show_root = False
            yield tree
            with VerticalScroll(id="claude-scroll"):
                yield Markdown(NOTHING, id="claude-file")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Claude Code's memory files (read-only)"
        self.rescan()
        self.query_one(Tree).focus()

    def rescan(self) -> None:
        """Look for the files again and rebuild the tree."""
        self.files = located(self.home, self.cwd)
        tree: Tree[int] = self.query_one(Tree)
        tree.clear()
        for group in GROUPS:
            members = [(i, f) for i, f in enumerate(self.files) if f.group == group]
            if not members:
                continue
            node = tree.root.add(Text(f"{group} ({len(members)})"), expand=True)
            for i, found in members:
                node.add_leaf(Text(self._label(found)), data=i)
        if self.files:
            first = tree.root.children[0].children[0]
            self.call_after_refresh(tree.move_cursor, first)
            self._show(0)
        else:
            self.query_one("#claude-path", Label).update(Text(""))
            self.query_one("#claude-file", Markdown).update(NOTHING)

    def _label(self, found: MemoryFile) -> str:
        """A tree leaf: an auto memory file by its name (their folder is one, and
        long), any other by its path; an import marked as one."""
        name = found.path.name if found.group == AUTO else found.label(self.home)
        return name if found.imported_by is None else f"↳ {name}"

    def _show(self, index: int | None) -> None:
        if index is None:
            return
        found = self.files[index]
        where = found.label(self.home)
        if found.imported_by is not None:
            importer = MemoryFile(found.imported_by, found.group).label(self.home)
            where += f"  (imported by {importer})"
        self.query_one("#claude-path", Label).update(Text(where))
        self.query_one("#claude-file", Markdown).update(read(found.path))

    @on(Tree.NodeHighlighted)
    def _highlighted(self, event: Tree.NodeHighlighted[int]) -> None:
        self._show(event.node.data)

    def action_rescan(self) -> None:
        self.rescan()
        self.notify("rescanned")

    def action_close(self) -> None:
        self.app.pop_screen()
