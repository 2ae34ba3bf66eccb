"""A memory as one CSV row and back: what `export -f csv` writes and `import csv` reads.

The header names every column of a JSONL memory record, the ones a spreadsheet user
reads first leading (`HEADER`), a memory's own kind as `kind`. A cell holds:

- a list (tags, applicability, wake_phrases): a JSON array, `["a;b", "c,d"]`, so a
  tag holding `;`, `,` or quotes comes back as it was; an empty cell is no items;
- a column that may be null: the value, or an empty cell for null; an empty text
  there reads back as null (memlane's writes leave none: they store null instead);
- any other text (title, body, scope, times in ISO 8601): the text as is, an empty
  cell an empty text;
- a number as JSON writes it (`5`, `0.6`), a flag (ephemeral) as 0 or 1.

A text cell that a spreadsheet would run as a formula (it starts with `=`, `+`, `-`,
`@`, a tab or a CR) is written with a `'` in front, as is one that starts with `'`;
the import takes exactly that `'` off again, so every text reads back as it was.

A CSV whose header names neither `id` nor `dedup_hash` is someone's own table of new
memories: its columns are `add`'s fields (body, title, tags, kind, category,
importance, ...), a list either a JSON array or comma-separated as `add --tags`
takes it, a flag true/false, an empty cell the field left out.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import msgspec

from memlane.errors import Invalid, shown
from memlane.model import Record
from memlane.write import inputs
from memlane.write.draft import ALIASES, FIELDS

_LEADING = (
    "id", "scope", "kind", "category", "title", "body", "tags", "importance", "confidence",
    "visibility", "owner", "source_agent", "created_at", "updated_at", "valid_from",
    "valid_until", "superseded_by",
)  # fmt: skip
# A memory record's columns are a Record's fields but what a read adds (its anchors,
# its source's state).
_HINTS = {
    name: str(hint)
    for name, hint in Record.__annotations__.items()
    if name not in ("anchors", "source_state")
}
HEADER = _LEADING + tuple(name for name in _HINTS if name not in _LEADING)
_LISTS = frozenset(n for n, hint in _HINTS.items() if hint.startswith("tuple"))
_NULLABLE = frozenset(n for n, hint in _HINTS.items() if hint.endswith("| None"))
_INTEGERS = frozenset(n for n, hint in _HINTS.items() if hint.split(" |")[0] in ("int", "bool"))
_FLOATS = frozenset(n for n, hint in _HINTS.items() if hint.split(" |")[0] == "float")
# Marks a file as memlane's own export, restored as it was rather than added anew.
_EXPORT_MARKS = frozenset({"id", "dedup_hash"})
_ADD_LISTS = frozenset({"tags", "applicability", "wake_phrases", "anchors"})
_ADD_FLAGS = frozenset({"private", "ephemeral", "allow_duplicate", "no_embed"})
# Characters of a cell a message shows.
CELL_SHOWN = 40
_FLAG_WORDS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


def table(records: Iterable[Mapping[str, Any]]) -> str:
    """JSONL memory records as CSV text: the header, then a row each."""
    out = io.StringIO()
    # Rows end in CRLF as RFC 4180 has them, and so a cell holding a lone CR (a reason
    # typed on a terminal) is quoted: csv quotes the characters of the row's end.
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(HEADER)
    for row in records:
        writer.writerow([_inert(row["memory_kind" if name == "kind" else name]) for name in HEADER])
    return out.getvalue()


# What makes a spreadsheet read a cell as a formula, and the mark that says it is text.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_TEXT_MARK = "'"


def _inert(value: Any) -> Any:
    """A cell a spreadsheet shows as text: a text that would start a formula, or that
    starts with the mark itself, gets the mark in front (see _as_written).

    Trigger: an exported memory whose text starts `=HYPERLINK(...)` (an agent may have
    written it). Why: a spreadsheet opening the export would run it. Outcome: it
    shows as the text it is, and `import csv` restores it exactly.
    """
    if isinstance(value, str) and value.startswith((*_FORMULA_STARTS, _TEXT_MARK)):
        return _TEXT_MARK + value
    return value


def _as_written(cell: str) -> str:
    """A text cell of memlane's export as its memory held it (the mark _inert put
    in front taken off; no other cell starts with it)."""
    marked = cell.startswith(_TEXT_MARK) and cell[1:].startswith((*_FORMULA_STARTS, _TEXT_MARK))
    return cell[1:] if marked else cell


class Table(msgspec.Struct, frozen=True):
    """A CSV read whole: each good row as a JSONL memory record (`restore`: the file
    is memlane's export) or as `add` fields, by row number; the bad rows, and why."""

    restore: bool
    rows: list[tuple[int, dict[str, Any]]]
    bad: list[tuple[int, str]]


def read(lines: Iterable[bytes | str]) -> Table:
    """A CSV's rows as `Table` holds them; Invalid, naming what is wrong, for a
    header at fault or a text that is not CSV. A blank line is no row, though it
    keeps its number."""
    numbered = _rows(lines)
    _, header = next(numbered, (1, []))
    if not header:
        raise Invalid("the CSV has no header row")
    _check_header(header)
    restore = _is_export(header)
    convert = _record if restore else _fields
    good, bad = [], []
    for number, values in numbered:
        try:
            if values:
                good.append((number, convert(header, values)))
        except Invalid as exc:
            bad.append((number, str(exc)))
    return Table(restore, good, bad)


def _is_export(header: Sequence[str]) -> bool:
    """Whether a header is memlane's export's (it names `id` or `dedup_hash`)."""
    return bool(_EXPORT_MARKS & set(header))


def _check_header(header: Sequence[str]) -> None:
    """Invalid, naming the columns at fault, unless a header is memlane's export's
    (every column, none unknown) or a table of `add` fields with a body."""
    if _is_export(header):
        _check_repeats(header)
        missing = [name for name in HEADER if name not in header]
        unknown = [name for name in header if name not in HEADER]
        if missing or unknown:
            raise Invalid(
                f"a memlane CSV export needs every column it wrote: missing "
                f"{', '.join(missing) or 'none'}, unknown {', '.join(unknown) or 'none'} "
                "(without id and dedup_hash the rows are added as new memories)"
            )
        return
    _check_repeats([_add_name(name) for name in header])
    unknown = [name for name in header if _add_name(name) not in FIELDS]
    if unknown:
        raise Invalid(
            f"unknown column(s) {', '.join(unknown)}: the columns of new memories "
            "are add's fields (body, title, tags, kind, category, importance, ...)"
        )
    if "content" not in {_add_name(name) for name in header}:
        raise Invalid("no body column: new memories need one (body or content)")


def _check_repeats(names: Sequence[str]) -> None:
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise Invalid(f"the header names {', '.join(repeated)} more than once")


def _record(header: Sequence[str], values: Sequence[str]) -> dict[str, Any]:
    """The JSONL memory record a row of memlane's export holds; Invalid naming the
    first cell that is not what its column holds."""
    _check_width(header, values)
    out: dict[str, Any] = {"kind": "memory"}
    for name, cell in zip(header, values, strict=True):
        out["memory_kind" if name == "kind" else name] = _value(name, cell)
    return out


def _fields(header: Sequence[str], values: Sequence[str]) -> dict[str, Any]:
    """The `add` fields a row of someone's own table holds (an empty cell left out)."""
    _check_width(header, values)
    out: dict[str, Any] = {}
    for name, cell in zip(header, values, strict=True):
        if cell == "":
            continue
        field = _add_name(name)
        if field in _ADD_FLAGS:
            out[field] = _flag(name, cell)
        elif field == "confidence":
            out[field] = _number(name, cell)
        elif field in _ADD_LISTS:
            out[field] = _listed(cell)
        else:
            out[field] = cell
    return out


def _rows(lines: Iterable[bytes | str]) -> Iterator[tuple[int, list[str]]]:
    """(row number, cells) of a CSV read a line at a time, the header being row 1 as a
    spreadsheet numbers them (a quoted cell over several lines is one row). Invalid
    when the text cannot be read as CSV (not UTF-8, a line past the cap, broken
    quoting): past that point no row can be told from the next."""
    # Trigger: a cell longer than csv's default limit of 128 Ki characters (a body, when
    # max_body_bytes is raised). Why: a JSONL line holds up to LINE_CAP bytes, and a CSV
    # export must read back whatever JSONL does. Outcome: the limit, which csv keeps for
    # the whole process, is raised to LINE_CAP (never lowered).
    csv.field_size_limit(max(csv.field_size_limit(), inputs.LINE_CAP))
    number = 0
    try:
        for number, found in enumerate(csv.reader(_text(lines), strict=True), start=1):
            yield number, found
    except csv.Error as exc:
        raise Invalid(f"row {number + 1} is not valid CSV ({exc})") from None


def _text(lines: Iterable[bytes | str]) -> Iterator[str]:
    for number, line in enumerate(lines, start=1):
        if isinstance(line, inputs.Overlong):
            raise Invalid(f"line {number} is longer than the limit of {inputs.LINE_CAP} bytes")
        text = inputs.decode(line, f"line {number}") if isinstance(line, bytes) else line
        yield text.removeprefix("\ufeff") if number == 1 else text  # a spreadsheet's BOM


def _check_width(header: Sequence[str], values: Sequence[str]) -> None:
    if len(values) != len(header):
        raise Invalid(f"the row has {len(values)} cells; the header has {len(header)}")


def _value(name: str, cell: str) -> Any:
    """One cell of memlane's export as its record holds it."""
    if name in _LISTS:
        return cell or "[]"
    if cell == "" and name in _NULLABLE:
        return None
    if name in _INTEGERS:
        number = _number(name, cell)
        if not isinstance(number, int):
            raise Invalid(f"{name}: {shown(cell, CELL_SHOWN)} is not a whole number")
        return number
    if name in _FLOATS:
        return float(_number(name, cell))
    return _as_written(cell)


def _number(name: str, cell: str) -> int | float:
    """A cell holding a finite number in JSON's spelling."""
    try:
        number = json.loads(cell, parse_constant=_refuse)
    except (ValueError, RecursionError):
        number = None
    if isinstance(number, bool) or not isinstance(number, (int, float)):
        raise Invalid(f"{name}: {shown(cell, CELL_SHOWN)} is not a number")
    if not math.isfinite(number):
        raise Invalid(f"{name}: {shown(cell, CELL_SHOWN)} is not a finite number")
    return number


def _refuse(constant: str) -> None:
    raise ValueError(constant)


def _flag(name: str, cell: str) -> bool:
    try:
        return _FLAG_WORDS[cell.strip().lower()]
    except KeyError:
        raise Invalid(f"{name}: {shown(cell, CELL_SHOWN)} is not true or false") from None


def _listed(cell: str) -> list[str] | str:
    """A list cell of someone's own table: a JSON array of texts, else the text as
    `add` splits it (at commas)."""
    if cell.lstrip().startswith("["):
        try:
            items = json.loads(cell)
        except (ValueError, RecursionError):
            return cell
        if isinstance(items, list) and all(isinstance(item, str) for item in items):
            return items
    return cell


def _add_name(column: str) -> str:
    """A column of someone's own table as the `add` field it names: `Wake phrases`,
    `wake-phrases` and `wake_phrases` alike, an alias (`body`) as its field."""
    name = "_".join(column.strip().lower().replace("-", " ").split())
    return ALIASES.get(name, name)
