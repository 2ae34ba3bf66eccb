"""Private memories are seen by their owner only, on every read path.

Alice and Bob share one store file. Alice's private memories carry words nobody else
writes (SECRETS); every read made by Bob, or by a reader with no identity, is checked
for those words and for the private ids in its *whole* result (the repr of what the
API returns, or the CLI's stdout and stderr), never just for a count. The control
tests show that Alice herself reaches her memories by the same paths, so a memory
hidden from Bob is hidden by the visibility rule, not by a query that cannot find it.

Decisions pinned here:
- `stats`, `doctor` and the count `agents show` prints count only what the reader may
  see: another owner's private memories change none of their numbers.
- The journal holds no content, but a line naming a private memory tells another
  reader that it exists, who wrote it and when: lines about memories the reader may
  not see are left out, and the journal of such an id reads like one never used.
- The id namespace is per reader: a prefix that only someone else's private memory
  shares with a visible one resolves to the visible one, never to "ambiguous".

Writing as another owner, bulk forgets and the other aggregates: test_ownership.py.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from conftest import BACKEND
from memlane import AmbiguousId, Context, Invalid, Memory, NotFound
from memlane.cli.main import cli
from memlane.embed import get_embedder
from memlane.model import Visibility, WriteStatus
from memlane.timeutil import utcnow

ALICE, BOB = "alice", "bob"
CONTEXT = Context("proj", "main")
HINT = "private entries of yours matched but are hidden"
# Words only Alice's private memories contain (titles, bodies, tags, entity names).
SECRETS = (
    "quokka",
    "marmalade",
    "zanzibar",
    "armadillo",
    "platypus",
    "pelican",
    "narwhal",
    "ocelot",
)
SECRET_BODY = "The quokka vault passphrase hides under the marmalade jar; see `ZanzibarLedger`."
# Alice's private memories that mention "vault" and are live (the hint counts them).
ALICE_PRIVATE_VAULT = 4
NEVER_USED_ID = "m-zzzzzzzz"


@dataclass(frozen=True)
class World:
    secret: str  # private, two versions, linked to `audit`, names ZanzibarLedger
    audit: str  # Alice's public memory, same session as `secret`, linked to it
    old: str  # private, superseded by `new`
    new: str  # private, inherits its visibility from `old`
    turned: str  # public at `before`, private since
    batch: str  # private, written through add_batch
    fact: str  # private ephemeral decision (what `recent` shows by default)
    bob_public: str
    bob_secret: str  # Bob's own private memory
    before: datetime  # `turned` was still public; `secret` had its first version

    @property
    def private(self) -> tuple[str, ...]:
        """Alice's private memories."""
        return (self.secret, self.old, self.new, self.turned, self.batch, self.fact)


def leaks(world: World, output: object, *, ids: bool = True) -> list[str]:
    """The secret words (and, with `ids`, Alice's private ids) found in `output`."""
    text = (output if isinstance(output, str) else repr(output)).casefold()
    wanted = (*SECRETS, *world.private) if ids else SECRETS
    return [w for w in wanted if w.casefold() in text]


def assert_hidden(world: World, output: object, *, ids: bool = True) -> None:
    found = leaks(world, output, ids=ids)
    assert not found, f"leaked {found} in: {output!r}"


def open_as(db_path: Path, agent: str | None) -> Memory:
    return Memory.open(db_path, agent=agent, context=CONTEXT, embedder=get_embedder("hash"))


@pytest.fixture
def alice(world: World, db_path: Path) -> Iterator[Memory]:
    with open_as(db_path, ALICE) as memory:
        yield memory


@pytest.fixture
def bob(world: World, db_path: Path) -> Iterator[Memory]:
    with open_as(db_path, BOB) as memory:
        yield memory


@pytest.fixture
def nobody(world: World, db_path: Path) -> Iterator[Memory]:
    """A reader with no identity (no MEMLANE_AGENT)."""
    with open_as(db_path, None) as memory:
        yield memory


@pytest.fixture(params=["bob", "nobody"])
def reader(request: pytest.FixtureRequest, world: World) -> Memory:
    """Someone who is not Alice: another agent, or a reader with no identity."""
    memory: Memory = request.getfixturevalue(request.param)
    return memory


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, World]:
    """Alice's and Bob's memories, written once per module into a store the tests copy."""
    path = tmp_path_factory.mktemp("world") / "memlane.db"
    with open_as(path, ALICE) as alice, open_as(path, BOB) as bob:
        built = build_world(alice, bob)
    return path, built


@pytest.fixture
def world(template: tuple[Path, World], db_path: Path) -> World:
    """This test's store: a copy of the module's (a closed SQLite file, WAL folded in)."""
    path, built = template
    if BACKEND == "postgres":  # no file to copy: write the world again (new ids)
        with open_as(db_path, ALICE) as alice, open_as(db_path, BOB) as bob:
            return build_world(alice, bob)
    assert not Path(f"{path}-wal").exists()
    shutil.copyfile(path, db_path)
    return built


