"""Reading: show, list, search, recent, history, stats."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import click

from memlane import config
from memlane.cli.common import (
    SETTINGS_PROBLEMS,
    echo_stored,
    emit_json,
    in_section,
    json_option,
    memory,
    min_score_option,
    note,
    state,
)
from memlane.cli.render import (
    fenced,
    hit_dict,
    plain,
    record_dict,
    record_line,
    said_nothing,
    show_record,
    version_dict,
)
from memlane.errors import MemlaneError
from memlane.memory import Memory
from memlane.model import FAIL, OK, WARN, Check, Filters, Kind, as_dict
from memlane.retrieve.present import printable


def _once(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> str | None:
    if len(value) > 1:
        raise click.BadParameter("give it once; comma-separate several prefixes")
    return value[0] if value else None


_FILTERS: list[Callable[[Any], Any]] = [
    click.option(
        "--scope",
        help="Scopes to read (comma-separated), or 'all'. Default: this branch, project and global.",
    ),
    click.option("-c", "--category", help="Categories (comma-separated)."),
    click.option("--kind", help=f"Kinds (comma-separated): {', '.join(k.value for k in Kind)}."),
    click.option("--tags", help="Tags (comma-separated, matches any)."),
    click.option(
        "--exclude-tags",
        multiple=True,
        callback=_once,
        help="Tag prefixes to drop (comma-separated, give once).",
    ),
    click.option(
        "--min-resonance",
        "--min-importance",
        "min_importance",
        type=float,
        help="Minimum effective (decayed) resonance.",
    ),
    click.option(
        "--max-resonance",
        "--max-importance",
        "max_importance",
        type=float,
        help="Maximum effective (decayed) resonance.",
    ),
    click.option(
        "--resonance-basis",
        type=click.Choice(["decayed", "raw"]),
        help="What --min-resonance and --max-resonance compare: decayed (default) or the raw "
        "stored value.",
    ),
    click.option("--has-wake-phrase", is_flag=True, help="Only memories with a wake phrase."),
    click.option(
        "--missing-wake-phrase", is_flag=True, help="Only memories without a wake phrase."
    ),
    click.option("--has-anchors", is_flag=True, help="Only memories with anchors."),
    click.option("--missing-anchors", is_flag=True, help="Only memories without anchors."),
    click.option("--has-resonance-type", is_flag=True, help="Only memories with a resonance type."),
    click.option(
        "--missing-resonance-type", is_flag=True, help="Only memories without a resonance type."
    ),
    click.option("--mine", is_flag=True, help="Only your private memories (MEMLANE_AGENT)."),
    click.option("--include-private", is_flag=True, help="Include your private memories."),
    click.option("--since", help="Only memories from this instant on (event time, else creation)."),
    click.option("--until", help="Only memories before this instant."),
    click.option("--as-of", help="Read the store as it was at this instant (ISO-8601)."),
    click.option(
        "--include-superseded",
        is_flag=True,
        help="Include superseded, invalidated and retired memories.",
    ),
    click.option("--session-id", help="Only memories of this session."),
]
LIST_LIMIT = 50


def filter_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The shared filter flags and `--limit` (default 50, 0: no limit): listings."""
    limit = click.option(
        "--limit",
        type=int,
        default=LIST_LIMIT,
        show_default=True,
        help="Most results (0: no limit).",
    )
    return filters_only(limit(fn))


