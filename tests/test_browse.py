"""`memlane browse` and `memlane review --tui`: the Textual browser driven headless by
its Pilot over a real store, its pure view helpers, the neighbourhood read it shows, and
the grouped summary printed without a terminal."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from textual.widgets import DataTable, Markdown, Tree

from conftest import AGENT, CliResult
from memlane import Context, Memory
from memlane.lifecycle.review import ReviewPolicy
from memlane.tui import view
from memlane.tui.app import Ask, Browser, Confirm, Edit, Page, Review, Table

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
SNAPSHOTS = Path(__file__).parent / "snapshots"
SIZE = (120, 36)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def seeded(mem: Memory) -> dict[str, str]:
    """A small store: a decision linked to a fact, a preference, a note in a session."""
    deploy = mem.add("We deploy with blue-green releases on Fridays.", title="Deploy",
                     kind="decision", tags=["ops"]).id  # fmt: skip
    tooling = mem.add("Use `uv` for installs, never pip.", title="Tooling", tags=["python"]).id
    style = mem.add("Alice prefers short PR descriptions.", title="PR style", kind="preference").id
    mem.graph.link(deploy, tooling, "related")
    return {"deploy": deploy, "tooling": tooling, "style": style}


def card_text(app: Browser) -> str:
    return app.query_one("#card", Markdown).source


def tree_leaves(app: Browser) -> list[str]:
    tree: Tree[str] = app.query_one(Tree)
    return [str(leaf.label) for group in tree.root.children for leaf in group.children]


# ---- the pure parts --------------------------------------------------------


def test_groups_are_largest_first_and_newest_first_within(mem: Memory) -> None:
    first = mem.get(mem.add("First fact about caching.", tags=["perf"]).id)
    second = mem.get(mem.add("Second fact about caching layers.", tags=["perf", "cache"]).id)
    choice = mem.get(mem.add("We chose Redis for the cache.", kind="decision").id)
    records = [first, second, choice]
    assert [(g.label, [r.id for r in g.records]) for g in view.group(records, "kind")] == [
        ("fact", [second.id, first.id]),
        ("decision", [choice.id]),
    ]
    by_tag = {g.label: [r.id for r in g.records] for g in view.group(records, "tag")}
    assert by_tag == {"perf": [second.id, first.id], "cache": [second.id], view.NO_TAG: [choice.id]}
    assert [g.label for g in view.group(records, "session")] == [view.NO_SESSION]
    with pytest.raises(ValueError):
        view.group(records, "colour")


def test_the_filter_reads_id_title_body_and_tags(mem: Memory) -> None:
    record = mem.get(mem.add("Body mentions Postgres.", title="Databases", tags=["infra"]).id)
    assert all(view.matches(record, text) for text in ("postgres", "DATAB", "infra", record.id))
    assert not view.matches(record, "redis")


def test_history_shows_what_each_version_changed(mem: Memory) -> None:
    record = mem.add("The API listens on port 8080.", title="API port")
    mem.update(record.id, content="The API listens on port 9090.", reason="moved")
    text = view.history_text(mem.history(record.id))
    heads = [line for line in text.splitlines() if line.startswith("v")]
    assert heads[0].startswith("v1") and heads[0].endswith("(moved)")  # why it ended
    assert heads[1].startswith("v2") and heads[1].endswith(".. now  (current)")
    assert "-The API listens on port 8080." in text
    assert "+The API listens on port 9090." in text


# ---- the neighbourhood the browser (and the web view) shows ----------------


def test_a_neighbourhood_has_each_link_once_with_ended_ends_and_the_entities(
    mem: Memory, db_path: Path
) -> None:
    hub = mem.add("The `billing` service owns invoices.", title="Billing").id
    peer = mem.add("Invoices are emailed nightly.", title="Invoices").id
    old = mem.add("Invoices were printed by hand.", title="Old invoices").id
    mem.graph.link(hub, peer, "related")  # symmetric: stored both ways, one edge
    mem.graph.link(hub, old, "supersedes")
    mem.retire(old)
    with Memory.open(db_path, agent="other", context=Context("proj", "main")) as other:
        secret = other.add("Billing rewrite plan.", title="Rewrite", visibility="private").id
        other.graph.link(secret, hub, "related")
    hood = mem.graph.neighbourhood(hub)
    edges = {(n.other.title, n.link.type.value, n.outgoing) for n in hood.links}
    assert len(hood.links) == 2
    assert ("Old invoices", "supersedes", True) in edges
    assert {title for title, *_ in edges} == {"Invoices", "Old invoices"}  # not "Rewrite"
    assert not next(n.other for n in hood.links if n.other.id == old).live
    assert [e.name for e in hood.entities] == ["billing"]
    assert not hood.contradicted
    mem.graph.contradict(hub, peer, "emailed or printed?")
    assert mem.graph.neighbourhood(hub).contradicted


def test_the_card_shows_metadata_links_and_entities(mem: Memory, seeded: dict[str, str]) -> None:
    text = view.card(mem.graph.neighbourhood(seeded["deploy"]), 1, NOW)
    assert text.startswith("# Deploy\n\nWe deploy with blue-green releases on Fridays.")
    for line in ("**scope**: project:proj", "**tags**: ops", "**versions**: 1",
                 f"**id**: {seeded['deploy']}", "**state**: live"):  # fmt: skip
        assert line in text
    assert "## Links (1)" in text and f"related <-> **Tooling** `{seeded['tooling']}`" in text
    assert "## Entities" in text


# ---- without a terminal: the grouped summary -------------------------------


def test_browse_without_a_terminal_prints_a_grouped_summary(
    run: Callable[..., CliResult], seeded: dict[str, str]
) -> None:
    out = run("browse")
    assert out.exit_code == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "3 live memories by kind"
    assert "decision (1)" in lines and "fact (1)" in lines and "preference (1)" in lines
    assert any(seeded["deploy"] in line and "Deploy" in line for line in lines)
    by_tag = run("browse", "--by", "tag", "--limit", "2").stdout
    assert by_tag.startswith("2 live memories by tag (the newest only")
    assert run("browse", "--by", "colour").exit_code == 2
    listing = run("browse", "--json").json()
    assert isinstance(listing, dict) and listing["count"] == 3 and not listing["more"]
    assert [(g["label"], g["count"]) for g in listing["groups"]] == [
        ("decision", 1),
        ("fact", 1),
        ("preference", 1),
    ]
    assert listing["groups"][0]["memories"][0]["id"] == seeded["deploy"]


def test_review_tui_without_a_terminal_is_a_one_line_error(run: Callable[..., CliResult]) -> None:
    out = run("review", "--tui")
    assert out.exit_code == 2
    assert out.stderr.strip().count("\n") == 0 and "terminal" in out.stderr


def test_browse_on_a_terminal_without_the_tui_extra_says_how_to_get_it(
    run: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    import memlane.cli.browse

    monkeypatch.setattr(memlane.cli.browse, "on_terminal", lambda: True)
    monkeypatch.setitem(sys.modules, "memlane.tui.app", None)  # as if Textual were missing
    out = run("browse")
    assert out.exit_code == 2
    assert (
        out.stderr.strip() == "memlane: error: the browser needs the tui extra: "
        "pip install 'memlane[tui]'"
    )


# ---- the browser, headless -------------------------------------------------


def browser(mem: Memory, **options: object) -> Browser:
    return Browser(mem, store_label="test.db", now=lambda: NOW, **options)  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_the_tree_groups_memories_and_the_cursor_shows_each_card(
    mem: Memory, seeded: dict[str, str]
) -> None:
    app = browser(mem)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        tree: Tree[str] = app.query_one(Tree)
        groups = [str(node.label) for node in tree.root.children]
        assert groups == ["decision (1)", "fact (1)", "preference (1)"]
        assert card_text(app).startswith("# Deploy")
        await pilot.press("down", "down")  # past the "fact" group to its memory
        await pilot.pause()
        assert card_text(app).startswith("# Tooling")
        await pilot.press("b")  # group by scope
        await pilot.pause()
        assert [str(n.label) for n in tree.root.children] == ["project:proj@main (3)"]
        assert card_text(app).startswith("# Tooling")  # the selection stays


@pytest.mark.anyio
async def test_slash_filters_the_tree_live_and_escape_clears_it(
    mem: Memory, seeded: dict[str, str]
) -> None:
    app = browser(mem)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash", "p", "i", "p")
        await pilot.pause()
        assert tree_leaves(app) == ["Tooling"]
        assert card_text(app).startswith("# Tooling")
        assert "filter 'pip'" in app.sub_title
        await pilot.press("escape")
        await pilot.pause()
        assert sorted(tree_leaves(app)) == ["Deploy", "PR style", "Tooling"]


@pytest.mark.anyio
async def test_retire_asks_first_and_then_changes_the_store(
    mem: Memory, seeded: dict[str, str]
) -> None:
    app = browser(mem)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, Confirm)
        await pilot.press("n")  # no: nothing changes
        await pilot.pause()
        assert mem.get(seeded["deploy"]).live
        await pilot.press("x", "y")
        await pilot.pause()
        assert not mem.get(seeded["deploy"]).live
        assert "Deploy" not in tree_leaves(app)


@pytest.mark.anyio
async def test_invalidate_takes_a_reason_and_reinforce_and_reviewed_land(
    mem: Memory, seeded: dict[str, str]
) -> None:
    app = browser(mem)
    before = mem.get(seeded["deploy"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("f", "y", "m", "y")
        await pilot.pause()
        after = mem.get(seeded["deploy"])
        assert after.activation_count == before.activation_count + 1
        assert after.reviewed_at is not None
        await pilot.press("i")
        await pilot.pause()
        assert isinstance(app.screen, Ask)
        await pilot.press(*"moved to Tuesdays", "enter")
        await pilot.pause()
        assert isinstance(app.screen, Confirm)
        await pilot.press("y")
        await pilot.pause()
    ended = mem.get(seeded["deploy"])
    assert ended.valid_until is not None and ended.supersede_reason == "moved to Tuesdays"


@pytest.mark.anyio
async def test_search_shows_score_parts_and_opens_the_chosen_memory(
    mem: Memory, seeded: dict[str, str]
) -> None:
    app = browser(mem)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s", *"pip installs", "enter")
        await pilot.pause()
        assert isinstance(app.screen, Table)
        table = app.screen.query_one(DataTable)
        first = [str(cell) for cell in table.get_row_at(0)]
        assert first[1] == seeded["tooling"] and "bm25" in first[3] and "recency" in first[3]
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, Table)
        assert card_text(app).startswith("# Tooling")


@pytest.mark.anyio
async def test_history_and_graph_neighbourhood_open_over_the_tree(
    mem: Memory, seeded: dict[str, str]
) -> None:
    mem.update(seeded["deploy"], content="We deploy with blue-green releases on Tuesdays.")
    app = browser(mem)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("h")
        await pilot.pause()
        assert isinstance(app.screen, Page)
        assert "+We deploy with blue-green releases on Tuesdays." in app.screen.text
        await pilot.press("escape", "g")
        await pilot.pause()
        assert isinstance(app.screen, Table)
        rows = app.screen.rows
        assert ("memory", "<-> related", seeded["tooling"], "Tooling") in rows
        await pilot.press("enter")  # the first row: the linked memory
        await pilot.pause()
        assert card_text(app).startswith("# Tooling")


@pytest.mark.anyio
async def test_narrowing_to_a_scope_reloads_the_tree(mem: Memory, seeded: dict[str, str]) -> None:
    mem.add("A global rule: no secrets in logs.", title="Logs", scope="global")
    app = browser(mem)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert len(tree_leaves(app)) == 4
        await pilot.press("p")
        await pilot.pause()
        await pilot.press(*["backspace"] * 3, *"global", "enter")
        await pilot.pause()
        assert tree_leaves(app) == ["Logs"]
        assert "scope global" in app.sub_title


@pytest.mark.anyio
async def test_review_mode_walks_the_queue_confirming_and_editing_in_place(
    mem: Memory, seeded: dict[str, str]
) -> None:
    # Everything is due: any recall probability under 1 is below the threshold.
    mem.review_policy = ReviewPolicy(threshold=1.0, min_importance=1)
    app = browser(mem, review=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, Review)
        due = [r.id for r, _ in app.screen.due]
        assert sorted(due) == sorted(seeded.values())
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, Edit)
        await pilot.press("end", *" Checked in June.", "ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, Review) and app.screen.position == 0
        assert mem.get(due[0]).body.endswith("Checked in June.")
        assert len(mem.history(due[0])) == 2
        await pilot.press("c")
        await pilot.pause()
        assert mem.get(due[0]).reviewed_at is not None
        assert app.screen.position == 1
        await pilot.press("n", "x", "y")
        await pilot.pause()
        assert not mem.get(due[2]).live and mem.get(due[1]).reviewed_at is None
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, Review)


# ---- the snapshot of the main screen ---------------------------------------


def fixed_store(source: Memory, target: Path) -> Memory:
    """`source` copied into a new store with fixed ids and times (export, rewrite,
    import), so its screen looks the same on every run."""
    lines = list(source.transfer.export_jsonl())
    rows = [json.loads(line) for line in lines]
    memories = sorted((r for r in rows if r.get("kind") == "memory"), key=lambda r: r["title"])
    names = {r["id"]: f"m-fixed{i:03d}" for i, r in enumerate(memories)}
    fixed = "2026-05-01T09:30:00Z"
    text = "\n".join(lines)
    for old, new in names.items():
        text = text.replace(old, new)
    out = []
    for line in text.splitlines():
        row = json.loads(line)
        for key in ("created_at", "updated_at", "valid_from", "version_from"):
            if key in row and row.get("kind") in ("memory", "link"):
                row[key] = fixed
        out.append(json.dumps(row))
    copy = Memory.open(target, agent=AGENT, context=Context("proj", "main"))
    report = copy.transfer.import_jsonl(out)
    assert not report.errors, report.errors
    return copy


@pytest.fixture
def still(mem: Memory, seeded: dict[str, str], tmp_path: Path) -> Iterator[Memory]:
    copy = fixed_store(mem, tmp_path / "fixed.db")
    yield copy
    copy.close()


@pytest.mark.sqlite_only
@pytest.mark.anyio
async def test_the_main_screen_matches_its_snapshot(still: Memory, tmp_path: Path) -> None:
    app = browser(still)
    async with app.run_test(size=SIZE) as pilot:
        # The card's Markdown renders its blocks asynchronously: on a busy machine one
        # pause is not enough (a parallel run caught it empty).
        card = app.query_one("#card", Markdown)
        for _ in range(100):
            await pilot.pause(0.05)
            if card.children:
                break
        await app.workers.wait_for_complete()
        await pilot.pause(0.2)
        svg = app.export_screenshot(title="memlane browse")
    path = SNAPSHOTS / "browse_main.svg"
    if os.environ.get("MEMLANE_UPDATE_SNAPSHOTS") or not path.exists():
        path.parent.mkdir(exist_ok=True)
        path.write_text(svg, encoding="utf-8")
        if not os.environ.get("MEMLANE_UPDATE_SNAPSHOTS"):
            pytest.fail(f"wrote a new snapshot {path.name}: check it, then commit it")
    actual = tmp_path / "browse_main.svg"
    actual.write_text(svg, encoding="utf-8")
    assert svg == path.read_text(encoding="utf-8"), (
        f"the main screen changed ({actual}): look at it, and if it is right, run again "
        "with MEMLANE_UPDATE_SNAPSHOTS=1"
    )
    for text in ("Deploy", "Tooling", "PR&#160;style", "m-fixed000"):
        assert text in svg


@pytest.mark.anyio
async def test_narrowing_to_a_project_shows_its_branches(
    mem: Memory, seeded: dict[str, str]
) -> None:
    mem.add("The project builds with make.", title="Build", scope="project:proj")
    mem.add("Another project's note.", title="Elsewhere", scope="project:other")
    app = browser(mem)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("p")
        await pilot.pause()
        await pilot.press(*["backspace"] * 3, *"project:proj", "enter")
        await pilot.pause()
        assert sorted(tree_leaves(app)) == ["Build", "Deploy", "PR style", "Tooling"]


@pytest.mark.anyio
async def test_an_entity_view_lists_its_relations_and_opens_their_source(
    mem: Memory, seeded: dict[str, str]
) -> None:
    mem.graph.relate("uv", "replaces", "pip", context="faster installs", memory=seeded["tooling"])
    mem.graph.relate("Ops Team", "uses", "uv")
    mem.graph.relate("uv", "mentors", "Ruff")
    mem.graph.unrelate("uv", "mentors", "Ruff")
    rows = view.relation_rows(mem.graph.relationships("uv", include_ended=True))
    assert rows == [
        ("->", "replaces", "pip", "faster installs", seeded["tooling"]),
        ("<-", "uses", "Ops Team", "", ""),
        ("->", "related_to (mentors) [ended]", "Ruff", "", ""),
    ]
    app = browser(mem)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("e")
        await pilot.pause()
        await pilot.press(*["backspace"] * 20, *"UV", "enter")
        await pilot.pause()
        assert isinstance(app.screen, Table)
        assert app.screen.heading.startswith("uv (unknown): relations")
        assert app.screen.rows == rows
        await pilot.press("enter")  # the first row came from the Tooling memory
        await pilot.pause()
        assert card_text(app).startswith("# Tooling")
        await pilot.press("e")
        await pilot.pause()
        await pilot.press(*["backspace"] * 20, *"nobody", "enter")
        await pilot.pause()
        assert not isinstance(app.screen, Table)  # told, not shown
