"""Wake commands: wake (the cascade and the token ritual), wake-fetch, and wake-log (the
ritual's guesses, scored and read back)."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import click

from memlane.cli.common import echo_stored, emit_json, fail, in_section, json_option, memory, note
from memlane.cli.render import record_dict, record_line
from memlane.files import replace_file
from memlane.lifecycle.wake import DEFAULT_DAYS, DEFAULT_LIMIT, GOODHART
from memlane.model import WakeGuess

_SCORE_FIELDS = ("sim_phrase", "sim_content", "sim_title", "sim_prior", "sim_prior_null")


@in_section("lifecycle")
@click.command("wake")
@click.option(
    "-l",
    "--limit",
    type=int,
    default=DEFAULT_LIMIT,
    show_default=True,
    help="Blooms in the wake set.",
)
@click.option(
    "--min-resonance",
    type=int,
    help="Every bloom with at least this raw importance (overrides --limit).",
)
@click.option(
    "-d",
    "--days",
    type=int,
    default=DEFAULT_DAYS,
    show_default=True,
    help="Recent layer: memories active in the last N days.",
)
@click.option("--no-activate", is_flag=True, help="Do not count this wake as an activation.")
@click.option(
    "--include-excluded", is_flag=True, help="Include memories tagged archive or wake-exclude."
)
@click.option("--begin", is_flag=True, help="Start the token ritual: first bloom and a token.")
@click.option("--wake", "wake_number", type=int, help="Wake number logged on every guess.")
@click.option("--force-wake", is_flag=True, help="Begin under an already-logged wake number.")
@click.option("--model", help="Model identifier logged on every guess (with --begin).")
@click.option("--respond", help="Your one guess for the current bloom (at most 2000 chars).")
@click.option("--bloom-id", help="The bloom the guess is for (with --respond).")
@click.option("--session", "token", help="The session token (with --respond).")
@json_option
def wake_cmd(
    limit: int,
    min_resonance: int | None,
    days: int,
    no_activate: bool,
    include_excluded: bool,
    begin: bool,
    wake_number: int | None,
    force_wake: bool,
    model: str | None,
    respond: str | None,
    bloom_id: str | None,
    token: str | None,
    as_json: bool,
) -> None:
    """Wake into the agent's identity (MEMLANE_AGENT): the core, recent and bridge cascade,
    or the one-guess token ritual (--begin, then --respond per chunk).

    The cascade: the core (importance 8 or more, not ephemeral, by wake order, then
    importance), the recent layer (activated or changed in --days), and bridges (importance
    5 or more, joined by an anchor to the first two layers). Of --limit, half goes to the
    core and a quarter to the recent layer, and what a layer cannot fill goes to the core
    first. --min-resonance N takes every bloom of raw importance N or more instead, however
    many (--limit does not apply): those no other layer holds follow as the resonant layer.
    The text shows each bloom's layer and stored resonance; --json gives `blooms` (each with
    its `layer`), `count`, `min_resonance` and `excluded`. Memories tagged `archive` or
    `wake-exclude` are kept out unless --include-excluded, with per-tag counts of those that
    would have made the set. The agent's own private memories are included; waking counts as
    an activation unless --no-activate.

    The ritual, for programs: `memlane wake --begin` returns the first bloom's id and title
    and a signed session token (`wk1.`, an HMAC with a secret kept in the store). Then, for
    each chunk (memories are cut into parts of at most 1,500 bytes, titled `(Part i/n)`),
    `memlane wake --respond GUESS --bloom-id ID --session TOKEN` makes one guess from the
    title alone and shows the chunk: `status: shown`, `bucket` `unhinted` (the guess matched
    a phrase, `match.kind` `exact` or `close`) or `revealed`, the phrase `source`
    (`authored`: the memory's wake phrases, first part only; `auto`: a first part's first
    sentence; `derived`: a later part's heading; `unphrased`), the new token and `next`.

    A memory deleted mid-ritual answers `bloom_missing`, one that shrank past the cursor
    `chunk_truncated`: both advance and judge nothing. The last call's token replays its
    response (`replayed: true`, the first guess counts); an older token is refused with the
    token that works. A guess over 2,000 characters or without letters or digits is refused
    without advancing; the wrong bloom is refused with `invalid_bloom_id` naming the
    expected one; only the agent that began may walk. Each judged guess is logged in the
    same transaction as the advance; the final response has a summary (bucket counts per
    phrase source, chunks, `unjudged`). A --wake number already logged is refused without
    --force-wake, and a number below the highest or skipping ahead warns."""
    mem = memory()
    if respond is not None:
        if not bloom_id or not token:
            raise click.UsageError("--respond needs --bloom-id and --session")
        emit_json(mem.wake.respond(token, bloom_id, respond))
        return
    if bloom_id or token:
        raise click.UsageError("--bloom-id and --session go with --respond")
    options: dict[str, Any] = {
        "limit": limit,
        "days": days,
        "min_resonance": min_resonance,
        "include_excluded": include_excluded,
        "activate": not no_activate,
    }
    if begin:
        emit_json(mem.wake.begin(wake=wake_number, model=model, force_wake=force_wake, **options))
        return
    if wake_number is not None or model or force_wake:
        raise click.UsageError("--wake, --model and --force-wake go with --begin")
    chosen = mem.wake(**options)
    if as_json:
        emit_json(
            {
                "blooms": [{**record_dict(r), "layer": chosen.layers[r.id]} for r in chosen.blooms],
                "count": len(chosen.blooms),
                "min_resonance": min_resonance,
                "excluded": chosen.excluded,
            }
        )
        return
    for record in chosen.blooms:
        layer = chosen.layers[record.id]
        click.echo(f"[{layer}] resonance {record.importance}  {record_line(record)}")
        echo_stored(f"    {record.body}\n")
    if min_resonance is not None:
        note(
            f"{len(chosen.blooms)} bloom(s) of resonance {min_resonance} or more (the stored "
            "value, before decay); --limit does not apply"
        )
    if chosen.excluded:
        kept_out = ", ".join(f"{tag}: {n}" for tag, n in chosen.excluded.items())
        note(f"kept out of the wake set: {kept_out} (--include-excluded shows them)")
    if not chosen.blooms:
        note("nothing to wake into yet: no important, recent or bridging memories")


@in_section("lifecycle")
@click.command("wake-fetch")
@click.option("--days", type=int, default=15, show_default=True, help="Days to look back.")
@click.option("--limit", type=int, default=100, show_default=True, help="At most N.")
@click.option(
    "--exclude-tags",
    default="",
    help="Comma-separated tag prefixes: drop memories carrying any of them.",
)
@json_option
def wake_fetch_cmd(days: int, limit: int, exclude_tags: str, as_json: bool) -> None:
    """Facts for a wake presentation: importance 3+, active in --days, most important first.

    --exclude-tags drops any memory with a tag starting with one of the prefixes."""
    prefixes = tuple(p.strip() for p in exclude_tags.split(",") if p.strip())
    records = memory().wake.fetch(days=days, limit=limit, exclude_tags=prefixes)
    if as_json:
        emit_json({"results": [record_dict(r) for r in records], "count": len(records)})
        return
    for record in records:
        click.echo(record_line(record))


@in_section("lifecycle")
@click.group("wake-log")
def wake_log() -> None:
    """Score the ritual's guess log and read it back (the calling agent's rows only)."""


@wake_log.command("score")
@json_option
def score_cmd(as_json: bool) -> None:
    """Score every pending guess. Its whole stdout is {"status":"scored","rows":N,
    "skipped":M}: no similarity, guess or title, so a ritual driver may run it.

    Every pending guess of the agent, oldest first, each written before the next. Axis A:
    `sim_phrase` to the authored phrases, `sim_content` to the memory's stored vectors,
    `sim_title` to the title without its part suffix. Axis B: `sim_prior`, to the centroid
    of the 5 latest earlier guesses on the same bloom and title from other rituals
    (`prior_n` of them), and `sim_prior_null` over up to 10 other blooms; each also split
    `_same` / `_cross` model. Without an embedder it fails and every row stays pending."""
    del as_json  # the output is always that one JSON line
    rows, skipped = memory().wake.score()
    click.echo(json.dumps({"status": "scored", "rows": rows, "skipped": skipped}))


def _out_option(fn: Any) -> Any:
    return click.option(
        "--out",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Write to this file (JSON if it ends in .json) and print only its path.",
    )(fn)


def _check_destination(out: Path | None) -> None:
    """The terminal-only rule: scores never reach a model's context. Without --out,
    stdout must be a terminal; an --out file must be a regular file that is not this
    process's own stdout or stderr. Checked before anything is read."""
    if out is None:
        if not sys.stdout.isatty():
            fail(
                "wake-log reports print to a terminal only (the terminal-only rule): "
                "pass --out FILE"
            )
        return
    if not out.exists():
        return
    found = out.stat()
    if not stat.S_ISREG(found.st_mode):
        fail(f"--out {out} exists and is not a regular file")
    for fd in (1, 2):
        try:
            mine = os.fstat(fd)
        except OSError:
            continue
        if (mine.st_dev, mine.st_ino) == (found.st_dev, found.st_ino):
            fail(f"--out {out} is this process's own stdout or stderr")