def build_world(alice: Memory, bob: Memory) -> World:
    secret = alice.add(
        SECRET_BODY,
        title="Quokka vault passphrase",
        private=True,
        session_id="s-vault",
        tags=["vault", "quokka-tag"],
    ).id
    audit = alice.add("Vault audits happen every Monday morning.", session_id="s-vault").id
    alice.graph.link(secret, audit, "contradicts", reason="the armadillo audit moved")
    old = alice.add("The platypus plan starts in spring.", private=True).id
    new = alice.supersede(old, "The platypus plan starts in autumn.").id
    turned = alice.add("The pelican roster lists the vault night shift.").id
    [line] = alice.add_batch(
        [{"content": "The narwhal budget stays under the vault limit.", "private": True}]
    ).lines
    assert line.result is not None and line.result.id is not None
    fact = alice.add("Chose the ocelot cipher for the vault.", type="decision", private=True).id
    time.sleep(0.01)
    before = utcnow()
    time.sleep(0.01)
    alice.update(secret, append=" Rotate it after the armadillo gala.")
    alice.update(turned, private=True)
    bob_public = bob.add("Bob rotates the vault keys every quarter.").id
    bob_secret = bob.add("Bob's wombat vault budget is seventeen crowns.", private=True).id
    return World(
        secret, audit, old, new, turned, line.result.id, fact, bob_public, bob_secret, before
    )


def needs_identity(memory: Memory, options: dict[str, Any]) -> bool:
    return memory.agent is None and bool(options.get("include_private") or options.get("mine"))


# ---- the owner reaches her private memories (the controls) -------------------------------


def test_alice_sees_her_private_memories_by_id_and_with_the_flags(alice, world):
    assert alice.get(world.secret).visibility is Visibility.PRIVATE
    assert alice.get(world.secret[2:]).id == world.secret  # a prefix without m-
    public = {r.id for r in alice.list(limit=0)}
    assert public.isdisjoint(world.private)  # public-only by default, for her too
    assert {r.id for r in alice.list(mine=True, limit=0)} == set(world.private) - {world.old}
    assert {world.secret, world.audit} <= {r.id for r in alice.list(include_private=True)}
    assert world.bob_secret not in {r.id for r in alice.list(include_private=True, scope="all")}
    hits = alice.search("quokka marmalade", include_private=True)
    assert [h.record.id for h in hits] == [world.secret]
    assert [h.record.id for h in alice.search("quokka marmalade")] == []


def test_alice_reaches_her_private_memory_on_every_graph_and_recall_path(alice, world):
    assert world.secret in {link.source for link in alice.graph.links(world.audit)}
    result = alice.recall("vault audits monday", include_private=True)
    assert world.audit in {h.record.id for h in result.hits}
    assert world.secret in {h.record.id for h in result.hits} | {e.record.id for e in result.extras}
    assert "ZanzibarLedger" in {e.name for e in alice.graph.entities(limit=0)}
    _, named = alice.graph.mentioning("ZanzibarLedger")
    assert [r.id for r in named] == [world.secret]
    assert "quokka-tag" in alice.registries.tags()
    [verdict] = alice.explain("quokka passphrase", world.secret, include_private=True).verdicts
    assert verdict.reason == "found"
    as_of = {r.id for r in alice.list(as_of=world.before, include_private=True, limit=0)}
    assert world.turned in as_of


# ---- another reader: by id ----------------------------------------------------------------


def test_private_ids_and_prefixes_are_not_found(reader, world):
    for memory_id in world.private:
        for given in (memory_id, memory_id[2:], memory_id[:-1], memory_id.upper()):
            with pytest.raises(NotFound) as caught:
                reader.get(given)
            assert_hidden(world, str(caught.value), ids=False)
        with pytest.raises(NotFound):
            reader.get(memory_id, as_of=world.before)


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda m, i: m.history(i), id="history"),
        pytest.param(lambda m, i: m.graph.links(i), id="links"),
        pytest.param(lambda m, i: m.embed(i), id="embed"),
        pytest.param(lambda m, i: m.graph.neighbourhood(i), id="neighbourhood"),
        pytest.param(lambda m, i: m.graph.entities_of(i), id="entities-of"),
        pytest.param(lambda m, i: m.maintenance.merged_from(i), id="merged-from"),
        pytest.param(lambda m, i: m.lifecycle.fact_session(i), id="fact-session"),
    ],
)
def test_reads_of_a_private_id_are_not_found(reader, world, call):
    for memory_id in world.private:
        with pytest.raises(NotFound) as caught:
            call(reader, memory_id)
        assert_hidden(world, str(caught.value), ids=False)


def test_an_ambiguous_prefix_lists_only_what_the_reader_may_see(reader, world):
    with pytest.raises(AmbiguousId) as caught:
        reader.get("m-")
    assert world.audit in caught.value.candidates
    assert_hidden(world, str(caught.value))
    assert_hidden(world, caught.value.candidates)


def test_a_prefix_shared_with_a_private_memory_resolves_to_the_visible_one(alice, bob, monkeypatch):
    fixed = iter(["m-q7000001", "m-q7000002"])
    monkeypatch.setattr("memlane.runtime.new_id", lambda: next(fixed))
    hidden = alice.add("The quokka hides the spare key.", private=True).id
    shown = alice.add("The spare key is at the front desk.").id
    assert (hidden, shown) == ("m-q7000001", "m-q7000002")
    with pytest.raises(AmbiguousId):
        alice.get("q700000")
    assert bob.get("q700000").id == shown
    with pytest.raises(NotFound):
        bob.get("q7000001")


# ---- another reader: listings and searches ---------------------------------------------------

LIST_OPTIONS = [
    {},
    {"limit": 0},
    {"scope": "all", "limit": 0},
    {"include_private": True, "limit": 0},
    {"mine": True, "limit": 0},
    {"include_private": True, "include_superseded": True, "scope": "all", "limit": 0},
    {"session_id": "s-vault", "include_private": True},
    {"tags": "quokka-tag,vault", "include_private": True},
    {"kind": "decision", "include_private": True},
    {"order": "importance", "include_private": True},
    {"has_resonance_type": True, "include_private": True},
]


