"""`quickstart`: a throwaway store, a dozen realistic memories, and the everyday commands."""

from __future__ import annotations

import shlex
import shutil
import tempfile
from pathlib import Path
from typing import Any

import click

from memlane.cli.common import emit_json, in_section, json_option, state
from memlane.cli.render import hit_dict, record_dict, version_dict
from memlane.memory import Memory

# What a coding agent and its developer learn in a week on one project.
SAMPLES: tuple[dict[str, Any], ...] = (
    {
        "content": "Run `make migrate` before the integration tests; they assume the latest schema.",
        "kind": "procedure",
        "tags": "testing,database",
        "importance": 7,
    },
    {
        "content": "We chose PostgreSQL over MongoDB for the billing service because invoices need "
        "multi-row transactions.",
        "type": "decision",
        "tags": "billing,database",
        "importance": 8,
    },
    {
        "content": "Dana prefers small pull requests (under 300 lines) with the test first.",
        "kind": "preference",
        "tags": "review,team",
        "importance": 6,
    },
    {
        "content": "The CI runner has 2 cores; keep the unit suite under 3 minutes or it times out.",
        "kind": "constraint",
        "tags": "ci,testing",
        "importance": 7,
    },
    {
        "content": "Never commit .env files; secrets live in the vault and reach CI as masked "
        "variables.",
        "kind": "convention",
        "tags": "security,ci",
        "importance": 9,
        "resonance_type": "foundational",
    },
    {
        "content": "Flaky test test_invoice_rounding was caused by the system timezone; pin TZ=UTC "
        "in conftest.",
        "kind": "lesson",
        "tags": "testing,billing",
        "importance": 6,
    },
    {
        "content": "Sam owns the payments gateway and is the reviewer for anything touching refunds.",
        "type": "person",
        "tags": "team,billing",
    },
    {
        "content": "Shipped v2.3 of the billing API on Tuesday; the rollout took 40 minutes.",
        "kind": "event",
        "tags": "release,billing",
    },
    {
        "content": "Open question: should refunds be idempotent by request id or by invoice id?",
        "type": "thread_opened",
        "tags": "billing,design",
    },
    {
        "content": "API errors use RFC 7807 problem+json bodies with a stable `type` URI.",
        "kind": "convention",
        "tags": "api",
        "importance": 7,
    },
    {
        "content": "Use `uv pip install` instead of pip in this repo; it is 10x faster here.",
        "kind": "preference",
        "tags": "tooling",
    },
    {
        "content": "Promised the mobile team a sandbox endpoint for refunds by Friday.",
        "type": "commitment",
        "tags": "billing,mobile",
        "importance": 6,
    },
)


# What an agent would ask before touching refunds: the owner, the open question and
# the promise are all in the samples, under other words.
RECALL_QUERY = "what should I know before changing refunds?"


def _summary(mem: Memory, db: str, ids: list[str | None], first: str) -> dict[str, Any]:
    return {
        "db": db,
        "ids": ids,
        "list": [record_dict(r) for r in mem.list(limit=5)],
        "search": [hit_dict(h) for h in mem.search("database tests", limit=5)],
        "recall": [
            {**record_dict(h.record), "score": round(h.score, 6)}
            for h in mem.recall(RECALL_QUERY, limit=3, count=False).hits
        ],
        "show": record_dict(mem.get(first)),
        "history": [version_dict(v) for v in mem.history(first)],
    }


def _run(ctx: click.Context, db: str, *args: str) -> None:
    """Run a memlane command line against the quickstart store, as a user would type it."""
    click.secho(f"\n$ memlane {shlex.join(args)}", bold=True)
    root = ctx.find_root().command
    root.main(["--db", db, *args], prog_name="memlane", standalone_mode=False)


@in_section("admin")
@click.command("quickstart")
@click.option("--keep", is_flag=True, help="Keep the store and print its path.")
@json_option
@click.pass_context
def quickstart_cmd(ctx: click.Context, keep: bool, as_json: bool) -> None:
    """Create a throwaway store, add a dozen memories, and show
    list/search/recall/show/history.

    The memories go through the real write path, embedded by the store's profile (MiniLM,
    locally, by default); then `list`, `search` (by keyword and by meaning), `recall`,
    `entities list`, `show`, `history` and `stats` print what they hold. The store is
    removed afterwards unless --keep."""
    folder = Path(tempfile.mkdtemp(prefix="memlane-quickstart-"))
    st = state()
    st.close()
    st.db = str(folder / "memlane.db")
    try:
        mem = st.memory()
        result = mem.add_batch(dict(s, session_id="qs-1") for s in SAMPLES)
        first = result.ids[0] or ""
        mem.update(
            first,
            append=" Use `make migrate-test` for the test database.",
            reason="learned the test target",
        )
        mem.update(first, add_tags=("onboarding",), reason="tagged for new joiners")
        if as_json:
            emit_json({"added": result.added, **_summary(mem, st.db, result.ids, first)})
            return
        click.echo(f"Stored {result.added} memories in {st.db}")
        by_meaning = mem.embedder is not None and not mem.store.unembedded(
            mem.embedder.profile.signature
        )
        st.close()
        short = first[:6]
        _run(ctx, st.db, "list", "--limit", "5")
        _run(ctx, st.db, "search", "database tests", "--limit", "5")
        if by_meaning:  # the vector lane, when an embedder is available here
            _run(
                ctx,
                st.db,
                "search",
                "who should review a refund change?",
                "--mode",
                "hybrid",
                "--limit",
                "3",
            )
        _run(ctx, st.db, "recall", RECALL_QUERY, "--limit", "3")
        _run(ctx, st.db, "entities", "list", "--limit", "5")
        _run(ctx, st.db, "show", short)
        _run(ctx, st.db, "history", short)
        _run(ctx, st.db, "stats")
    finally:
        st.close()
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
        elif not as_json:
            click.echo(f"\nStore kept at {st.db}")
