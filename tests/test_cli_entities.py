"""`memlane entities list|show|merge` through the real CLI."""

from __future__ import annotations


def test_entities_list_show_and_merge(run):
    run("add", "Ask @ghopper about `MemoryStore` in src/memlane/store.py.")
    run("add", "Ask @grace-h why memory_store is slow.")
    listed = run("entities", "list", "--json").json()
    assert {(e["name"], e["kind"], e["mentions"]) for e in listed} >= {
        ("MemoryStore", "code", 2),
        ("@ghopper", "handle", 1),
    }
    text = run("entities", "list", "--kind", "handle")
    assert text.exit_code == 0 and "@ghopper" in text.stdout and "MemoryStore" not in text.stdout

    shown = run("entities", "show", "memory-store", "--json").json()
    assert shown["name"] == "MemoryStore" and len(shown["memories"]) == 2

    dry = run("entities", "merge", "@ghopper", "@grace-h")
    assert dry.exit_code == 0 and dry.stdout.startswith("Would merge '@ghopper' into '@grace-h'")
    assert "--confirm" in dry.stderr
    merged = run("entities", "merge", "@ghopper", "@grace-h", "--confirm", "--json").json()
    assert merged["status"] == "merged" and merged["mentions"] == 1
    handles = run("entities", "list", "--kind", "handle", "--json").json()
    assert [(e["name"], e["mentions"]) for e in handles] == [("@grace-h", 2)]


def test_entities_errors_are_one_line(run):
    run("add", "Ask @ghopper about `MemoryStore`.")
    unknown = run("entities", "show", "Nobody")
    assert unknown.exit_code == 1 and unknown.stderr.count("\n") == 1
    mismatch = run("entities", "merge", "@ghopper", "MemoryStore", "--confirm")
    assert mismatch.exit_code == 2 and "different kinds" in mismatch.stderr
    bad_kind = run("entities", "list", "--kind", "planet")
    assert bad_kind.exit_code == 2