@pytest.mark.parametrize("options", LIST_OPTIONS)
def test_list_never_shows_another_owners_private_memories(reader, world, options):
    if needs_identity(reader, options):
        with pytest.raises(Invalid):
            reader.list(**options)
        return
    assert_hidden(world, reader.list(**options))


def test_list_shows_the_public_memories_of_both_agents(reader, world):
    public = {r.id for r in reader.list(scope="all", limit=0)}
    assert {world.audit, world.bob_public} <= public
    assert_hidden(world, public)


def test_list_as_of_an_instant_when_the_memory_was_public(reader, world):
    for options in ({}, {"include_superseded": True, "scope": "all", "limit": 0}):
        records = reader.list(as_of=world.before, **options)
        assert world.audit in {r.id for r in records}
        assert_hidden(world, records)


QUERIES = [
    "quokka marmalade",
    SECRET_BODY,
    "Quokka vault passphrase",
    "vault passphrase",
    "ZanzibarLedger",
    "armadillo gala",
    "platypus plan",
    "pelican roster",
    "narwhal budget",
    "ocelot cipher",
    "quokka-tag",
    "vault",
    "quok*",
]


@pytest.mark.parametrize("mode", ["keyword", "vector", "hybrid"])
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"include_private": True, "scope": "all"},
        {"include_private": True, "include_superseded": True, "scope": "all"},
        {"mine": True},
        {"as_of": "before"},
    ],
    ids=["default", "include-private", "superseded", "mine", "as-of"],
)
def test_search_never_finds_another_owners_private_memories(reader, world, mode, options):
    if options.get("as_of"):
        options = {**options, "as_of": world.before}
    if needs_identity(reader, options):
        with pytest.raises(Invalid):
            reader.search("vault", mode=mode, **options)
        return
    for query in QUERIES:
        assert_hidden(world, reader.search(query, mode=mode, **options))


def test_search_of_an_archived_version_of_a_private_memory(reader, world):
    hits = reader.search("marmalade jar", as_of=world.before, include_superseded=True)
    assert_hidden(world, hits)
    assert_hidden(world, reader.search("pelican", as_of=world.before))


def test_recent_never_shows_another_owners_private_memories(reader, world):
    assert_hidden(world, reader.recent())
    everything = reader.recent(all_types=True, scope="all", limit=1000)
    assert world.bob_public in {r.id for r in everything}
    assert_hidden(world, everything)
    assert_hidden(world, reader.recent(resonance_type="ephemeral", sort="resonance"))


# ---- another reader: recall and explain -------------------------------------------------------

RECALL_OPTIONS = [
    {},
    {"passive": True},
    {"include_private": True, "scope": "all"},
    {"include_private": True, "include_superseded": True, "scope": "all"},
    {"max_tokens": 40},
    {"limit": 1},
    {"as_of": "before"},
]


@pytest.mark.parametrize("options", RECALL_OPTIONS, ids=lambda o: ",".join(o) or "default")
def test_recall_never_surfaces_another_owners_private_memories(reader, world, options):
    """Neither as a result, a linked neighbour (1-hop expansion: `secret` contradicts
    `audit`), a session neighbour (both in s-vault), nor a candidate in the trace."""
    if options.get("as_of"):
        options = {**options, "as_of": world.before}
    if needs_identity(reader, options):
        with pytest.raises(Invalid):
            reader.recall("vault", **options)
        return
    for query in ("vault audits monday", *QUERIES):
        result = reader.recall(query, **options)
        assert_hidden(world, result)
    audits = reader.recall("vault audits monday", **options)
    if "max_tokens" not in options:
        assert world.audit in {h.record.id for h in audits.hits}


def test_explain_of_a_private_id_reads_as_an_id_never_used(reader, world):
    never = reader.explain("quokka vault passphrase", NEVER_USED_ID, include_private=False)
    for memory_id in world.private:
        for target in (memory_id, memory_id[2:], memory_id[:-1]):
            explained = reader.explain("quokka vault passphrase", target)
            assert explained.verdicts == never.verdicts
            [verdict] = explained.verdicts
            assert (verdict.id, verdict.reason) == (None, "not_in_store")
            assert_hidden(world, explained.result)


@pytest.mark.parametrize(
    "target", ["marmalade", "Quokka vault passphrase", "armadillo gala", "pelican", "ocelot"]
)
def test_explain_of_a_private_memorys_text_reads_as_not_in_store(reader, world, target):
    options = {} if reader.agent is None else {"include_private": True, "scope": "all"}
    explained = reader.explain("vault", target, **options)
    [verdict] = explained.verdicts
    assert (verdict.id, verdict.reason) == (None, "not_in_store")
    assert_hidden(world, explained.verdicts)
    assert_hidden(world, explained.result)


def test_explain_without_a_target_judges_only_what_the_reader_may_see(reader, world):
    explained = reader.explain("vault audits monday")
    assert explained.verdicts
    assert_hidden(world, explained)


# ---- another reader: the graph, tags and aggregates -----------------------------------------


def test_links_of_a_public_memory_leave_out_the_private_end(reader, world):
    links = reader.graph.links(world.audit)
    assert_hidden(world, links)


def test_links_touching_a_private_memory_cannot_be_deleted_by_another_reader(alice, reader, world):
    links = alice.graph.links(world.secret)
    assert links  # the contradiction with `audit`, stored both ways
    for link in links:
        with pytest.raises(NotFound) as caught:
            reader.graph.unlink(link.id or "")
        assert_hidden(world, str(caught.value))
    assert alice.graph.links(world.secret) == links