def filters_only(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The shared filter flags without `--limit`, for commands with their own."""
    for option in reversed(_FILTERS):
        fn = option(fn)
    return fn


def _nothing(mem: Memory, filters: Filters, query: str | None = None) -> None:
    """An empty answer, and how many memories other scopes hold for it (stderr only)."""
    note("no memories matched")
    try:
        elsewhere = mem.elsewhere_count(filters, query)
    except Exception:  # the hint never fails a read
        return
    if elsewhere:
        note(f"{elsewhere} in other scopes than this folder's: add --scope all to see them")


def _hint_hidden(mem: Memory, filters: Filters, query: str | None = None) -> None:
    """Best effort: tell the viewer their own private memories were hidden (stderr only)."""
    try:
        hidden = mem.hidden_private_count(filters, query)
    except Exception:  # the hint never fails a read
        return
    if hidden:
        note(
            f"{hidden} private entries of yours matched but are hidden; "
            "use --include-private to see them"
        )


@in_section("memory ops")
@click.command("show")
@click.argument("memory_id")
@click.option("--content-only", is_flag=True, help="Print only the body (for piping).")
@click.option("--as-of", help="Show the version valid at this instant (ISO-8601).")
@json_option
def show_cmd(memory_id: str, content_only: bool, as_of: str | None, as_json: bool) -> None:
    """Show one memory by id or unambiguous id prefix.

    Text output is fenced (`<memlane-memory id=...>`) with the memory's provenance marks
    (`[UNTRUSTED WEB]`, `[UNTRUSTED TOOL]`, `[INJECTION RISK]`, `[STALE SOURCE: ...]`).
    --json prints every field, with the memory's entities, links and chunk count.
    --content-only prints the body alone; --as-of T shows the content version valid at T."""
    mem = memory()
    record = mem.get(memory_id, as_of=as_of)
    if as_json and not content_only:
        links = [
            {"type": ln.type.value, "source": ln.source, "target": ln.target}
            for ln in mem.graph.links(record.id)
        ]
        entities = [e.name for e in mem.graph.entities_of(record.id)]
        emit_json(
            {
                **record_dict(record),
                "entities": entities,
                "links": links,
                "chunks": mem.chunk_count(record.id),
            }
        )
    elif as_json:
        emit_json({"id": record.id, "body": record.body})
    elif content_only:
        echo_stored(record.body)
    else:
        show_record(record)


@in_section("memory ops")
@click.command("list")
@filter_options
@click.option(
    "--sort",
    "order",
    type=click.Choice(["recent", "created", "oldest", "importance"]),
    default="recent",
    show_default=True,
    help="Order of the listing.",
)
@json_option
def list_cmd(as_json: bool, **options: Any) -> None:
    """List memories, filtered by the shared filter flags.

    `search` and `recall` take the same filters. A time (--since, --until, --as-of) is
    ISO-8601, a span back from now (`24h`, `7d`, `2w`, `90 min`) or words such as
    `yesterday` or `last friday`. --as-of T reads the store as it was at T, each memory with
    the content version valid then. --min-resonance and --max-resonance compare the
    effective (decayed) resonance unless --resonance-basis raw. --exclude-tags takes tag
    prefixes, given once.

    Reads are public-only by default: when your own private memories matched but were
    hidden, a note on stderr says so; when nothing matched here but other scopes hold
    matches, a note says how many. A memory whose `file:` source changed or vanished since
    it was written is marked `[STALE SOURCE: changed]` (`source_state` in JSON) and its
    confidence halved."""
    mem = memory()
    filters = mem.filters(**options)
    records = mem.list(filters)
    if as_json:
        emit_json({"results": [record_dict(r) for r in records], "count": len(records)})
    else:
        for record in records:
            click.echo(record_line(record))
        if not records:
            _nothing(mem, filters)
    _hint_hidden(mem, filters)


@in_section("recall")
@click.command("search")
@click.argument("query")
@filter_options
@click.option(
    "--mode",
    type=click.Choice(["keyword", "vector", "hybrid"]),
    default="keyword",
    show_default=True,
    help="Keyword (BM25), vector (by meaning) or hybrid (both, fused).",
)
@click.option("--semantic", is_flag=True, help="Same as --mode vector.")
@click.option("--activate", is_flag=True, help="Reset the decay clock of what is returned.")
@min_score_option
@json_option
def search_cmd(
    query: str,
    mode: str,
    semantic: bool,
    activate: bool,
    min_score: float | None,
    as_json: bool,
    **options: Any,
) -> None:
    """Search titles, bodies and tags by keyword, by meaning, or both; any text is safe.

    Keyword mode is BM25 over title, body and tags, with stemming, and the shared filters of
    `list`. Every word must match; when nothing does, all words but one (for 3-6 words);
    then any word. Common function words ("the", "where", "do") are dropped from a query
    that has other words; `word*` matches a prefix; quotes, parentheses, AND, `*`, `-` and
    `:` are plain text. When the words match more than 5,000 memories, the newest 5,000
    matches are ranked first, and a page they cannot fill is ranked from every match. The
    any-word step ranks at most 1,000 matches, shared among the words: a rare word's matches
    are all ranked and a common word's newest fill the rest. SQLite and PostgreSQL stores
    give the same keyword results.

    --mode vector (or --semantic) searches by meaning with the store's embedding profile;
    --mode hybrid fuses the keyword, vector and entity lanes as `recall` does, with the
    memories of a time the query names ("in May 2025", "last week"). Text output
    is fenced (`<memlane-search>`), each memory with its provenance marks (`[UNTRUSTED
    WEB]`, `[UNTRUSTED TOOL]`, `[INJECTION RISK]`, `[STALE SOURCE: ...]`). --activate marks
    the results as consumed on purpose: their decay clocks reset. By meaning (vector,
    hybrid), a search finds nothing when the nearest memory is below the relevance floor
    (--min-score; see `recall`)."""
    mem = memory()
    filters = mem.filters(**options)
    chosen = "vector" if semantic else mode
    found = mem.searched(query, filters, mode=chosen, activate=activate, min_score=min_score)
    hits, evidence = found.hits, found.evidence
    if as_json:
        emit_json(
            {
                "query": query,
                "results": [hit_dict(h) for h in hits],
                "count": len(hits),
                "abstained": found.abstained,
                "evidence": None if evidence is None else evidence.to_json(),
            }
        )
    elif hits:
        lines = [record_line(hit.record, hit.score) for hit in hits]
        click.echo("\n".join(fenced("search", lines)))
    elif found.abstained and evidence is not None:
        said_nothing("search", evidence)
    else:
        _nothing(mem, filters, query)
    _hint_hidden(mem, filters, query)


@in_section("memory ops")
@click.command("recent")
@click.option("--days", type=int, default=10, show_default=True, help="How many days back.")
@click.option("--all-types", is_flag=True, help="All resonance types, not only ephemeral facts.")
@click.option("--resonance-type", help="Only this resonance type.")
@click.option(
    "--sort",
    type=click.Choice(["chronological", "resonance"]),
    default="chronological",
    show_default=True,
    help="Newest first, or highest resonance first.",
)
@click.option("--limit", type=int, default=100, show_default=True, help="Most results.")
@click.option("--scope", help="Scopes to read, or 'all'.")
@click.option("--as-of", help="What was recent at this instant: the --days before it.")
@json_option
def recent_cmd(
    days: int,
    all_types: bool,
    resonance_type: str | None,
    sort: str,
    limit: int,
    scope: str | None,
    as_of: str | None,
    as_json: bool,
) -> None:
    """Recent memories: ephemeral facts of the last days by default.

    --all-types lists every resonance type, --resonance-type one of them. --as-of T lists
    what was recent at T: the --days before T, as the store read at T (memories created
    by then and valid then, each with the content version of then)."""
    records = memory().recent(
        days, all_types, resonance_type, sort, limit, as_of=as_of, scope=scope
    )
    if as_json:
        emit_json({"results": [record_dict(r) for r in records], "count": len(records)})
        return
    for record in records:
        click.echo(record_line(record))
    if not records:
        note("nothing recent" + ("" if all_types else " (ephemeral only; --all-types for all)"))


@in_section("memory ops")
@click.command("history")
@click.argument("memory_id")
@json_option
def history_cmd(memory_id: str, as_json: bool) -> None:
    """List every content version of a memory with its validity interval.

    Oldest first, each with the reason it ended. `update`, `edit`, `append`, `prepend` and
    `restore` keep the id and archive the prior content as a version; `show --as-of T` reads
    the version valid at T."""
    versions = memory().history(memory_id)
    if as_json:
        emit_json({"id": versions[-1].memory_id, "versions": [version_dict(v) for v in versions]})
        return
    for v in versions:
        until = plain(v.valid_until) if v.valid_until else "now"
        click.echo(
            printable(f"v{v.number}  {plain(v.valid_from)} .. {until}  {v.reason}  {v.title}")
        )


@in_section("admin")
@click.command("stats")
@json_option
def stats_cmd(as_json: bool) -> None:
    """Counts: memories, live, superseded, invalidated, retired, versions, links, by kind/category/scope/class,
    and how many `review` lists here (due for review).

    It counts the memories you may see (the public ones and your own private ones), their
    versions and the links between two of them. Every aggregate (`growth`, `health`,
    `open-threads`, `tags list`, `entities list`, `agents show`, `journal`, `export`, the
    counts `doctor` prints) counts the same way: another owner's private memories change
    none of its numbers."""
    mem = memory()
    data = {**as_dict(mem.stats()), "due_for_review": mem.review_due_count()}
    missing = state().missing_store()
    if missing is not None:  # an empty store read in its place
        data["path"] = f"{missing} (no store yet)"
    if as_json:
        emit_json(data)
        return
    for key in (
        "path",
        "schema_version",
        "total",
        "live",
        "superseded",
        "invalidated",
        "retired",
        "versions",
        "links",
        "due_for_review",
    ):
        click.echo(f"{key + ':':<16}{data[key]}")
    for group in ("by_kind", "by_class", "by_category", "by_scope"):
        counts = ", ".join(f"{k} {v}" for k, v in data[group].items()) or "-"
        click.echo(f"{group + ':':<16}{counts}")


@in_section("admin")
@click.command("journal")
@click.argument("memory_id", required=False)
@click.option(
    "--limit", type=int, default=50, show_default=True, help="Most entries, newest first."
)
@json_option
def journal_cmd(memory_id: str | None, limit: int, as_json: bool) -> None:
    """Show the append-only journal of changes (never content).

    Each entry: the operation, the memory id, the actor and the time; ID narrows to one
    memory."""
    entries = memory().journal(memory_id, limit)
    if as_json:
        emit_json([plain(as_dict(e)) for e in entries])
        return
    for e in entries:
        click.echo(f"{plain(e.at)}  {e.operation:<18} {e.memory_id or '-':<12} {e.actor or '-'}")


@in_section("admin")
@click.command("doctor")
@json_option
def doctor_cmd(as_json: bool) -> None:
    """Check the store, SQLite, the recall lanes and indexes, backups, locks, the settings
    and the MCP token (never shown); read-only. Each problem names its fix; exit 1 when a
    check fails.

    One line per check (`ok`, `warn`, `fail`), with `fix:` and the exact command when a
    check is not ok:

    \b
    - the store (path, schema, counts) and the file's permissions (others may read it:
      `chmod 600`);
    - SQLite (version, FTS5, WAL) and integrity: `quick_check` of every page and index, a
      scan for stored text that is not UTF-8, each FTS index against its content (a damaged
      store names `restore --from SNAPSHOT --force`);
    - the vector lane (absent and why, a model that cannot load, a store made with another
      profile names `reembed`; the model file's sha256), memories without current vectors
      (`embed --pending`) and the vector index file beside the store;
    - whether entity mentions are current, how many memories are due for review (`warn`
      naming `review` when any are), the newest verified backup and its age, the
      consolidate/organize maintenance lock;
    - the settings: a value that does not parse, or recall weights that do not sum to 1,
      is reported here while every other command refuses it;
    - the MCP token's reach (none, unscoped operator, or the scopes it is confined to).

    A store that cannot be opened (damaged, empty, not a database) is diagnosed from a
    read-only look at its pages instead of failing; doctor never creates or changes the
    file. On a PostgreSQL store the SQLite checks give way to the server's: its version (12
    or newer), the `vector` extension (pgvector 0.5+, for HNSW), the GIN keyword indexes, an
    HNSW index per vector dimension (a missing one names its CREATE INDEX) and the
    connection pool; file permissions, the vector index file and snapshots say "n/a on
    PostgreSQL"."""
    s = state().settings
    missing = state().missing_store()
    if missing is None:
        backups = Path(s["backup_dir"]).expanduser() if s["backup_dir"] else None
        try:
            checks = memory().admin.doctor(backups, timedelta(hours=s["backup_interval_hours"]))
        except MemlaneError as exc:  # a store that cannot be opened is diagnosed, not fatal
            checks = Memory.diagnose(state().location(), exc)
    else:  # nothing to check, and nothing is made to check it
        checks = [
            Check(
                "store",
                WARN,
                f"no store at {missing} yet: nothing has been stored",
                "memlane add creates it; or --db names the wrong file",
            )
        ]
    checks += [*_settings_checks(), _token_check(s)]
    if as_json:
        emit_json([as_dict(c) for c in checks])
    else:
        for check in checks:
            click.echo(f"{check.status:<5} {check.name:<16} {check.detail}")
            if check.fix:
                click.echo(f"{'':<22}fix: {check.fix}")
    if any(c.status == FAIL for c in checks):
        raise SystemExit(1)


