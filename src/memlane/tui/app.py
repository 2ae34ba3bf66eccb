"""`memlane browse`: a Textual browser over one store, read-mostly.

Left, the live memories as a tree grouped by kind (or scope, tag, session); right, the
highlighted memory's card. Keys search, narrow, show history, the graph
neighbourhood and an entity's relations, and list Claude Code's own memory files
(`tui.claude_view`); the few writes (reinforce, mark reviewed, invalidate, retire, and
the review walk's edit) each ask first and go through the `Memory` facade like any other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import (
    Button,
    DataTable,
    Footer,
    Header,
    Input,
    Label,
    Markdown,
    Static,
    TextArea,
    Tree,
)

from memlane.errors import MemlaneError
from memlane.memory import Memory
from memlane.model import Record
from memlane.timeutil import utcnow
from memlane.tui import view
from memlane.tui.claude_view import ClaudeFiles

# Memories the tree holds at most (newest first); `p` narrows to a scope.
DEFAULT_LIMIT = 2_000

Clock = Callable[[], datetime]


class Confirm(ModalScreen[bool]):
    """A yes/no question; y/Enter says yes, n/Escape no."""

    BINDINGS: ClassVar[list[BindingType]] = [
        ("y", "answer(True)", "yes"),
        ("n,escape", "answer(False)", "no"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text(self.question))
            with Horizontal(classes="buttons"):
                yield Button("Yes (y)", variant="primary", id="yes")
                yield Button("No (n)", id="no")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class Ask(ModalScreen[str | None]):
    """One line of text (a reason, a query, a scope); Escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [("escape", "cancel", "cancel")]

    def __init__(self, prompt: str, value: str = "") -> None:
        super().__init__()
        self.prompt, self.value = prompt, value

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text(self.prompt))
            yield Input(self.value, id="answer")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class Edit(ModalScreen[str | None]):
    """A memory's body in an editor; ctrl+s saves, Escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [
        ("ctrl+s", "save", "save"),
        ("escape", "cancel", "cancel"),
    ]

    def __init__(self, title: str, body: str) -> None:
        super().__init__()
        self.heading, self.body = title, body

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Label(Text(f"Edit: {self.heading}  (ctrl+s saves, escape cancels)"))
            yield TextArea(self.body, id="body")

    def action_save(self) -> None:
        self.dismiss(self.query_one("#body", TextArea).text)

    def action_cancel(self) -> None:
        self.dismiss(None)


class Page(ModalScreen[None]):
    """Read-only text (history with diffs, key help); Escape or q closes."""

    BINDINGS: ClassVar[list[BindingType]] = [("escape,q", "close", "close")]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.heading, self.text = title, text

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Label(Text(self.heading), classes="heading")
            with VerticalScroll():
                yield Static(Text(self.text), id="page")

    def action_close(self) -> None:
        self.dismiss(None)


class Table(ModalScreen[str | None]):
    """Rows to pick from (search results, a neighbourhood); Enter on a memory's row
    returns its id, Escape returns nothing."""

    BINDINGS: ClassVar[list[BindingType]] = [("escape,q", "close", "close")]

    def __init__(self, title: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
        super().__init__()
        self.heading, self.columns, self.rows = title, columns, rows

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Label(Text(self.heading), classes="heading")
            yield DataTable(id="rows", cursor_type="row")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns(*self.columns)
        for i, row in enumerate(self.rows):
            table.add_row(*(Text(cell) for cell in row), key=str(i))
        table.focus()

    @on(DataTable.RowSelected)
    def _picked(self, event: DataTable.RowSelected) -> None:
        row = self.rows[int(str(event.row_key.value))]
        self.dismiss(next((c for c in row if c.startswith("m-")), None))

    def action_close(self) -> None:
        self.dismiss(None)


HELP = """\
/        filter the tree by text (escape clears)
s        semantic search: recall, with each result's score parts
p        narrow to a scope (project:NAME with its branches, global, all)
b        group by kind, scope, tag or session
h        history of the memory, with a diff between versions
g        graph neighbourhood: links and entities, one hop
e        an entity's relations (its type, both ways, ended ones marked)
r        reload from the store
f        reinforce (asks first)
m        mark reviewed (asks first)
i        invalidate, with a reason (asks first)
x        retire (asks first)
v        review mode: walk the memories due for review
n        Claude Code's own memory files (CLAUDE.md, auto memory), read-only
?        this help
q        quit
"""


class Actions:
    """The browser's writes on one memory, each confirmed first; shared by the main
    screen and the review walk. `done` runs after a write landed."""

    def __init__(self, app: Browser, done: Callable[[Record], None]) -> None:
        self.app, self.done = app, done

    def run(self, write: Callable[[], Record], what: str) -> None:
        try:
            record = write()
        except MemlaneError as exc:
            self.app.notify(str(exc), severity="error", markup=False)
            return
        self.app.notify(f"{what}: {record.title}", markup=False)
        self.done(record)

    def confirmed(self, question: str, write: Callable[[], Record], what: str) -> None:
        def answered(yes: bool | None) -> None:
            if yes:
                self.run(write, what)

        self.app.push_screen(Confirm(question), answered)

    def reinforce(self, r: Record) -> None:
        self.confirmed(
            f"Reinforce {r.id} ({r.title})?", lambda: self.app.memory.reinforce(r.id), "reinforced"
        )

    def reviewed(self, r: Record) -> None:
        self.confirmed(
            f"Mark {r.id} ({r.title}) reviewed?",
            lambda: self.app.memory.lifecycle.reviewed(r.id),
            "reviewed",
        )

    def retire(self, r: Record) -> None:
        self.confirmed(
            f"Retire {r.id} ({r.title})? It stays for history.",
            lambda: self.app.memory.retire(r.id, "retired in the browser"),
            "retired",
        )

    def invalidate(self, r: Record) -> None:
        def reason_given(reason: str | None) -> None:
            if reason:
                self.confirmed(
                    f"Invalidate {r.id} ({r.title}): {reason}?",
                    lambda: self.app.memory.invalidate(r.id, reason),
                    "invalidated",
                )

        self.app.push_screen(Ask(f"Why is {r.id} no longer true?"), reason_given)

    def edit(self, r: Record) -> None:
        def saved(body: str | None) -> None:
            if body is not None and body.strip() and body != r.body:
                self.run(lambda: self._update(r, body), "edited")

        self.app.push_screen(Edit(r.title, r.body), saved)

    def _update(self, r: Record, body: str) -> Record:
        self.app.memory.update(r.id, content=body, reason="edited in the browser")
        return self.app.memory.get(r.id)


class Review(Screen[None]):
    """The due-for-review queue, most decayed first: confirm, edit, invalidate or
    retire each memory in place, or skip it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "act('confirm')", "confirm"),
        Binding("e", "act('edit')", "edit"),
        Binding("i", "act('invalidate')", "invalidate"),
        Binding("x", "act('retire')", "retire"),
        Binding("n", "skip", "skip"),
        Binding("escape,q", "close", "back"),
    ]

    def __init__(self, due: list[tuple[Record, float]]) -> None:
        super().__init__()
        self.due = due
        self.position = 0

    @property
    def browser(self) -> Browser:
        assert isinstance(self.app, Browser)
        return self.app

    def compose(self) -> ComposeResult:
        yield Header()
        yield Label(id="progress")
        with VerticalScroll():
            yield Markdown(id="review-card")
        yield Footer()

    def on_mount(self) -> None:
        # Confirming, invalidating or retiring moves on; an edit stays, to be confirmed.
        self.moving_on = Actions(self.browser, self._next)
        self.staying = Actions(self.browser, self._edited)
        self._show()

    def _current(self) -> Record | None:
        return self.due[self.position][0] if self.position < len(self.due) else None

    def _show(self) -> None:
        record = self._current()
        progress = self.query_one("#progress", Label)
        card = self.query_one("#review-card", Markdown)
        if record is None:
            progress.update(Text(f"Review: done ({len(self.due)} memories)"))
            card.update("Nothing left to review. Escape goes back.")
            return
        chance = self.due[self.position][1]
        progress.update(
            Text(
                f"Review {self.position + 1} of {len(self.due)}: recall probability {chance:.2f}"
                "   c confirm  e edit  i invalidate  x retire  n skip"
            )
        )
        card.update(self.browser.card(record))

    def _next(self, record: Record) -> None:
        self.position += 1
        self.browser.reload()
        self._show()

    def _edited(self, record: Record) -> None:
        self.due[self.position] = (record, self.due[self.position][1])
        self.browser.reload()
        self._show()

    def action_act(self, name: str) -> None:
        """confirm, edit, invalidate or retire the memory on screen."""
        if (r := self._current()) is None:
            return
        if name == "confirm":
            self.moving_on.run(lambda: self.browser.memory.lifecycle.reviewed(r.id), "reviewed")
        elif name == "edit":
            self.staying.edit(r)
        else:
            getattr(self.moving_on, name)(r)

    def action_skip(self) -> None:
        self.position = min(self.position + 1, len(self.due))
        self._show()

    def action_close(self) -> None:
        self.app.pop_screen()