# ---- anchors: a public memory anchored to a private one --------------------------------------


@dataclass(frozen=True)
class Anchored:
    by_hand: str  # `audit`, anchored to `secret` with update --add-anchor
    automatic: str  # a public memory auto-anchored (threshold 0) to Alice's private ones


@pytest.fixture
def anchored(alice: Memory, world: World) -> Anchored:
    """Alice anchors two of her public memories to her private ones (both hers to see)."""
    alice.update(world.audit, add_anchors=[world.secret])
    rota = alice.add("Vault passphrase rotation happens after each audit.").id
    alice.auto_anchor(rota, threshold=0.0)
    assert world.secret in alice.get(world.audit).anchors
    assert set(alice.get(rota).anchors) & set(world.private)
    return Anchored(world.audit, rota)


def test_alice_sees_the_anchors_she_set(alice, world, anchored):
    """The control for the anchor tests below: they assert that anchors are absent, which
    a fixture that set none would satisfy without testing anything."""
    assert world.secret in alice.get(anchored.by_hand).anchors
    assert world.secret in {x.target for x in alice.graph.links(anchored.by_hand)}
    assert set(alice.get(anchored.automatic).anchors) & set(world.private)


def test_anchors_of_a_public_memory_leave_out_private_targets(reader, world, anchored):
    for memory_id in (anchored.by_hand, anchored.automatic):
        assert not set(reader.get(memory_id).anchors) & set(world.private)
    assert_hidden(world, reader.list(scope="all", limit=0))
    assert_hidden(world, reader.search("vault audit"))
    assert_hidden(world, reader.recall("vault passphrase rotation audit"))


def test_the_anchor_filters_count_only_anchors_the_reader_may_see(reader, world, anchored):
    everything = reader.list(scope="all", limit=0)
    expected = {r.id for r in everything if set(r.anchors) - set(world.private)}
    assert {r.id for r in reader.list(has_anchors=True, scope="all", limit=0)} == expected
    missing = {r.id for r in reader.list(missing_anchors=True, scope="all", limit=0)}
    assert missing == {r.id for r in everything} - expected


def test_auto_anchor_by_another_reader_neither_names_nor_prunes_a_private_anchor(
    alice, reader, world, anchored
):
    kept = set(alice.get(anchored.automatic).anchors) & set(world.private)
    assert_hidden(world, reader.auto_anchor(anchored.automatic, dry_run=True))
    assert_hidden(world, reader.auto_anchor(dry_run=True))
    reader.auto_anchor(anchored.automatic)
    reader.update(anchored.automatic, append=" Twice a year.")  # new content re-anchors
    assert set(alice.get(anchored.automatic).anchors) & set(world.private) == kept


def test_entities_named_only_privately_do_not_exist_for_another_reader(reader, world):
    assert_hidden(world, reader.graph.entities(limit=0))
    for kind in ("code", "person_or_name", "tag"):
        assert_hidden(world, reader.graph.entities(kind=kind, limit=0))
    for name in ("ZanzibarLedger", "zanzibar_ledger", "Zanzibar Ledger"):
        with pytest.raises(NotFound):
            reader.graph.entity(name)
        with pytest.raises(NotFound):
            reader.graph.mentioning(name)
        with pytest.raises(NotFound):
            reader.graph.merge_entities(name, "VaultAudit")


def test_tags_of_private_memories_are_not_listed(reader, world):
    tags = reader.registries.tags()
    assert "vault" not in tags  # only `secret` carries it
    assert_hidden(world, tags)
    assert_hidden(world, reader.registries.tags("fact"))


def test_stats_count_only_what_the_reader_may_see(alice, reader, world):
    """Decision: stats count the memories the reader may see, their versions and the
    links between two of them; never a private memory of someone else."""
    stats = reader.stats()
    listed = reader.list(scope="all", include_superseded=True, limit=0,
                         include_private=reader.agent is not None)  # fmt: skip
    assert stats.total == len(listed) == (3 if reader.agent == BOB else 2)
    assert (stats.live, stats.versions, stats.links) == (stats.total, 0, 0)
    assert sum(stats.by_scope.values()) == sum(stats.by_kind.values()) == stats.live
    mine = alice.stats()  # the control: her own private memories count for her
    assert (mine.total, mine.live, mine.superseded, mine.versions, mine.links) == (8, 7, 1, 2, 3)
    assert_hidden(world, stats)
    assert_hidden(world, reader.admin.doctor())
    assert reader.registries.usage("source_agent", ALICE) == 1  # `audit`, her only public memory
    assert alice.registries.usage("source_agent", ALICE) == 7


def test_journal_leaves_out_lines_about_another_owners_private_memories(reader, world):
    entries = reader.journal(limit=1000)
    assert world.audit in {e.memory_id for e in entries}
    assert not {e.memory_id for e in entries} & set(world.private)


def test_journal_of_a_private_id_reads_as_an_id_never_used(reader, world):
    assert reader.journal(NEVER_USED_ID) == []
    for memory_id in world.private:
        assert reader.journal(memory_id) == []


# ---- another reader cannot change a private memory ------------------------------------------