def escaped(text: str) -> str:
    """Control characters and bidi controls shown escaped, so a stored guess cannot
    drive or reorder the terminal."""
    out = []
    for char in text:
        code = ord(char)
        if char == "\n":
            out.append("\\n")
        elif (
            code < 0x20
            or code == 0x7F
            or 0x80 <= code < 0xA0
            or 0x200E <= code <= 0x200F
            or 0x202A <= code <= 0x202E
            or 0x2066 <= code <= 0x2069
        ):
            out.append(f"\\u{{{code:x}}}")
        else:
            out.append(char)
    return "".join(out)


def _deliver(payload: dict[str, Any], lines: list[str], out: Path | None, as_json: bool) -> None:
    if out is None:
        if as_json:
            emit_json(payload)
        else:
            echo_stored("\n".join(lines))
        return
    text = json.dumps(payload, indent=2) if out.suffix == ".json" else "\n".join(lines) + "\n"
    try:
        replace_file(out, text)
    except (OSError, ValueError) as exc:
        fail(f"cannot write {out}: {getattr(exc, 'strerror', None) or exc}")
    click.echo(str(out))


def _row_dict(g: WakeGuess) -> dict[str, Any]:
    return {
        "session": g.session_id,
        "step": g.step,
        "wake": g.wake,
        "model": g.model,
        "date": g.created_at.isoformat(),
        "memory_id": g.memory_id,
        "position": g.position,
        "chunk": g.chunk + 1,
        "title": g.title,
        "guess": g.guess,
        "source": g.source,
        "match": g.match_kind,
        "bucket": g.bucket,
        "scored": g.scored_at is not None,
        **{k: g.scores.get(k) for k in _SCORE_FIELDS},
    }


