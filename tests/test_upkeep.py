"""Upkeep: `consolidate --prune` retires what nobody uses, `sweep` removes the hooks'
stale files, the capture log records what the hooks captured (and `import captures`
replays it), and the session-start hook runs what is due in the background."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memlane.lifecycle.prune import EPHEMERAL, UNUSED, PruneRules, rule_for
from memlane.model import Kind, Record, ResonanceType, Signal, State, replace

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
OLD = NOW - timedelta(days=40)


def rec(**fields: Any) -> Record:
    """A live record written 40 days before NOW, never used."""
    base: dict[str, Any] = {
        "id": "m-1", "scope": "global", "title": "t", "body": "b", "kind": Kind.FACT,
        "category": "fact", "created_at": OLD, "updated_at": OLD, "valid_from": OLD,
        "version_from": OLD, "dedup_hash": "h",
    }  # fmt: skip
    return Record(**{**base, **fields})


UNGROUNDED = {"signal": Signal.NONE, "confidence": 0.2, "importance": 3}
RULES = PruneRules(30)


# ---- consolidate --prune: the rules ------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "rule"),
    [
        (UNGROUNDED, UNUSED),
        ({**UNGROUNDED, "created_at": NOW - timedelta(days=10)}, None),  # too young
        ({**UNGROUNDED, "signal": None}, None),  # its author's deliberate note
        ({**UNGROUNDED, "signal": Signal.USER}, None),  # grounded
        ({**UNGROUNDED, "confidence": 0.6}, None),
        ({**UNGROUNDED, "importance": 6}, None),  # marked as mattering
        ({**UNGROUNDED, "retrieval_count": 1}, None),
        ({**UNGROUNDED, "applied_count": 1}, None),
        ({**UNGROUNDED, "surfaced_count": 2, "last_surfaced": NOW - timedelta(days=3)}, None),
        ({**UNGROUNDED, "surfaced_count": 2, "last_surfaced": NOW - timedelta(days=35)}, UNUSED),
        ({**UNGROUNDED, "resonance_type": ResonanceType.FOUNDATIONAL}, None),
        ({**UNGROUNDED, "superseded_at": OLD}, None),  # not live: nothing to retire
        ({"ephemeral": True}, EPHEMERAL),
        ({"resonance_type": ResonanceType.SESSION}, EPHEMERAL),
        ({"ephemeral": True, "last_retrieved": NOW - timedelta(days=2)}, None),
        ({"ephemeral": True, "updated_at": NOW - timedelta(days=2)}, None),
        ({"ephemeral": True, "kind": Kind.THREAD, "state": State.OPEN}, None),
        ({"ephemeral": True, "importance": 8}, None),
        ({}, None),  # an ordinary old note
    ],
)
def test_prune_rules(fields, rule):
    assert rule_for(rec(**fields), NOW, RULES) == rule


def aged(mem, memory_id: str, days: float, **fields: Any) -> None:
    """Move a memory's creation and last change `days` into the past."""
    record = mem.store.get(memory_id)
    back = timedelta(days=days)
    with mem.store.write() as w:
        w.replace(replace(record, created_at=record.created_at - back,
                          updated_at=record.updated_at - back, **fields), None)  # fmt: skip


def test_prune_retires_by_the_rules_and_a_dry_run_writes_nothing(mem, run):
    unused = mem.add("Maybe the flaky test is a timezone issue.", signal="none", importance=3)
    used = mem.add("Maybe the cache key misses the locale.", signal="none", importance=3)
    noted = mem.add("The staging database is called orchid.", importance=3)
    young = mem.add("Perhaps the build cache is cold.", signal="none", importance=3)
    idle = mem.add("Chose Typst over mdBook for the docs.", type="decision")
    for record in (unused, noted, idle):
        aged(mem, record.id, 45)
    aged(mem, used.id, 45, retrieval_count=1)  # recalled once: used
    before = run("export", "--include-superseded").stdout
    dry = run("consolidate", "--prune", "--dry-run", "--json")
    assert dry.exit_code == 0, dry.stderr
    planned = dry.json()
    assert planned["status"] == "planned"
    assert {p["id"]: p["rule"] for p in planned["pruned"]} == {
        unused.id: "unused",
        idle.id: "ephemeral",
    }
    assert run("export", "--include-superseded").stdout == before  # nothing written
    done = run("consolidate", "--prune", "--json").json()
    assert {p["id"] for p in done["pruned"]} == {unused.id, idle.id}
    retired = mem.get(unused.id)
    assert not retired.live and retired.superseded_by is None
    assert retired.supersede_reason.startswith("pruned")
    assert all(mem.get(i.id).live for i in (used, noted, young))
    text = run("consolidate", "--prune", "--force")
    assert text.exit_code == 0 and "pruned" not in text.stdout  # nothing left to prune