WRITES: list[Any] = [
    pytest.param(lambda m, w: m.update(w.secret, title="Hijacked"), id="update-title"),
    pytest.param(lambda m, w: m.update(w.secret, append=" more"), id="update-append"),
    pytest.param(
        lambda m, w: m.update(w.secret, visibility="public", force=True), id="make-public"
    ),
    pytest.param(
        lambda m, w: m.update(w.secret, private=True, owner="bob", force=True), id="take-over"
    ),
    pytest.param(lambda m, w: m.update(w.audit, add_anchors=[w.secret]), id="anchor-to-it"),
    pytest.param(lambda m, w: m.restore(w.secret, 1), id="restore"),
    pytest.param(lambda m, w: m.supersede(w.secret, "Replaced"), id="supersede"),
    pytest.param(lambda m, w: m.invalidate(w.secret, "wrong"), id="invalidate"),
    pytest.param(lambda m, w: m.retire(w.secret), id="retire"),
    pytest.param(lambda m, w: m.merge([w.secret], "Merged"), id="merge"),
    pytest.param(lambda m, w: m.merge([w.secret, w.new], "Merged"), id="merge-two"),
    pytest.param(lambda m, w: m.delete(w.secret), id="delete"),
    pytest.param(lambda m, w: m.forget(w.secret, "gone"), id="forget"),
    pytest.param(lambda m, w: m.reinforce(w.secret), id="reinforce"),
    pytest.param(lambda m, w: m.feedback(w.secret, applied=False), id="feedback"),
    pytest.param(lambda m, w: m.lifecycle.reviewed(w.secret), id="reviewed"),
    pytest.param(lambda m, w: m.graph.link(w.audit, w.secret, "supports"), id="link-to"),
    pytest.param(lambda m, w: m.graph.link(w.secret, w.audit, "related"), id="link-from"),
    pytest.param(lambda m, w: m.graph.contradict(w.audit, w.secret, "no"), id="contradict"),
    pytest.param(lambda m, w: m.auto_anchor(w.secret), id="auto-anchor"),
    pytest.param(lambda m, w: m.auto_anchor(w.secret, dry_run=True), id="auto-anchor-dry"),
    pytest.param(lambda m, w: m.add("Pinned", anchors=[w.secret]), id="add-anchored"),
    pytest.param(
        lambda m, w: m.add("Closed", type="thread_closed", thread_id=w.secret), id="close-thread"
    ),
]


@pytest.mark.parametrize("write", WRITES)
def test_writes_to_a_private_memory_by_another_reader_are_not_found(alice, reader, world, write):
    before = (alice.get(world.secret), alice.history(world.secret), alice.graph.links(world.secret))
    rows = reader.stats().total
    with pytest.raises(NotFound) as caught:
        write(reader, world)
    assert_hidden(world, str(caught.value), ids=False)
    after = (alice.get(world.secret), alice.history(world.secret), alice.graph.links(world.secret))
    assert after == before
    assert reader.stats().total == rows


def test_merging_a_private_memory_with_a_public_one_merges_nothing(alice, bob, world):
    # Alice's private memory does not exist for Bob: naming it fails the whole merge,
    # as a typo'd id does, and the error says no more than it would of a typo.
    before = (alice.get(world.secret), alice.get(world.bob_public), alice.stats())
    with pytest.raises(NotFound) as caught:
        bob.merge([world.secret, world.bob_public], "Vault keys rotate quarterly.")
    assert_hidden(world, str(caught.value), ids=False)
    assert (alice.get(world.secret), alice.get(world.bob_public), alice.stats()) == before


def test_the_write_policy_never_matches_another_owners_private_memory(alice, bob, world):
    """Restating or negating Alice's private text is a new memory of Bob's: no exact
    duplicate, no refresh, no contradiction link, no conflict naming her memory."""
    links = alice.graph.links(world.secret)
    texts = (
        alice.get(world.secret).body,
        "The quokka vault passphrase never hides under the marmalade jar.",
    )
    for text in texts:
        result = bob.add(text, session_id="s-vault")
        assert result.status in (WriteStatus.ADDED, WriteStatus.CONTRADICTION)
        assert result.id not in world.private
        assert result.duplicate_of not in world.private
        assert result.contradicts not in world.private
        assert not {i for i, _ in result.potential_conflicts} & set(world.private)
    assert alice.graph.links(world.secret) == links


# ---- changing visibility ---------------------------------------------------------------------


def test_making_a_private_memory_public_needs_force(alice, bob, world):
    with pytest.raises(Invalid, match="--force"):
        alice.update(world.secret, visibility="public")
    assert alice.get(world.secret).visibility is Visibility.PRIVATE
    with pytest.raises(NotFound):
        bob.get(world.secret)
    alice.update(world.secret, visibility="public", force=True)
    assert bob.get(world.secret).visibility is Visibility.PUBLIC
    assert world.secret in {h.record.id for h in bob.search("quokka marmalade")}


def test_a_private_memory_is_never_given_to_another_owner(alice, bob, world):
    for force in (False, True):
        with pytest.raises(Invalid, match="owner 'bob' refused"):
            alice.update(world.secret, private=True, owner=BOB, force=force)
    with pytest.raises(NotFound):
        bob.get(world.secret)
    assert alice.get(world.secret).owner == ALICE


def test_making_a_public_memory_private_hides_it_at_once_and_in_the_past(alice, bob):
    memory_id = alice.add("The heron count is eleven.").id
    alice.update(memory_id, content="The heron count is twelve.")
    assert bob.get(memory_id).body == "The heron count is twelve."
    then = utcnow()
    alice.update(memory_id, private=True)
    with pytest.raises(NotFound):
        bob.get(memory_id)
    with pytest.raises(NotFound):
        bob.get(memory_id, as_of=then)
    assert memory_id not in {h.record.id for h in bob.search("heron", include_superseded=True)}
    alice.restore(memory_id, 1)  # who may see it is never rolled back with the content
    assert alice.get(memory_id).visibility is Visibility.PRIVATE
    with pytest.raises(NotFound):
        bob.get(memory_id)
    with pytest.raises(NotFound):
        bob.history(memory_id)