def _row_line(g: WakeGuess) -> str:
    sims = " ".join(f"{k.removeprefix('sim_')}={_num(g.scores.get(k))}" for k in _SCORE_FIELDS)
    return (
        f"wake {g.wake if g.wake is not None else '-'}  {g.created_at:%Y-%m-%d}  "
        f"{g.model or '-'}  #{g.position}.{g.chunk + 1}  {g.bucket:<8} {g.source:<9} "
        f"{escaped(g.title)!s} <- {escaped(g.guess)}  {sims}"
    )


def _num(value: object) -> str:
    return "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def _median(values: list[float]) -> float | None:
    ordered = sorted(values)
    if not ordered:
        return None
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


@wake_log.command(
    "report",
    help=f"Bucket counts and both axes (medians) for one ritual.\n\n"
    f"{GOODHART}\n\nTerminal only: the scores must never reach the model "
    "that guessed, so stdout must be a terminal, or --out FILE (a regular file, "
    "not this process's stdout or stderr; JSON when it ends in .json). Stored "
    "text is shown with control and bidi characters escaped.",
)
@click.option("--wake", "wake_number", type=int, help="Wake to report (default: latest scored).")
@_out_option
@json_option
def report_cmd(wake_number: int | None, out: Path | None, as_json: bool) -> None:
    _check_destination(out)
    mem = memory()
    number = wake_number if wake_number is not None else mem.wake.latest_scored()
    if number is None:
        fail("no scored wake to report: run wake-log score after a ritual", 1)
    rows = mem.wake.log(wake=number)
    buckets: dict[str, dict[str, int]] = {}
    for g in rows:
        counts = buckets.setdefault(g.source, {"unhinted": 0, "revealed": 0})
        counts[g.bucket] += 1
    medians = {
        k: _median([float(v) for g in rows if (v := g.scores.get(k)) is not None])
        for k in _SCORE_FIELDS
    }
    payload = {
        "notice": GOODHART,
        "wake": number,
        "rows": len(rows),
        "buckets": buckets,
        "medians": medians,
    }
    lines = [GOODHART, "", f"wake {number}: {len(rows)} guesses"]
    lines += [
        f"  {source:<9} unhinted {c['unhinted']}  revealed {c['revealed']}"
        for source, c in sorted(buckets.items())
    ]
    lines += [f"  median {k}: {_num(v)}" for k, v in medians.items()]
    _deliver(payload, lines, out, as_json)


@wake_log.command("bloom")
@click.argument("memory_id")
@click.option("--limit", type=int, default=20, show_default=True, help="At most N rows.")
@_out_option
@json_option
def bloom_cmd(memory_id: str, limit: int, out: Path | None, as_json: bool) -> None:
    """One memory across rituals, newest first: the view for retuning a phrase. Terminal
    only, unless --out (see `wake-log report`)."""
    _check_destination(out)
    rows = memory().wake.log(memory_id=memory_id, limit=limit)
    payload = {"notice": GOODHART, "rows": [_row_dict(g) for g in rows]}
    _deliver(payload, [GOODHART, "", *(_row_line(g) for g in rows)], out, as_json)


@wake_log.command("wake")
@click.argument("number", type=int)
@_out_option
@json_option
def wake_rows_cmd(number: int, out: Path | None, as_json: bool) -> None:
    """Every row of one ritual in sequence order. Terminal only, unless --out (see `wake-log
    report`)."""
    _check_destination(out)
    rows = memory().wake.log(wake=number)
    payload = {"notice": GOODHART, "wake": number, "rows": [_row_dict(g) for g in rows]}
    _deliver(payload, [GOODHART, "", *(_row_line(g) for g in rows)], out, as_json)
