"""forget: a memory, or a whole scope, removed from every table and index,
with no trace of its text left in the database file after VACUUM."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from memlane import Context, Invalid, Memory, NotFound

TOKEN = "Quokkazanzibar"  # a word nothing else in the store contains
OTHER = "Platypusvienna"


def _files(db: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in db.parent.glob(db.name + "*") if p.is_file()}


def _vacuumed(db: Path) -> dict[str, bytes]:
    conn = sqlite3.connect(db)
    conn.execute("VACUUM")
    conn.close()
    return _files(db)


@pytest.mark.sqlite_only  # reads the file's bytes after VACUUM
def test_forget_leaves_no_trace_of_the_text_anywhere(vmem, db_path):
    keep = vmem.add(f"{OTHER} runs the billing service.", title="Billing").id
    doomed = vmem.add(
        f"{TOKEN} said the deploy key rotates monthly. Ask {TOKEN} Ltd about it.",
        title=f"{TOKEN} and the deploy key", tags=[f"team-{TOKEN.lower()}"], importance=9,
        wake_phrases=[f"{TOKEN} rotation"], anchors=[keep],
    ).id  # fmt: skip
    vmem.update(doomed, append=f" Later {TOKEN} moved to the platform team.")
    vmem.graph.link(doomed, keep, "related", reason="same service area")
    begun = vmem.wake.begin(wake=1, model="m")  # the guess log quotes the title
    step = vmem.wake.respond(begun["session"], doomed, f"{TOKEN} rotation")
    assert step["status"] == "shown"
    vmem.search(TOKEN, mode="hybrid")  # the vector index file is written
    assert any(TOKEN in e.name for e in vmem.graph.entities())  # an entity only it names
    assert any(TOKEN.encode() in data for data in _files(db_path).values())
    vmem.forget(doomed, reason="asked to")
    with pytest.raises(NotFound):
        vmem.get(doomed)
    assert vmem.get(keep).body.startswith(OTHER)
    assert vmem.journal(doomed)[0].operation == "forget"
    assert vmem.journal(doomed)[0].detail == "asked to"
    assert all(TOKEN.lower() not in e.name.lower() for e in vmem.graph.entities())
    assert not vmem.search(TOKEN)
    vmem.close()
    files = _vacuumed(db_path)
    for spelling in (TOKEN, TOKEN.lower(), TOKEN.upper(), TOKEN[:9]):
        leftovers = [name for name, data in files.items() if spelling.encode() in data]
        assert leftovers == [], f"{spelling!r} still in {leftovers}"
    assert any(OTHER.encode() in data for data in files.values())  # the rest is intact
    with Memory.open(db_path, context=Context()) as again:
        assert again.get(keep)


def test_a_ritual_that_walked_a_forgotten_memory_moves_past_it(vmem):
    first = vmem.add("I am the agent.", importance=9, wake_order=1).id
    doomed = vmem.add(f"{TOKEN} detail.", importance=9, wake_order=2).id
    begun = vmem.wake.begin()
    step = vmem.wake.respond(begun["session"], first, "agent")
    vmem.forget(doomed)
    after = vmem.wake.respond(step["session"], doomed, "anything")
    assert after["status"] == "bloom_missing"


@pytest.mark.sqlite_only  # reads the file's bytes after VACUUM
def test_forget_a_whole_scope(db_path):
    with Memory.open(db_path, agent="ada", context=Context("alpha", "main")) as ada:
        a1 = ada.add(f"{TOKEN} alpha fact one.").id
        a2 = ada.add(f"{TOKEN} alpha private plan.", private=True).id
        ada.supersede(a1, f"{TOKEN} alpha fact one, corrected.")
        glob = ada.add(f"{OTHER} global fact.", scope="global").id
    with Memory.open(db_path, agent="bob", context=Context("alpha", "main")) as bob:
        with pytest.raises(Invalid, match="would forget 2 memories in project:alpha"):
            bob.forget_scope("project:alpha")  # not ada's private plan: bob may not see it
        assert bob.stats().total == 3  # nothing written without --confirm
        with pytest.raises(Invalid):
            bob.forget_scope("all", confirm=True)
        gone = bob.forget_scope("project:alpha", confirm=True, reason="project closed")
    assert len(gone.ids) == 2 and a2 not in gone.ids
    with Memory.open(db_path, agent="ada", context=Context()) as ada:
        assert ada.stats().total == 2 and ada.get(a2) and ada.get(glob)
        assert ada.forget_scope("project:alpha", confirm=True).ids == (a2,)
        assert ada.stats().total == 1
    files = _vacuumed(db_path)
    assert not [n for n, data in files.items() if TOKEN.encode() in data]


def test_cli_forget(run):
    added = run("add", f"{TOKEN} temporary note.", "--json")
    memory_id = json.loads(added.stdout)["id"]
    assert run("forget").exit_code == 2
    assert run("forget", memory_id, "--scope", "global").exit_code == 2
    done = run("forget", memory_id, "--reason", "duplicate", "--json")
    assert done.exit_code == 0 and json.loads(done.stdout) == {
        "forgotten": [memory_id], "count": 1, "scrubbed": [], "removed": [], "unchanged": [],
        "packs": [], "warnings": [],
    }  # fmt: skip
    assert run("show", memory_id).exit_code == 1
    refused = run("forget", "--scope", "project:proj")
    assert refused.exit_code == 2 and "--confirm" in refused.stderr