def test_a_successor_of_a_private_memory_stays_private(bob, world):
    for memory_id in (world.old, world.new):
        with pytest.raises(NotFound):
            bob.get(memory_id)


# ---- the command line, run as each agent ------------------------------------------------------

Run = Callable[..., Result]


@pytest.fixture
def cli_as(cli_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Run:
    """`memlane ARGS...` in-process as an agent (None: no MEMLANE_AGENT), from a checkout
    of project `proj` on branch `main` (the API's context, so default scopes agree)."""
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True, exist_ok=True)
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    monkeypatch.chdir(project)

    def invoke(agent: str | None, *args: str) -> Result:
        env: dict[str, str | None] = {**cli_env, "MEMLANE_AGENT": agent}
        return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)

    return invoke


@pytest.fixture(params=[BOB, None], ids=["bob", "nobody"])
def other(request: pytest.FixtureRequest) -> str | None:
    """The agent another reader runs the CLI as."""
    agent: str | None = request.param
    return agent


def fill(args: tuple[str, ...], world: World) -> list[str]:
    values = {
        "{secret}": world.secret,
        "{audit}": world.audit,
        "{new}": world.new,
        "{before}": world.before.isoformat(),
    }
    return [values.get(a, a) for a in args]


def printed(result: Result, argv: list[str]) -> str:
    """What a command printed on stdout, less the query and --target its JSON echoes."""
    if "--json" not in argv or not result.stdout:
        return result.stdout
    payload: Any = json.loads(result.stdout)
    if isinstance(payload, dict):
        payload.pop("query", None)
        for echoed in ("query", "target"):
            payload.get("explain", {}).pop(echoed, None)
    return json.dumps(payload, ensure_ascii=False)


def not_found(world: World, result: Result) -> None:
    """Exit 1, nothing on stdout, one line on stderr that gives nothing away."""
    assert result.exit_code == 1, (result.exit_code, result.stdout, result.stderr)
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "no memory" in result.stderr or "none of the memories" in result.stderr
    assert_hidden(world, result.stderr, ids=False)


def test_cli_alice_sees_her_private_memory(cli_as, world):
    shown = cli_as(ALICE, "show", world.secret[:-1], "--json")
    assert shown.exit_code == 0, shown.stderr
    assert json.loads(shown.stdout)["body"].startswith(SECRET_BODY)
    mine = cli_as(ALICE, "list", "--mine", "--json")
    assert world.secret in mine.stdout
    found = cli_as(ALICE, "search", "quokka", "--include-private", "--json")
    assert [r["id"] for r in json.loads(found.stdout)["results"]] == [world.secret]
    recalled = cli_as(ALICE, "recall", "quokka passphrase", "--include-private", "--json")
    assert world.secret in recalled.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("show", "{secret}"),
        ("show", "{secret}", "--json"),
        ("show", "{secret}", "--content-only"),
        ("show", "{secret}", "--as-of", "{before}"),
        ("history", "{secret}"),
        ("history", "{new}", "--json"),
        ("restore", "{secret}", "--list"),
        ("embed", "{secret}"),
        ("links", "list", "{secret}"),
        ("links", "list", "{secret}", "--json"),
    ],
)
def test_cli_reads_of_a_private_id_are_not_found(cli_as, other, world, args):
    not_found(world, cli_as(other, *fill(args, world)))
    prefix = [a[:-1] if a == world.secret else a for a in fill(args, world)]
    not_found(world, cli_as(other, *prefix))


CLI_READS = [
    ("list",),
    ("list", "--json"),
    ("list", "--include-private", "--json", "--limit", "0"),
    ("list", "--mine", "--json"),
    ("list", "--scope", "all", "--include-private", "--include-superseded", "--limit", "0"),
    ("list", "--as-of", "{before}", "--include-private", "--json"),
    ("list", "--session-id", "s-vault", "--include-private", "--json"),
    ("list", "--tags", "quokka-tag", "--include-private", "--json"),
    ("list", "--sort", "importance", "--include-private"),
    ("search", "quokka marmalade", "--include-private", "--scope", "all"),
    ("search", "quokka", "--json", "--include-private", "--include-superseded"),
    ("search", "vault passphrase", "--include-private", "--json"),
    ("search", "ZanzibarLedger", "--mode", "hybrid", "--include-private", "--json"),
    ("search", SECRET_BODY, "--mode", "vector", "--include-private", "--json"),
    ("search", SECRET_BODY, "--semantic"),
    ("search", "pelican roster", "--as-of", "{before}", "--json"),
    ("search", "platypus", "--include-superseded", "--scope", "all", "--include-private"),
    ("search", "quok*", "--mine", "--json"),
    ("recent",),
    ("recent", "--all-types", "--scope", "all", "--json"),
    ("recent", "--sort", "resonance", "--limit", "1000"),
    ("recall", "vault audits monday"),
    ("recall", "vault audits monday", "--json"),
    ("recall", "vault audits monday", "--passive", "--json"),
    ("recall", "quokka passphrase", "--include-private", "--scope", "all", "--json"),
    ("recall", "ocelot cipher", "--include-private", "--include-superseded", "--json"),
    ("recall", "vault", "--max-tokens", "40", "--include-private"),
    ("recall", "vault audits monday", "--explain"),
    ("recall", "vault audits monday", "--explain", "--json", "--include-private"),
    ("recall", "quokka", "--explain", "--target", "{secret}"),
    ("recall", "quokka", "--explain", "--target", "marmalade", "--json"),
    ("recall", "quokka", "--explain", "--target", "Quokka vault passphrase"),
    ("recall", "quokka", "--explain", "--target", "{secret}", "--passive", "--include-private"),
    ("links", "list", "{audit}"),
    ("links", "list", "{audit}", "--json"),
    ("auto-anchor", "{audit}", "--dry-run", "--detailed", "--threshold", "0"),
    ("entities", "list", "--limit", "0"),
    ("entities", "list", "--kind", "code", "--json"),
    ("tags", "list"),
    ("tags", "list", "--json"),
    ("stats",),
    ("stats", "--json"),
    ("doctor", "--json"),
]


