"""Typed links: links add/list/delete and contradict, through the API
and the CLI, with what a link does to trust and importance."""

from __future__ import annotations

from pathlib import Path

import pytest

from memlane import Context, Invalid, Memory, NotFound
from memlane.model import LinkType


@pytest.fixture
def other(db_path: Path):
    """A second agent on the same store and context."""
    with Memory.open(db_path, agent="other", context=Context("proj", "main")) as memory:
        yield memory


def two(mem: Memory) -> tuple[str, str]:
    a = mem.add("Billing retries failed charges three times.", importance=5).id
    b = mem.add("The payments gateway rate-limits retries per card.", importance=5).id
    return a, b


def test_a_link_reinforces_its_target_once(mem):
    a, b = two(mem)
    link = mem.graph.link(a, b, "extends", "same retry path")
    assert (link.source, link.target, link.type, link.reason) == (
        a,
        b,
        LinkType.EXTENDS,
        "same retry path",
    )
    assert link.id and link.id.startswith("l-")
    assert mem.get(b).importance == 6 and mem.get(a).importance == 5
    assert mem.get(b).activation_count == 1 and mem.get(b).last_activated  # as reinforce does
    again = mem.graph.link(a, b, "extends", "another reason")
    assert again == link  # re-adding is a no-op
    assert mem.get(b).importance == 6
    assert [x.type for x in mem.graph.links(a)] == [LinkType.EXTENDS]


def test_reinforcement_caps_and_can_be_skipped(mem):
    a, b = two(mem)
    c = mem.add("Card networks cap daily retries.", importance=10).id
    mem.graph.link(a, c, "related")
    assert mem.get(c).importance == 10
    mem.graph.link(b, a, "derives", reinforce=False)
    assert mem.get(a).importance == 5


def test_symmetric_links_are_stored_both_ways_and_deleted_both_ways(mem):
    a, b = two(mem)
    link = mem.graph.link(a, b, "related")
    both = {(x.source, x.target) for x in mem.graph.links(a)}
    assert both == {(a, b), (b, a)}
    assert mem.graph.unlink(link.id).type is LinkType.RELATED
    assert mem.graph.links(a) == [] and mem.graph.links(b) == []
    with pytest.raises(NotFound):
        mem.graph.unlink(link.id)


def test_supports_raises_trust_and_contradict_lowers_both(mem):
    a, b = two(mem)
    mem.graph.contradict(a, b, "the gateway retries, not billing")
    assert mem.get(a).trust_score == pytest.approx(0.9)
    assert mem.get(b).trust_score == pytest.approx(0.9)
    assert mem.get(b).importance == 5  # a contradiction reinforces nothing
    c = mem.add("Retries are logged in the billing audit table.").id
    mem.graph.link(c, a, "supports", "the audit shows three attempts")
    assert mem.get(a).trust_score == pytest.approx(0.95)
    with pytest.raises(Invalid, match="reason"):
        mem.graph.contradict(a, c, "  ")


def test_bad_links_are_refused_and_write_nothing(mem):
    a, b = two(mem)
    with pytest.raises(Invalid, match="itself"):
        mem.graph.link(a, a, "related")
    with pytest.raises(NotFound):
        mem.graph.link(a, "m-zzzzzzzz", "related")
    with pytest.raises(Invalid, match="link type"):
        mem.graph.link(a, b, "relates")
    with pytest.raises(Invalid, match="anchor"):
        mem.graph.link(a, b, "anchor")
    assert mem.graph.links(a) == [] and mem.get(b).importance == 5


def test_links_to_memories_another_agent_may_not_see_are_left_out(mem, other):
    public = mem.add("The retry budget is documented in the runbook.").id
    private = mem.add("My own notes on the retry budget.", private=True).id
    mem.graph.link(public, private, "related")
    assert {(x.source, x.target) for x in mem.graph.links(public)} == {
        (public, private),
        (private, public),
    }
    assert other.graph.links(public) == []
    [link] = [x for x in mem.graph.links(public) if x.source == public]
    with pytest.raises(NotFound):
        other.graph.unlink(link.id)
    assert len(mem.graph.links(public)) == 2


def test_cli_links_add_list_delete_and_contradict(run):
    a = run("add", "--content", "Billing retries failed charges.", "--json").json()["id"]
    b = run("add", "--content", "The gateway rate-limits retries.", "--json").json()["id"]
    added = run("links", "add", "--from", a, "--to", b, "--type", "example_of", "--json").json()
    assert (added["source"], added["target"], added["type"]) == (a, b, "example_of")
    listed = run("links", "list", a, "--json").json()
    assert listed["count"] == 1 and listed["links"][0]["id"] == added["id"]
    assert added["id"] in run("links", "list", b).stdout
    gone = run("links", "delete", added["id"], "--json").json()
    assert gone["deleted"]["id"] == added["id"]
    assert run("links", "list", a).stdout.strip() == "no links"
    refused = run("links", "add", "--from", a, "--to", a)
    assert refused.exit_code == 2 and "itself" in refused.stderr
    missing = run("links", "delete", "l-999999")
    assert missing.exit_code == 1 and "no link" in missing.stderr
    no_reason = run("contradict", a, b)
    assert no_reason.exit_code == 2 and "--reason" in no_reason.stderr
    text = run("contradict", a, b, "--reason", "the gateway retries, not billing")
    assert text.exit_code == 0 and "Contradiction recorded" in text.stdout
    shown = run("show", a, "--json").json()
    assert shown["trust_score"] == pytest.approx(0.9)


def test_the_graph_methods_old_names_still_work_with_a_warning(mem):
    a = mem.add("The billing service owns invoices.").id
    b = mem.add("Invoices are archived after seven years.").id
    with pytest.warns(DeprecationWarning, match=r"Memory\.link is now Memory\.graph\.link"):
        made = mem.link(a, b, "supports")
    assert mem.graph.links(a) == [made]
