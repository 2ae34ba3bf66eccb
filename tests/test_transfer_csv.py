"""CSV in and out: every cell comes back as its column held it; memlane's own export is
restored, someone's own table is added through the write policy; bad rows are
reported by row number and skipped, a bad header or a text that is not CSV refused
whole."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from memlane import Context, Memory
from memlane.write import csvrows, inputs


def _record(**changes: object) -> dict[str, object]:
    """A JSONL memory record with a value of every kind a column holds (the columns
    that may be null, null)."""
    record: dict[str, object] = dict.fromkeys(csvrows.HEADER)
    del record["kind"]  # a memory's own kind travels as memory_kind
    record.update(
        kind="memory",
        id="m-abc00001",
        scope="global",
        title="T",
        body="B",
        memory_kind="fact",
        category="fact",
        content_type="text",
        tags="[]",
        importance=5,
        visibility="public",
        applicability="[]",
        wake_phrases="[]",
        dedup_hash="dh1:x",
        confidence=0.6,
        taint="trusted_internal",
        trust_score=1.0,
        source_type="manual",
        entry_type="primary",
        ephemeral=0,
        created_at="2026-01-02T03:04:05.000006Z",
        updated_at="2026-01-02T03:04:05.000006Z",
        valid_from="2026-01-02T03:04:05.000006Z",
        version_from="2026-01-02T03:04:05.000006Z",
        version=1,
        retrieval_count=0,
        surfaced_count=0,
        activation_count=0,
        applied_count=0,
        violated_count=0,
    )
    record.update(changes)
    return record


def _read_back(records: list[dict[str, object]]) -> list[dict[str, object]]:
    text = csvrows.table(records)
    table = csvrows.read(inputs.lines(io.BytesIO(text.encode("utf-8"))))
    assert table.restore and table.bad == []
    return [row for _, row in table.rows]


def test_every_cell_reads_back_as_its_column_held_it():
    awkward = _record(
        title='"Quoted", with; separators',
        body="line one\r\nline two\n\n  indented\rlone CR, \u2028 \x85 \x00 end ",
        tags=json.dumps(["a;b", "c,d", 'say "hi"', "new\nline", "naïve"], ensure_ascii=False),
        wake_phrases='["caf\\u00e9"]',  # an older store's ASCII escapes, kept as they were
        confidence=0.1 + 0.2,
        trust_score=1e-300,
        importance=-3,
        wake_order=0,
        ephemeral=1,
        owner="",
        domain="ops",
        valid_until="2026-02-03T00:00:00Z",
        supersede_reason="fixed\ragain",
        retrieval_count=2**40,
    )
    long = _record(body="x" * 300_000)  # past csv's own limit of a cell
    assert _read_back([_record(), awkward, long]) == [
        _record(),
        {**awkward, "owner": None},  # no null in a cell: an empty text there reads as null
        long,
    ]


@pytest.mark.parametrize(
    "text",
    [
        '=HYPERLINK("http://x")',
        "+1",
        "-sum",
        "@cmd",
        "\tx",
        "\rx",
        "'=already marked",
        "'",
        "''",
        "plain",
        "",
    ],
)
def test_a_text_a_spreadsheet_would_run_is_written_inert_and_reads_back(text):
    cells = next(csv.reader(io.StringIO(csvrows.table([_record(title=text)]).split("\r\n")[1])))
    written = cells[csvrows.HEADER.index("title")]
    assert not written.startswith(("=", "+", "-", "@", "\t", "\r"))
    assert _read_back([_record(title=text)]) == [_record(title=text)]


def test_lists_are_json_arrays_and_null_is_an_empty_cell():
    text = csvrows.table([_record(tags='["a;b", "c,d"]', domain=None, title="")])
    row = next(csv.DictReader(io.StringIO(text, newline="")))
    assert list(row)[:8] == [
        "id",
        "scope",
        "kind",
        "category",
        "title",
        "body",
        "tags",
        "importance",
    ]
    assert row["tags"] == '["a;b", "c,d"]' and row["kind"] == "fact"
    assert row["domain"] == "" and row["wake_order"] == "" and row["title"] == ""
    [back] = _read_back([_record(title="", wake_phrases="")])
    assert back["title"] == "" and back["wake_phrases"] == "[]" and back["domain"] is None


def _write_csv(path: Path, rows: list[list[str]], encoding: str = "utf-8") -> Path:
    with path.open("w", encoding=encoding, newline="") as out:
        csv.writer(out).writerows(rows)
    return path


def _exported_rows(db: Path) -> list[list[str]]:
    with Memory.open(db, agent="tester", context=Context()) as mem:
        mem.add("First line of a note.\nSecond line, with a comma.", tags=["a;b"])
        mem.add("Staging uses db-7.", importance=7)
        mem.add("Deploys go out on Tuesdays.", tags=["ops"])
        return list(csv.reader(io.StringIO(mem.transfer.export_csv(), newline="")))


def test_bad_rows_are_reported_by_row_number_and_the_good_ones_land(run, tmp_path):
    rows = _exported_rows(tmp_path / "a.db")
    at = {name: i for i, name in enumerate(rows[0])}
    rows[2][at["importance"]] = "high"
    rows[3][at["tags"]] = "ops;deploy"  # a list column holds a JSON array
    rows.append(rows[1][:5])  # too few cells
    source = _write_csv(tmp_path / "x.csv", rows)
    target = ("--db", str(tmp_path / "b.db"))
    loaded = run(*target, "import", "csv", str(source), "--json")
    assert loaded.exit_code == 2
    report = loaded.json()
    # Row 2 holds a body over two lines: the rows keep a spreadsheet's numbers.
    assert [e["row"] for e in report["errors"]] == [3, 4, 5]
    assert "importance" in report["errors"][0]["error"]
    assert "tags" in report["errors"][1]["error"]
    assert report["counts"] == {"memory": {"added": 1}}
    again = run(*target, "import", "csv", str(source))
    assert again.exit_code == 2
    assert f"{source}: row 3: importance: 'high' is not a number" in again.stderr.splitlines()
    assert "memory: 1 unchanged" in again.stdout


def test_someone_elses_table_adds_new_memories_through_the_write_policy(run, tmp_path):
    source = _write_csv(
        tmp_path / "sheet.csv",
        [
            ["Title", "Body", "Tags", "Importance", "Private"],
            ["Runbook", "Restart with make restart.\nThen read the logs.", "ops, deploy", "7", ""],
            ["Plan", "My private plan for the launch.", '["a;b", "c"]', "", "yes"],
            ["", "Staging uses db-7.", "", "", ""],
            ["Empty", "", "", "", ""],
            ["Loud", "Some body text here.", "", "loud", ""],
            ["Shy", "Another body text here.", "", "", "maybe"],
        ],
        encoding="utf-8-sig",  # as a spreadsheet saves UTF-8
    )
    first = run("import", "csv", str(source), "--json")
    assert first.exit_code == 2
    assert [e["row"] for e in first.json()["errors"]] == [5, 6, 7]
    assert first.json()["counts"] == {"memory": {"added": 3}}
    again = run("import", "csv", str(source), "--json")
    assert again.json()["counts"] == {"memory": {"already_persisted": 3}}
    found = run("search", "restart", "--json").json()["results"]
    assert found[0]["title"] == "Runbook" and found[0]["importance"] == 7
    assert set(found[0]["tags"]) >= {"ops", "deploy"}
    [plan] = run("search", "launch", "--mine", "--json").json()["results"]
    assert plan["tags"] == ["a;b", "c"] and plan["visibility"] == "private"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("title,notes\nA,B\n", "unknown column(s) notes"),
        ("title,tags\nA,B\n", "no body column"),
        ("body,Body\nA,B\n", "more than once"),
        ("id,title,body\nm-1,A,B\n", "missing scope, kind, category"),
        ("", "no header row"),
        ('body\n"never closed\n', "not valid CSV"),
        ('body\nfine\n"a"b\n', "row 3 is not valid CSV"),
        (b"body\n\xff\xfe\n", "not valid UTF-8"),
    ],
)
def test_a_file_that_cannot_be_read_is_refused_in_one_line_and_nothing_lands(
    run, tmp_path, text, says
):
    source = tmp_path / "x.csv"
    if isinstance(text, bytes):
        source.write_bytes(text)
    else:
        source.write_text(text, encoding="utf-8")
    refused = run("import", "csv", str(source))
    assert refused.exit_code == 2 and refused.stdout == ""
    [line] = refused.stderr.splitlines()
    assert line.startswith(f"memlane: error: {source}: ") and says in line
    assert run("list", "--json").json()["count"] == 0


def test_capture_mode_screens_csv_rows(tmp_path):
    with Memory.open(tmp_path / "a.db", agent="ada", context=Context()) as mem:
        mem.add("the key is AKIAZ7Q2LMNOPR5T6UVW here", capture_mode="manual")
        exported = mem.transfer.export_csv().encode().splitlines(keepends=True)
    sheet = [b"body\n", b"another key AKIAZ7Q2LMNOPR5T6UVX there\n"]
    with Memory.open(tmp_path / "b.db", agent="ada", context=Context()) as copy:
        assert copy.transfer.import_csv(exported).redactions == 2  # body, and the title made of it
        assert copy.transfer.import_csv(sheet).redactions == 1
        assert "AKIA" not in copy.transfer.export_csv()
    with Memory.open(tmp_path / "c.db", agent="ada", context=Context()) as kept:
        assert kept.transfer.import_csv(exported, capture_mode="reviewed").redactions == 0
        assert kept.transfer.import_csv(sheet, capture_mode="reviewed").redactions == 0
        assert kept.transfer.export_csv().count("AKIA") == 4  # in each body and title


def test_a_device_or_an_overlong_line_is_refused_and_nothing_lands(run, tmp_path):
    device = run("import", "csv", "/dev/zero")
    assert device.exit_code == 2 and "not a regular file" in device.stderr
    source = tmp_path / "x.csv"
    source.write_text(f"body\nfine\n{'x' * (inputs.LINE_CAP + 1)}\n", encoding="utf-8")
    overlong = run("import", "csv", str(source))
    assert overlong.exit_code == 2
    [line] = overlong.stderr.splitlines()
    assert f"line 3 is longer than the limit of {inputs.LINE_CAP} bytes" in line
    assert run("list", "--json").json()["count"] == 0