@pytest.mark.parametrize("args", CLI_READS, ids=lambda a: " ".join(a)[:60])
def test_cli_reads_never_show_another_owners_private_memories(cli_as, other, world, args):
    argv = fill(args, world)
    result = cli_as(other, *argv)
    needs_id = other is None and ("--include-private" in argv or "--mine" in argv)
    assert result.exit_code == (2 if needs_id else 0), (result.stdout, result.stderr)
    assert_hidden(world, printed(result, argv))
    assert_hidden(world, result.stderr)
    assert HINT not in result.stdout
    if world.secret in argv and not needs_id:
        assert "not_in_store" in result.stdout


def test_cli_explain_of_a_private_id_reads_as_an_id_never_used(cli_as, other, world):
    def verdicts(target: str) -> Any:
        result = cli_as(other, "recall", "quokka", "--explain", "--target", target, "--json")
        assert result.exit_code == 0, result.stderr
        payload: Any = json.loads(result.stdout)
        return payload["explain"]["verdicts"]

    assert verdicts(world.secret) == verdicts(NEVER_USED_ID)
    text = cli_as(other, "recall", "quokka", "--explain", "--target", world.secret)
    assert "not_in_store" in text.stdout
    assert_hidden(world, text.stdout + text.stderr)


def test_cli_entity_named_only_privately_is_not_found(cli_as, other, world):
    for args in (
        ("entities", "show", "ZanzibarLedger"),
        ("entities", "show", "zanzibar_ledger", "--json"),
        ("entities", "merge", "ZanzibarLedger", "VaultAudit", "--confirm"),
    ):
        result = cli_as(other, *args)
        assert result.exit_code == 1, (result.stdout, result.stderr)
        assert result.stdout == ""
        assert "no entity" in result.stderr


def test_cli_journal_leaves_out_another_owners_private_memories(cli_as, other, world):
    listing = cli_as(other, "journal", "--limit", "1000", "--json")
    assert listing.exit_code == 0
    assert world.audit in listing.stdout
    assert_hidden(world, listing.stdout)
    by_id = cli_as(other, "journal", world.secret, "--json")
    assert by_id.exit_code == 0
    assert json.loads(by_id.stdout) == []


def test_cli_agent_counts_are_what_the_reader_may_see(alice, cli_as, other, world):
    """Decision: `agents show` counts the memories the agent wrote that the reader may
    see: Alice's private ones count for her alone."""
    assert cli_as(ALICE, "agents", "add", ALICE).exit_code == 0
    shown = cli_as(other, "agents", "show", ALICE, "--json")
    assert shown.exit_code == 0, shown.stderr
    assert json.loads(shown.stdout)["memories"] == 1
    assert_hidden(world, shown.stdout + shown.stderr)
    hers = cli_as(ALICE, "agents", "show", ALICE, "--json")
    assert json.loads(hers.stdout)["memories"] == alice.registries.usage("source_agent", ALICE) == 7


def test_cli_links_touching_a_private_memory_cannot_be_deleted(alice, cli_as, other, world):
    links = alice.graph.links(world.secret)
    for link in links:
        result = cli_as(other, "links", "delete", link.id or "")
        assert result.exit_code == 1, (result.stdout, result.stderr)
        assert result.stdout == ""
        assert_hidden(world, result.stderr)
    assert alice.graph.links(world.secret) == links


def test_cli_anchors_of_a_public_memory_leave_out_private_targets(cli_as, other, world, anchored):
    for args in (
        ("show", anchored.by_hand, "--json"),
        ("show", anchored.automatic, "--json"),
        ("list", "--json", "--scope", "all"),
        ("search", "vault audit", "--json"),
        ("recall", "vault passphrase rotation audit", "--json"),
    ):
        result = cli_as(other, *args)
        assert result.exit_code == 0, result.stderr
        assert_hidden(world, printed(result, list(args)))


def test_cli_auto_anchor_by_another_agent_neither_names_nor_prunes_a_private_anchor(
    alice, cli_as, world, anchored
):
    kept = set(alice.get(anchored.automatic).anchors) & set(world.private)
    dry = cli_as(BOB, "auto-anchor", anchored.automatic, "--dry-run", "--detailed")
    assert dry.exit_code == 0, dry.stderr
    assert_hidden(world, dry.stdout + dry.stderr)
    updated = cli_as(BOB, "update", anchored.automatic, "--append-content", " Twice a year.")
    assert updated.exit_code == 0, updated.stderr
    assert set(alice.get(anchored.automatic).anchors) & set(world.private) == kept


