"""Auto-anchors: neighbours in [0.75, 0.95] become anchor links on every
write, at most 5; anchors that fell out of the band are pruned; person-set anchors stay.
Cosine with vectors, token Jaccard without."""

from __future__ import annotations

import pytest

from memlane.model import LinkType
from memlane.write.anchors import AUTO_REASON, plan_anchors, text_jaccard

POSTGRES = "Use Postgres for the billing service database."
MYSQL = "Use MySQL for the billing service database."  # hash cosine 0.83, Jaccard 0.75


def test_the_plan_keeps_the_band_best_first_and_prunes_the_rest():
    similar = {"a": 0.80, "b": 0.99, "c": 0.76, "d": 0.50, "e": 0.90, "f": 0.85}
    plan = plan_anchors(similar, current={"d": 0.8, "a": 0.8, "gone": None}, max_anchors=3)
    assert plan.add == (("e", 0.9), ("f", 0.85))
    assert plan.keep == (("a", 0.8),)
    assert plan.prune == ("d", "gone")  # out of the band now; no longer similar at all
    assert plan_anchors({"a": 0.8}, {}, max_anchors=0).add == ()
    assert not plan_anchors({"a": 0.8}, {"a": 0.8}).changes


def test_jaccard_of_words():
    assert text_jaccard(POSTGRES, MYSQL) == pytest.approx(6 / 8)
    assert text_jaccard("", "") == 0.0 and text_jaccard("a b", "a b") == 1.0


def auto_anchors(store, memory_id):
    return {
        x.target: x.score
        for x in store.graph.links(memory_id)
        if x.source == memory_id and x.type is LinkType.ANCHOR and x.reason == AUTO_REASON
    }


@pytest.fixture(params=["no vectors", "hash vectors"])
def store(request, mem, vmem):
    return mem if request.param == "no vectors" else vmem


def test_a_write_anchors_its_memory_to_close_neighbours(store):
    old = store.add(POSTGRES).id
    store.add("Lunch is served at noon in the atrium.")
    new = store.add(MYSQL).id
    anchors = auto_anchors(store, new)
    assert list(anchors) == [old] and 0.75 <= anchors[old] <= 0.95
    assert store.get(new).anchors == (old,)


def test_anchors_are_pruned_when_the_content_drifts_and_kept_when_set_by_hand(store):
    old = store.add(POSTGRES).id
    pinned = store.add("The billing service owns the invoices table.").id
    new = store.add(MYSQL, anchors=[pinned]).id
    assert set(store.get(new).anchors) == {old, pinned}
    store.update(new, content="Lunch is served at noon in the atrium.")
    assert auto_anchors(store, new) == {}
    assert store.get(new).anchors == (pinned,)  # a person's anchor is never pruned


def test_no_auto_anchor_skips_it(store):
    old = store.add(POSTGRES).id
    new = store.add(MYSQL, auto_anchor=False).id
    assert auto_anchors(store, new) == {}
    [(memory_id, plan)] = store.auto_anchor(new, dry_run=True)
    assert memory_id == new and [i for i, _ in plan.add] == [old]
    assert auto_anchors(store, new) == {}  # a dry run writes nothing
    store.auto_anchor(new)
    assert list(auto_anchors(store, new)) == [old]


def test_cli_auto_anchor_fill_dry_run_detailed(run):
    ids = [
        run("add", "--content", text, "--no-auto-anchor", "--json").json()["id"]
        for text in (POSTGRES, MYSQL, "Lunch is served at noon in the atrium.")
    ]
    preview = run("auto-anchor", "--dry-run", "--detailed", "--json").json()
    assert preview["dry_run"] and preview["added"] == 2  # each of the two to the other
    assert run("auto-anchor", ids[0], "--dry-run", "--detailed").stdout.count("(0.") == 1
    done = run("auto-anchor", "--fill").stdout
    assert done.strip().endswith("3 memories: added 2 anchors, pruned 0")
    again = run("auto-anchor", "--fill", "--json").json()
    assert [m["id"] for m in again["memories"]] == [ids[2]]  # only the unanchored one
    refused = run("auto-anchor", "--threshold", "1.5")
    assert refused.exit_code == 2 and "threshold" in refused.stderr
    edited = run("edit", ids[1], "--find", "MySQL", "--replace", "Lunch", "--no-auto-anchor")
    assert edited.exit_code == 0
    assert run("links", "list", ids[1], "--json").json()["count"] == 2  # kept: skipped
