"""export / import: every format (JSONL, CSV, Markdown) imports back exactly, JSONL
byte for byte; every line is checked before anything lands, re-importing is a no-op;
Markdown folders of one's own notes come in too."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from memlane import Context, Memory
from memlane.embed import get_embedder
from memlane.errors import Invalid
from memlane.write.frontmatter import split

EVERYTHING = {"include_superseded": True, "include_private": True}


def _full_store(db: Path) -> Memory:
    """A store that uses every feature an export carries."""
    mem = Memory.open(
        db, agent="ada", context=Context("proj", "main"), embedder=get_embedder("hash")
    )
    mem.registries.register("agents", "ada", description="Builder", domain="dev")
    mem.registries.register("categories", "runbook", description="How we operate")
    session = mem.lifecycle.create_session(type="work", project="proj")
    x = mem.add("Ada Lovelace wrote the first program. Alice met Bob at Acme Corp.",
                title="History", tags=["history", "people"], importance=7,
                session_id=session.id, wake_phrases=["first program"], wake_order=2).id  # fmt: skip
    y = mem.add("Use uv for environments.", private=True, category="runbook").id
    mem.update(x, append=" Later Acme Corp hired Alice.")
    z = mem.supersede(y, "Use uv, never pip.").id
    w = mem.add("The billing API is slow on Mondays.", kind="lesson", occurred_at="2026-01-05",
                anchors=[x], applicability=["python"], content_type="code")  # fmt: skip
    source = db.parent / "notes.md"
    source.write_text("The deploy script lives in ops/deploy.sh.\n")
    mem.add("The deploy script lives in ops/deploy.sh.", source_ref=f"file:{source}")
    mem.graph.merge_entities("Alice", "Ada Lovelace", confirm=True)
    mem.graph.relate("Ada Lovelace", "works on", "Acme Corp", context="hired", memory=x)
    mem.graph.relate("Acme Corp", "based in", "London")
    mem.graph.unrelate("Acme Corp", "located in", "London")
    mem.invalidate(w.id, "fixed")
    mem.graph.link(x, z, "related", reason="same area")
    mem.reinforce(x)
    mem.feedback(z, applied=True)
    mem.lifecycle.remind("in 2 hours", "check the deploy")
    mem.add('Unicode: naïve café — 数据 🙂 "quoted" \\ backslash', title="Ünïcödé")
    return mem


def test_jsonl_round_trip_is_byte_identical_and_reimport_is_a_no_op(tmp_path):
    source = _full_store(tmp_path / "a.db")
    first = list(source.transfer.export_jsonl(**EVERYTHING))
    kinds = {json.loads(line)["kind"] for line in first}
    assert kinds >= {"memlane-export", "registry", "session", "memory", "version", "link",
                     "entity", "alias", "mention", "relation", "reminder"}  # fmt: skip
    with Memory.open(tmp_path / "b.db", agent="ada", context=Context("proj", "main")) as copy:
        report = copy.transfer.import_jsonl(first)
        assert report.errors == [] and report.counts["memory"] == {"added": 6}
        assert list(copy.transfer.export_jsonl(**EVERYTHING)) == first
        again = copy.transfer.import_jsonl(first)
        assert again.added == 0 and again.errors == []
        assert set(again.counts["memory"]) == {"unchanged"}
        assert list(copy.transfer.export_jsonl(**EVERYTHING)) == first
        found = copy.search("Acme")
        assert found and found[0].record.title == "History"
        assert len(copy.history(found[0].record.id)) == 2


def test_export_selects_live_public_by_default(tmp_path):
    mem = _full_store(tmp_path / "a.db")
    default = [json.loads(line) for line in mem.transfer.export_jsonl()]
    memories = [r for r in default if r["kind"] == "memory"]
    assert all(r["visibility"] == "public" and r["superseded_at"] is None
               and r["valid_until"] is None for r in memories)  # fmt: skip
    assert not [r for r in default if r["kind"] == "reminder"]
    ids = {r["id"] for r in memories}
    assert all(r["source"] in ids and r["target"] in ids for r in default if r["kind"] == "link")
    with Memory.open(tmp_path / "a.db", agent="bob", context=Context()) as bob:
        theirs = [json.loads(line) for line in bob.transfer.export_jsonl(**EVERYTHING)]
        assert all(r.get("owner") in (None, "bob") for r in theirs if r["kind"] == "memory")


def test_an_export_from_before_entity_types_still_imports(tmp_path):
    lines = [json.loads(line) for line in _full_store(tmp_path / "a.db").transfer.export_jsonl()]
    for line in lines:
        if line["kind"] == "entity":
            del line["entity_type"]
    older = [json.dumps(line) for line in lines if line["kind"] != "relation"]
    with Memory.open(tmp_path / "b.db", agent="ada", context=Context()) as copy:
        report = copy.transfer.import_jsonl(older)
        assert report.errors == []
        assert copy.graph.entity("Acme Corp").type.value == "unknown"


def test_every_line_is_checked_first_and_bad_lines_are_reported(tmp_path):
    lines = list(_full_store(tmp_path / "a.db").transfer.export_jsonl(**EVERYTHING))
    memory_line = next(i for i, line in enumerate(lines) if '"kind":"memory"' in line)
    broken = list(lines)
    bad = json.loads(broken[memory_line])
    bad["taint"] = "radioactive"
    broken[memory_line] = json.dumps(bad)
    broken.insert(1, "{not json")
    broken.insert(2, json.dumps({"kind": "spaceship"}))
    extra = json.loads(lines[memory_line])
    extra["surprise"] = 1
    broken.append(json.dumps(extra))
    with Memory.open(tmp_path / "b.db", agent="ada", context=Context()) as copy:
        report = copy.transfer.import_jsonl(broken)
        numbers = [n for n, _ in report.errors]
        assert numbers[:2] == [2, 3] and len(report.errors) >= 4
        assert any("taint" in e for _, e in report.errors)
        assert any("surprise" in e for _, e in report.errors)
        memories = sum('"kind":"memory"' in line for line in lines)
        assert report.counts["memory"]["added"] == memories - 1  # the good ones land


def test_imported_fields_are_held_to_what_add_accepts_and_reads_keep_working(tmp_path):
    # Fields that pass the store's column types but no `add`: each is reported by line,
    # the good record lands, and recall over the store still works.
    with Memory.open(
        tmp_path / "a.db", agent="ada", context=Context(), embedder=get_embedder("hash")
    ) as mem:
        mem.add("We deploy with make deploy from the release branch.")
        template = json.loads(
            next(line for line in mem.transfer.export_jsonl() if '"kind":"memory"' in line)
        )
    changes = [
        {"importance": "high"},
        {"importance": 10**30},
        {"importance": True},
        {"confidence": 7},
        {"scope": "project:../../x"},
        {"scope": "globl"},
        {"body": "x" * 70_000},
        {"body": "\u200b\u200c\ufeff"},
        {"tags": "[1, 2]"},
        {"id": "m-" + "a" * 10_000},
        {"id": "m-../../etc"},
    ]
    lines = []
    for i, change in enumerate(changes):
        record = {**template, "id": f"m-bad{i:05d}", "dedup_hash": f"bad{i}", **change}
        lines.append(json.dumps(record))
    good = {**template, "id": "m-good00001", "dedup_hash": "good", "body": "Staging uses db-7."}
    lines.append(json.dumps(good))
    with Memory.open(
        tmp_path / "b.db", agent="ada", context=Context(), embedder=get_embedder("hash")
    ) as copy:
        report = copy.transfer.import_jsonl(lines)
        assert [n for n, _ in report.errors] == list(range(1, len(changes) + 1))
        assert report.counts["memory"]["added"] == 1
        assert [s.record.id for s in copy.recall("staging", limit=5).hits] == ["m-good00001"]


def test_content_that_shows_nothing_is_refused(tmp_path):
    with Memory.open(tmp_path / "a.db", agent="ada", context=Context()) as mem:
        for content in ("\u200b\u200b", "\x00\x00", " \u2060\ufeff\n"):
            with pytest.raises(Invalid, match="shows nothing"):
                mem.add(content)
        assert mem.add("visible \u200b text").id


def test_tombstones_need_permission(tmp_path):
    mem = _full_store(tmp_path / "a.db")
    live = list(mem.transfer.export_jsonl(**EVERYTHING))
    target = next(json.loads(line) for line in live
                  if '"kind":"memory"' in line and '"title":"History"' in line)  # fmt: skip
    mem.invalidate(target["id"], "wrong after all")
    ended = list(mem.transfer.export_jsonl(**EVERYTHING))
    with Memory.open(tmp_path / "b.db", agent="ada", context=Context()) as copy:
        copy.transfer.import_jsonl(live)
        refused = copy.transfer.import_jsonl(ended)
        assert refused.counts["memory"].get("conflict") == 1
        assert copy.get(target["id"]).live
        allowed = copy.transfer.import_jsonl(ended, allow_tombstones=True)
        assert allowed.counts["memory"]["tombstoned"] == 1
        assert not copy.get(target["id"]).live


def test_capture_mode_screens_memories_from_elsewhere(tmp_path):
    with Memory.open(tmp_path / "a.db", agent="ada", context=Context()) as mem:
        mem.add("the key is AKIAZ7Q2LMNOPR5T6UVW here", capture_mode="manual")
        lines = list(mem.transfer.export_jsonl())
    assert "AKIAZ7Q2LMNOPR5T6UVW" in "".join(lines)
    with Memory.open(tmp_path / "b.db", agent="ada", context=Context()) as copy:
        report = copy.transfer.import_jsonl(lines, capture_mode="auto")
        assert report.redactions == 2  # in the body and in the title derived from it
        [line] = [json.loads(x) for x in copy.transfer.export_jsonl() if '"kind":"memory"' in x]
        assert "AKIAZ7Q2LMNOPR5T6UVW" not in line["body"] + line["title"]
        assert "auto-redacted" in line["tags"]


def test_csv_and_markdown_exports(tmp_path):
    mem = _full_store(tmp_path / "a.db")
    rows = list(csv.DictReader(io.StringIO(mem.transfer.export_csv())))
    assert {r["title"] for r in rows} >= {"History", "Ünïcödé"}
    assert next(r for r in rows if r["title"] == "History")["tags"] == '["history", "people"]'
    files = dict(mem.transfer.export_markdown())
    meta, body = split(next(t for n, t in files.items() if "History" in t))
    assert meta["title"] == "History" and meta["tags"] == ["history", "people"]
    assert body.startswith("Ada Lovelace")


def test_cli_export_and_import(run, tmp_path, cli_env):
    run("add", "Deploys go out on Tuesdays.", "--tags", "ops")
    run("add", "My private plan.", "--private")
    out = tmp_path / "dump.jsonl"
    assert run("export", "-o", str(out), "--include-private").exit_code == 0
    assert len(out.read_text().splitlines()) > 3
    assert run("export", "-f", "md").exit_code == 2  # md needs a directory
    md_dir = tmp_path / "md"
    assert run("export", "-f", "md", "-o", str(md_dir)).exit_code == 0
    assert len(list(md_dir.glob("*.md"))) == 1  # the private one stays out by default
    csv_out = run("export", "-f", "csv")
    assert csv_out.stdout.startswith("id,scope,kind")
    cli_env["MEMLANE_DB"] = str(tmp_path / "other.db")
    loaded = run("import", str(out), "--json")
    assert loaded.exit_code == 0, loaded.stderr
    assert json.loads(loaded.stdout)["counts"]["memory"] == {"added": 2}
    assert json.loads(run("import", str(out), "--json").stdout)["added"] == 0
    (tmp_path / "bad.jsonl").write_text('{"kind":"memory"}\n')
    bad = run("import", str(tmp_path / "bad.jsonl"))
    assert bad.exit_code == 2 and "bad.jsonl:1" in bad.stderr
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text(
        "---\ntitle: Runbook\ntags: [ops, deploy]\n---\nRestart with make restart.\n"
    )
    (folder / "b.md").write_text("Just a body without front matter.\n")
    first = run("import", "markdown", str(folder), "--json")
    assert first.exit_code == 0 and len(json.loads(first.stdout)["imported"]) == 2
    again = json.loads(run("import", "markdown", str(folder), "--json").stdout)["imported"]
    assert {a["status"] for a in again} == {"already_persisted"}
    found = run("search", "restart", "--json").json()["results"]
    assert found[0]["title"] == "Runbook" and "deploy" in found[0]["tags"]


def test_imported_fields_of_the_wrong_type_are_bad_lines_and_reads_keep_working(tmp_path):
    with Memory.open(tmp_path / "a.db", agent="ada", context=Context()) as mem:
        mem.add("We deploy with blue green from main.", wake_phrases=["deploy"])
        template = json.loads(
            next(ln for ln in mem.transfer.export_jsonl() if '"kind":"memory"' in ln)
        )
    changes = [
        {"retrieval_count": "x"},
        {"wake_phrases": "[1, 2]"},
        {"version": "a"},
        {"ephemeral": "x"},
        {"kind": "no-such-kind"},
        {"created_at": "yesterday"},
        {"tags": "[" * 100_000},
    ]
    lines = [json.dumps({**template, "id": f"m-bad{i:05d}", "dedup_hash": f"b{i}", **c})
             for i, c in enumerate(changes)]  # fmt: skip
    lines.append(json.dumps({**template, "id": "m-good00001", "dedup_hash": "g"}))
    with Memory.open(tmp_path / "b.db", agent="ada", context=Context()) as copy:
        report = copy.transfer.import_jsonl(lines)
        assert [n for n, _ in report.errors] == list(range(1, len(changes) + 1))
        assert report.counts["memory"]["added"] == 1
        assert [h.record.id for h in copy.recall("deploy").hits] == ["m-good00001"]
        assert copy.get("m-good00001").wake_phrases == ("deploy",)


def test_a_markdown_export_imports_back_exactly(tmp_path, run, cli_env):
    with Memory.open(tmp_path / "a.db", agent="tester", context=Context()) as mem:
        first = mem.add("The deploy runs nightly from main.", tags=["ops"], importance=7)
        mem.add("Staging uses db-7.\n\nIt is reset on Sundays.\n", wake_phrases=["staging"])
        mem.update(first.id, content="The deploy runs hourly from main.")
        exported = sorted(ln for ln in mem.transfer.export_jsonl(include_superseded=True)
                          if '"kind":"memory"' in ln)  # fmt: skip
        folder = tmp_path / "md"
        folder.mkdir()
        for name, text in mem.transfer.export_markdown(include_superseded=True):
            (folder / name).write_text(text, encoding="utf-8")
    result = run("--db", str(tmp_path / "b.db"), "import", "markdown", str(folder), "--json")
    assert result.exit_code == 0, result.stderr
    assert {i["status"] for i in result.json()["imported"]} == {"added"}
    again = run("--db", str(tmp_path / "b.db"), "import", "markdown", str(folder), "--json")
    assert {i["status"] for i in again.json()["imported"]} == {"unchanged"}
    with Memory.open(tmp_path / "b.db", agent="tester", context=Context()) as copy:
        restored = sorted(ln for ln in copy.transfer.export_jsonl(include_superseded=True)
                          if '"kind":"memory"' in ln)  # fmt: skip
    assert restored == exported


def _awkward_store(db: Path) -> None:
    """Memories whose text trips formats up: lines and quotes in bodies, separators and
    non-ASCII in tags and lists, a derived title, YAML look-alikes, a superseded memory
    with versions, an invalidated one, a private one, counters in use, a link."""
    with Memory.open(
        db, agent="tester", context=Context("proj", "main"), embedder=get_embedder("hash")
    ) as mem:
        first = mem.add(
            'Line one, "quoted"; semi\r\nline two\n\n  indented, last\n',
            title="",
            tags=["a;b", "c,d", 'say "hi"', "naïve"],
            importance=8,
        ).id
        mem.update(first, append=" More, later.")
        mem.supersede(first, 'Replaced: a body with "quotes"\nand, commas; semis')
        lesson = mem.add(
            "Unicode: naïve café — 数据 🙂 \\ back\tslash",
            title='Ünïcödé, "q"; s',
            kind="lesson",
            wake_phrases=["café, crème", "x;y"],
            applicability=["py;3.11"],
            occurred_at="2026-01-05",
            domain="ops",
            wake_order=3,
        ).id
        yaml_like = mem.add("---\nnot: front matter\n---\nbody", title="null", tags=["on"]).id
        mem.add("=SUM(A1:A2) reads as a formula", title="yes", private=True)
        ended = mem.add("The billing API is slow on Mondays.", title="1.5").id
        mem.invalidate(ended, "fixed\rat last")  # a lone CR: a CSV row must stay one
        mem.graph.link(lesson, yaml_like, "related", reason="same area")
        mem.reinforce(lesson)
        mem.feedback(lesson, applied=True)
        mem.feedback(yaml_like, applied=False)
        mem.recall("café crème")
        mem.lifecycle.remind("in 2 hours", "check the deploy")


def _export(run, db: Path, fmt: str, out: Path) -> dict[str, str]:
    """`memlane export -f FMT -o OUT` of everything: {file name: text} of a folder, or
    {"": text} of a file."""
    options = ("--include-superseded", "--include-private")
    done = run("--db", str(db), "export", "-f", fmt, "-o", str(out), *options)
    assert done.exit_code == 0, done.stderr
    if not out.is_dir():
        return {"": out.read_text(encoding="utf-8")}
    return {f.name: f.read_text(encoding="utf-8") for f in sorted(out.iterdir())}


def _memories(db: Path) -> list[dict[str, object]]:
    """Every memory record of a store's JSONL export, by id."""
    with Memory.open(db, agent="tester", context=Context()) as mem:
        records = [json.loads(line) for line in mem.transfer.export_jsonl(**EVERYTHING)]
    return sorted((r for r in records if r["kind"] == "memory"), key=lambda r: r["id"])


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "md"])
def test_every_export_format_imports_back_exactly(fmt, run, tmp_path):
    source, target = tmp_path / "a.db", tmp_path / "b.db"
    _awkward_store(source)
    memories = _memories(source)
    assert any(r["valid_until"] for r in memories) and any(r["superseded_by"] for r in memories)
    assert any(r["applied_count"] and r["activation_count"] for r in memories)
    first = _export(run, source, fmt, tmp_path / f"first.{fmt}")
    where = tmp_path / f"first.{fmt}"
    command = {"jsonl": ["import"], "csv": ["import", "csv"], "md": ["import", "markdown"]}[fmt]
    loaded = run("--db", str(target), *command, str(where), "--json")
    assert loaded.exit_code == 0, loaded.stderr
    assert _export(run, target, fmt, tmp_path / f"second.{fmt}") == first
    assert _memories(target) == memories  # ids, times, counters, state: all kept
    again = run("--db", str(target), *command, str(where), "--json")
    assert again.exit_code == 0, again.stderr
    assert _export(run, target, fmt, tmp_path / f"third.{fmt}") == first


def test_the_transfer_methods_old_names_still_work_with_a_warning(mem):
    mem.add("The deploy runs nightly.")
    with pytest.warns(DeprecationWarning, match=r"Memory\.export_jsonl is now"):
        old = list(mem.export_jsonl())
    assert old == list(mem.transfer.export_jsonl())