class Browser(App[None]):
    """Live memories as a tree, the highlighted one's card beside it."""

    TITLE = "memlane"
    CSS = """
    #tree { width: 45%; border-right: tall $primary; }
    #card-scroll { padding: 0 1; }
    #filter { dock: bottom; display: none; }
    #filter.shown { display: block; }
    .dialog { width: 70%; height: auto; max-height: 80%; padding: 1 2;
              background: $panel; border: thick $primary; }
    .dialog.wide { width: 80%; height: 80%; }
    .buttons { height: auto; margin-top: 1; }
    .heading { text-style: bold; }
    Confirm, Ask, Edit, Page, Table { align: center middle; }
    #body { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "filter", "filter"),
        Binding("s", "search", "search"),
        Binding("p", "narrow", "scope"),
        Binding("b", "regroup", "group by"),
        Binding("h", "history", "history"),
        Binding("g", "graph", "graph"),
        Binding("e", "entity", "entity"),
        Binding("r", "reload", "reload"),
        Binding("f", "act('reinforce')", "reinforce", show=False),
        Binding("m", "act('reviewed')", "reviewed", show=False),
        Binding("i", "act('invalidate')", "invalidate", show=False),
        Binding("x", "act('retire')", "retire", show=False),
        Binding("v", "review", "review"),
        Binding("n", "claude_files", "Claude Code files", show=False),
        Binding("question_mark", "help", "help"),
        Binding("q", "quit", "quit"),
        Binding("escape", "clear_filter", show=False),
    ]

    def __init__(
        self,
        memory: Memory,
        *,
        by: str = "kind",
        scope: str | None = "all",
        limit: int = DEFAULT_LIMIT,
        review: bool = False,
        store_label: str = "",
        now: Clock = utcnow,
        review_limit: int | None = None,
        home: Path | None = None,
        cwd: Path | None = None,
    ) -> None:
        """`home` and `cwd` (default: the user's and this process's) are where Claude
        Code's memory files are looked for."""
        super().__init__()
        if by not in view.GROUPINGS:
            raise ValueError(f"group by one of {', '.join(view.GROUPINGS)}")
        self.memory, self.by, self.scope, self.limit = memory, by, scope, limit
        self.store_label, self.now = store_label, now
        self.start_in_review = review
        self.review_limit = review_limit  # the review walk's length (None: all due)
        self.home, self.cwd = home or Path.home(), cwd or Path.cwd()
        self.needle = ""
        self.records: list[Record] = []
        self.more = False
        self.selected: str | None = None
        self._card_text: str | None = None
        self.actions = Actions(self, lambda record: self._after_write(record))

    # ---- layout ----------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            tree: Tree[str] = Tree("memories", id="tree")
            tree.show_root = False
            yield tree
            with VerticalScroll(id="card-scroll"):
                yield Markdown("Select a memory.", id="card")
        yield Input(placeholder="filter: any text of the id, title, body or tags", id="filter")
        yield Footer()

    def on_mount(self) -> None:
        self.reload()
        self.query_one(Tree).focus()
        if self.start_in_review:
            self.action_review()

    # ---- reading ---------------------------------------------------------------

    def reload(self) -> None:
        """Read the live memories again and rebuild the tree, keeping the selection."""
        self.records, self.more = view.newest_live(self.memory, self.scope, self.limit)
        self._fill()

    def _fill(self) -> None:
        shown = [r for r in self.records if view.matches(r, self.needle)]
        groups = view.group(shown, self.by)
        tree: Tree[str] = self.query_one(Tree)
        tree.clear()
        target = None
        for g in groups:
            node = tree.root.add(Text(f"{g.label} ({len(g.records)})"), expand=True)
            for record in g.records:
                leaf = node.add_leaf(Text(view.label(record)), data=record.id)
                if record.id == self.selected and target is None:
                    target = leaf
        self._subtitle(len(shown))
        if target is None and groups:
            target = tree.root.children[0].children[0]
        if target is not None:
            # A node has no line until the rebuilt tree is laid out.
            self.call_after_refresh(tree.move_cursor, target)
            self._show(target.data)
        else:
            self._set_card("No memories match.")

    def _subtitle(self, shown: int) -> None:
        where = f"scope {self.scope}" if self.scope else "this project and global"
        parts = [self.store_label, f"{shown} memories by {self.by}", where]
        if self.more:
            parts.append(f"newest {self.limit} only")
        if self.needle:
            parts.append(f"filter {self.needle!r}")
        self.sub_title = " · ".join(p for p in parts if p)

    def card(self, record: Record) -> str:
        hood = self.memory.graph.neighbourhood(record.id)
        return view.card(hood, len(self.memory.history(record.id)), self.now())

    def _show(self, memory_id: str | None) -> None:
        if memory_id is None:
            return
        self.selected = memory_id
        try:
            text = self.card(self.memory.get(memory_id))
        except MemlaneError as exc:
            text = f"**{exc}**"
        self._set_card(text)

    def _set_card(self, text: str) -> None:
        """Render the card, unless it already shows this text: the tree highlights the
        same memory again after every rebuild, and a second render would blank it."""
        if text != self._card_text:
            self._card_text = text
            self.query_one("#card", Markdown).update(text)

    @on(Tree.NodeHighlighted)
    def _highlighted(self, event: Tree.NodeHighlighted[str]) -> None:
        self._show(event.node.data)

    def current(self) -> Record | None:
        if self.selected is None:
            self.notify("Select a memory first.", severity="warning")
            return None
        try:
            return self.memory.get(self.selected)
        except MemlaneError as exc:
            self.notify(str(exc), severity="error", markup=False)
            return None

    def select(self, memory_id: str | None) -> None:
        """Show a memory picked elsewhere (search, graph); in the tree when it is there."""
        if memory_id is None:
            return
        self.selected = memory_id
        self._fill()
        self._show(memory_id)

    def _after_write(self, record: Record) -> None:
        self.reload()
        self._show(record.id)

    # ---- keys ------------------------------------------------------------------

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.add_class("shown")
        box.focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.needle = event.value.strip()
        self._fill()

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        self.query_one(Tree).focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.value = ""
        box.remove_class("shown")
        self.query_one(Tree).focus()

    def action_search(self) -> None:
        def asked(query: str | None) -> None:
            if not query:
                return
            try:
                found = self.memory.recall(
                    query, count=False, scope=view.narrowed(self.memory, self.scope)
                )
            except MemlaneError as exc:
                self.notify(str(exc), severity="error", markup=False)
                return
            rows = view.score_rows(found.hits)
            title = f"recall {query!r}: {len(rows)} results (enter opens one)"
            self.push_screen(Table(title, ("score", "id", "memory", "parts"), rows), self.select)

        self.push_screen(Ask("Recall (semantic search):"), asked)

    def action_narrow(self) -> None:
        def asked(scope: str | None) -> None:
            if scope:
                previous, self.scope = self.scope, scope
                try:
                    self.reload()
                except MemlaneError as exc:
                    self.scope = previous
                    self.notify(str(exc), severity="error", markup=False)

        self.push_screen(
            Ask("Narrow to scope (project:NAME, global, all):", self.scope or ""), asked
        )

    def action_regroup(self) -> None:
        order = view.GROUPINGS
        self.by = order[(order.index(self.by) + 1) % len(order)]
        self._fill()

    def action_history(self) -> None:
        if (r := self.current()) is not None:
            text = view.history_text(self.memory.history(r.id))
            self.push_screen(Page(f"History of {r.id}: {r.title}", text))

    def action_graph(self) -> None:
        if (r := self.current()) is not None:
            rows = view.neighbourhood_rows(self.memory.graph.neighbourhood(r.id))
            title = f"Neighbourhood of {r.id}: {r.title} (enter opens a memory)"
            self.push_screen(
                Table(title, ("what", "relation", "id / kind", "title"), rows), self.select
            )

    def action_entity(self) -> None:
        """Ask for an entity (the selected memory's most named one offered), then show
        its relations; enter on one opens the memory it came from."""
        r = self.current()
        named = self.memory.graph.entities_of(r.id) if r is not None else []

        def asked(name: str | None) -> None:
            if not name:
                return
            try:
                found = self.memory.graph.relationships(name, include_ended=True)
            except MemlaneError as exc:
                self.notify(str(exc), severity="error", markup=False)
                return
            e = found.entity
            title = f"{e.name} ({e.type.value}): relations (enter opens the source memory)"
            columns = ("way", "predicate", "entity", "context", "source")
            self.push_screen(Table(title, columns, view.relation_rows(found)), self.select)

        self.push_screen(Ask("Entity (any name or alias):", named[0].name if named else ""), asked)

    def action_reload(self) -> None:
        self.reload()
        self.notify("reloaded")

    def action_act(self, name: str) -> None:
        """A write on the selected memory, asked first (see Actions)."""
        if (r := self.current()) is not None:
            getattr(self.actions, name)(r)

    def action_review(self) -> None:
        scope = view.narrowed(self.memory, self.scope)
        due = self.memory.lifecycle.review(limit=self.review_limit, scope=scope)
        self.push_screen(Review(due))

    def action_claude_files(self) -> None:
        self.push_screen(ClaudeFiles(self.home, self.cwd))

    def action_help(self) -> None:
        self.push_screen(Page("Keys", HELP))