def _settings_checks() -> list[Check]:
    """Settings that do not parse or do not fit together (doctor ran with their
    defaults instead)."""
    bad = click.get_current_context().meta.get(SETTINGS_PROBLEMS, [])
    checks = [Check("settings", FAIL, problem, _settings_fix(problem)) for problem in bad]
    return checks or [Check("settings", OK, f"all {len(config.SETTINGS)} settings valid")]


def _settings_fix(problem: str) -> str:
    """What to do about a bad setting: the environment variables it names, else the file."""
    unknown = re.search(r"unknown setting '([^']+)'", problem)
    if unknown:
        return f"remove it: `memlane settings unset {unknown[1]}`"
    if "[env]" in problem:
        return "fix or remove it in the settings file's [env] table"
    names = re.findall(r"MEMLANE_[A-Z_]+", problem)
    if names:
        return "fix or unset " + " ".join(names)
    return "fix it in the settings file (`memlane settings set` or `memlane settings unset`)"


def _token_check(s: dict[str, Any]) -> Check:
    """The MCP token's reach (never its value): scoped, an operator's, or none."""
    from memlane.server.auth import load_tokens

    try:
        grants = load_tokens(s["mcp_token"], s["mcp_token_file"])
    except MemlaneError as exc:
        return Check(
            "mcp token", FAIL, str(exc), "fix MEMLANE_MCP_TOKEN_FILE (see docs/commands.md, serve)"
        )
    if not grants:
        return Check("mcp token", OK, "none set: `serve --http` will refuse to start")
    unscoped = [g for g in grants.values() if g.scopes is None]
    if unscoped:
        return Check(
            "mcp token",
            WARN,
            f"{len(grants)} token(s), {len(unscoped)} unscoped: full access to every scope",
            "confine it with MEMLANE_MCP_TOKEN_FILE",
        )
    scopes = sorted({x for g in grants.values() for x in g.scopes or ()})
    return Check("mcp token", OK, f"scoped to {', '.join(scopes)}")