CLI_WRITES = [
    ("update", "{secret}", "--title", "Hijacked"),
    ("update", "{secret}", "--visibility", "public", "--force"),
    ("update", "{secret}", "--private", "--owner", "bob", "--force"),
    ("update", "{audit}", "--add-anchor", "{secret}"),
    ("edit", "{secret}", "--find", "quokka", "--replace", "wallaby"),
    ("append", "{secret}", "--content", "more"),
    ("prepend", "{secret}", "--content", "more"),
    ("restore", "{secret}", "--version", "1"),
    ("supersede", "{secret}", "--content", "Replaced"),
    ("invalidate", "{secret}", "--reason", "wrong"),
    ("retire", "{secret}"),
    ("merge", "{secret}", "--into", "Merged"),
    ("delete", "{secret}"),
    ("delete", "{secret}", "--json"),
    ("forget", "{secret}", "--reason", "gone"),
    ("reinforce", "{secret}"),
    ("feedback", "{secret}", "--violated"),
    ("reviewed", "{secret}"),
    ("fact-session", "{secret}"),
    ("add", "--type", "thread_closed", "--content", "Closed", "--thread-id", "{secret}"),
    ("links", "add", "--from", "{audit}", "--to", "{secret}"),
    ("links", "add", "--from", "{secret}", "--to", "{audit}", "--type", "supports"),
    ("contradict", "{audit}", "{secret}", "--reason", "disagree"),
    ("auto-anchor", "{secret}"),
    ("auto-anchor", "{secret}", "--dry-run", "--json"),
]


@pytest.mark.parametrize("args", CLI_WRITES, ids=lambda a: " ".join(a[:4]))
def test_cli_writes_to_a_private_memory_by_another_agent_are_not_found(
    alice, cli_as, other, world, args
):
    before = (alice.get(world.secret), alice.history(world.secret), alice.stats())
    argv = fill(args, world)
    not_found(world, cli_as(other, *argv))
    not_found(world, cli_as(other, *[a[:-1] if a == world.secret else a for a in argv]))
    assert (alice.get(world.secret), alice.history(world.secret), alice.stats()) == before


# ---- the hidden-private hint ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "count"),
    [
        (("search", "vault"), ALICE_PRIVATE_VAULT),
        (("search", "vault", "--json"), ALICE_PRIVATE_VAULT),
        (("search", "quokka marmalade"), 1),
        (("list",), 5),
        (("list", "--json"), 5),
    ],
)
def test_cli_hint_tells_the_owner_on_stderr_only(cli_as, world, args, count):
    result = cli_as(ALICE, *args)
    assert result.exit_code == 0, result.stderr
    assert f"{count} {HINT}" in result.stderr
    assert "--include-private" in result.stderr
    assert HINT not in result.stdout
    assert "private entries" not in result.stdout
    assert not set(world.private) & set(result.stdout.split())
    if "--json" in args:
        payload: Any = json.loads(result.stdout)
        assert HINT not in json.dumps(payload)
        assert not {r["id"] for r in payload["results"]} & set(world.private)


@pytest.mark.parametrize(
    "args",
    [
        ("search", "vault", "--include-private"),
        ("search", "vault", "--mine", "--json"),
        ("list", "--include-private"),
        ("list", "--mine", "--json"),
        ("search", "wombat"),
        ("recall", "vault"),
        ("recall", "vault", "--json"),
    ],
)
def test_cli_hint_is_silent_when_nothing_of_yours_is_hidden(cli_as, world, args):
    result = cli_as(ALICE, *args)
    assert result.exit_code == 0, result.stderr
    assert HINT not in result.stdout + result.stderr


def test_cli_hint_never_counts_another_owners_private_memories(cli_as, world):
    """Bob's hint counts his own private memory (wombat), never Alice's four."""
    search = cli_as(BOB, "search", "vault")
    assert f"1 {HINT}" in search.stderr
    assert HINT not in search.stdout
    for args in (("search", "quokka"), ("search", "marmalade", "--json"), ("list", "--tags", "x")):
        result = cli_as(BOB, *args)
        assert result.exit_code == 0
        assert HINT not in result.stdout + result.stderr
    for args in (("search", "vault"), ("list",), ("search", "quokka", "--json")):
        result = cli_as(None, *args)
        assert result.exit_code == 0
        assert HINT not in result.stdout + result.stderr


def test_api_hidden_count_is_the_readers_own(alice, bob, nobody, world):
    assert alice.hidden_private_count(alice.filters(), "vault") == ALICE_PRIVATE_VAULT
    assert bob.hidden_private_count(bob.filters(), "vault") == 1
    assert bob.hidden_private_count(bob.filters(), "quokka") == 0
    assert nobody.hidden_private_count(nobody.filters(), "vault") == 0


# ---- changing visibility from the command line -------------------------------------------------


def test_cli_making_a_private_memory_public_needs_force(cli_as, world):
    refused = cli_as(ALICE, "update", world.secret, "--visibility", "public")
    assert refused.exit_code == 2
    assert refused.stdout == ""
    assert "--force" in refused.stderr
    kept = cli_as(ALICE, "show", world.secret, "--json")
    assert json.loads(kept.stdout)["visibility"] == "private"
    assert cli_as(BOB, "show", world.secret).exit_code == 1
    done = cli_as(ALICE, "update", world.secret, "--visibility", "public", "--force")
    assert done.exit_code == 0, done.stderr
    shown = cli_as(BOB, "show", world.secret, "--json")
    assert shown.exit_code == 0
    assert json.loads(shown.stdout)["visibility"] == "public"


def test_cli_a_private_memory_is_never_given_away(cli_as, world):
    for force in ((), ("--force",)):
        refused = cli_as(ALICE, "update", world.secret, "--private", "--owner", BOB, *force)
        assert refused.exit_code == 2
        assert refused.stdout == ""
        assert refused.stderr.count("\n") == 1 and "owner 'bob' refused" in refused.stderr
    assert cli_as(BOB, "show", world.secret).exit_code == 1
