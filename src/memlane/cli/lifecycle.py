"""Lifecycle commands: reinforce, feedback, review, reviewed, remind and reminders."""

from __future__ import annotations

from datetime import datetime

import click

from memlane.cli.common import emit_json, fail, in_section, json_option, memory, note
from memlane.cli.render import record_dict, record_line
from memlane.model import REINFORCE_CAP, Reminder, Session


@in_section("lifecycle")
@click.command("reinforce")
@click.argument("memory_id")
@click.option("--amount", type=int, default=1, show_default=True, help="Importance to add.")
@click.option(
    "--cap",
    type=int,
    default=REINFORCE_CAP,
    show_default=True,
    help=f"Highest importance it reaches (1-{REINFORCE_CAP}).",
)
@json_option
def reinforce_cmd(memory_id: str, amount: int, cap: int, as_json: bool) -> None:
    """Raise a memory's importance, reset its decay clock and count the activation.

    Importance rises by --amount, never above --cap and never lowered; the decay clock is
    `last_activated`. A new link reinforces its target the same way (see `links add`);
    `recall --activate` resets the clock of what it returns."""
    record = memory().reinforce(memory_id, amount, cap)
    if as_json:
        emit_json(record_dict(record))
    else:
        click.echo(
            f"Reinforced {record.id}: importance {record.importance}, "
            f"activated {record.activation_count} time(s)"
        )


@in_section("lifecycle")
@click.command("feedback")
@click.argument("memory_id")
@click.option("--applied", is_flag=True, help="It was applied and held.")
@click.option("--violated", is_flag=True, help="It was violated.")
@json_option
def feedback_cmd(memory_id: str, applied: bool, violated: bool, as_json: bool) -> None:
    """Count one use of a memory: applied, or violated (the second violation costs 0.15
    trust).

    --applied: it was applied and held; --violated: it was violated. These are the only
    writers of `applied_count` and `violated_count`; the trust is lowered once."""
    if applied == violated:
        raise click.UsageError("say how it went: --applied or --violated (one of them)")
    record = memory().feedback(memory_id, applied=applied)
    if as_json:
        emit_json(record_dict(record))
    else:
        click.echo(
            f"Feedback on {record.id}: applied {record.applied_count}, "
            f"violated {record.violated_count}, trust {record.trust_score:.2f}"
        )


@in_section("lifecycle")
@click.command("review")
@click.option("--limit", type=int, help="At most N.")
@click.option("--scope", help="Scope (default: this project and global; 'all': everything).")
@click.option("--tui", is_flag=True, help="Walk them in the terminal browser, acting on each.")
@json_option
def review_cmd(limit: int | None, scope: str | None, tui: bool, as_json: bool) -> None:
    """Important memories whose recall has decayed since their last review: check, refine or
    retire them (most decayed first).

    A memory is due when its importance is at least MEMLANE_REVIEW_MIN_IMPORTANCE (5) and
    its recall probability since it was last reviewed (else created) fell below
    MEMLANE_REVIEW_THRESHOLD (0.5: one half-life of its class, 3 days for events, 90 for
    facts, 180 for procedures; MEMLANE_RECALL_HALF_LIVES changes them). --tui walks them in
    the terminal browser instead, one card at a time: `c` confirms (marks reviewed), `e`
    edits the body in place (a new version), `i` invalidates with a reason, `x` retires, `n`
    skips.

    How many are due (what a plain `memlane review` lists from the same directory) is shown
    by `stats` and `health` (`due_for_review`), by `doctor` (a `review` check: `warn` when
    any are due, never `fail`) and by a bare `memlane`."""
    if tui:
        from memlane.cli.browse import DEFAULT_LIMIT, on_terminal, run_browser

        if not on_terminal():
            fail("--tui needs a terminal; without it, review lists the memories due")
        run_browser("kind", scope, DEFAULT_LIMIT, review=True, review_limit=limit)
        return
    due = memory().lifecycle.review(limit=limit, scope=scope)
    if as_json:
        emit_json(
            {
                "results": [{**record_dict(r), "recall_probability": round(p, 4)} for r, p in due],
                "count": len(due),
            }
        )
        return
    for record, probability in due:
        click.echo(f"{probability:5.2f}  {record_line(record)}")
    if not due:
        note("nothing is due for review")


@in_section("lifecycle")
@click.command("reviewed")
@click.argument("memory_id")
@json_option
def reviewed_cmd(memory_id: str, as_json: bool) -> None:
    """Mark a memory reviewed: its review curve starts again."""
    record = memory().lifecycle.reviewed(memory_id)
    if as_json:
        emit_json(record_dict(record))
    else:
        click.echo(f"Reviewed {record.id}")


def _local(at: datetime) -> str:
    """A UTC instant as this machine's local time, for people."""
    return at.astimezone().strftime("%Y-%m-%d %H:%M %Z")


def reminder_dict(reminder: Reminder) -> dict[str, object]:
    return {
        "id": reminder.id,
        "text": reminder.text,
        "due_at": reminder.due_at.isoformat(),
        "due_local": _local(reminder.due_at),
        "created_at": reminder.created_at.isoformat(),
        "project": reminder.project,
        "dismissed_at": reminder.dismissed_at.isoformat() if reminder.dismissed_at else None,
    }


def _reminder_line(reminder: Reminder) -> str:
    done = "  (dismissed)" if reminder.dismissed_at else ""
    return f"{reminder.id}  {_local(reminder.due_at)}  {reminder.text}{done}"


@in_section("lifecycle")
@click.command("remind")
@click.argument("when")
@click.argument("text", nargs=-1, required=True)
@click.option("--tz", "timezone", help="Time zone WHEN is read in (IANA name; default UTC).")
@json_option
def remind_cmd(when: str, text: tuple[str, ...], timezone: str | None, as_json: bool) -> None:
    """Remind this agent of TEXT at WHEN ("in 2 hours", "friday 5pm", "2026-12-24 18:00").

    The reminder is this agent's (MEMLANE_AGENT). WHEN is natural language ("tomorrow at
    9am", "next monday", an ISO date and time) read in --tz (an IANA zone; UTC by default),
    stored in UTC and shown in local time."""
    reminder = memory().lifecycle.remind(when, " ".join(text), timezone=timezone)
    if as_json:
        emit_json(reminder_dict(reminder))
    else:
        click.echo(f"Reminder {reminder.id} due {_local(reminder.due_at)}: {reminder.text}")


@in_section("lifecycle")
@click.group("reminders")
def reminders() -> None:
    """This agent's reminders: list, dismiss, check (add one with `memlane remind`)."""


@reminders.command("list")
@click.option("--all", "include_dismissed", is_flag=True, help="Include dismissed reminders.")
@json_option
def reminders_list(include_dismissed: bool, as_json: bool) -> None:
    """Pending reminders, soonest first (--all: dismissed ones too)."""
    found = memory().lifecycle.reminders(include_dismissed=include_dismissed)
    if as_json:
        emit_json({"reminders": [reminder_dict(r) for r in found], "count": len(found)})
        return
    for reminder in found:
        click.echo(_reminder_line(reminder))
    if not found:
        note("no reminders")


@reminders.command("dismiss")
@click.argument("reminder_id")
@json_option
def reminders_dismiss(reminder_id: str, as_json: bool) -> None:
    """Dismiss a pending reminder."""
    memory().lifecycle.dismiss(reminder_id)
    if as_json:
        emit_json({"dismissed": reminder_id})
    else:
        click.echo(f"Dismissed {reminder_id}")


@reminders.command("check")
@json_option
def reminders_check(as_json: bool) -> None:
    """The reminders that are due now (what a session-start hook calls).

    Nothing printed, exit 0, when none are due."""
    due = memory().lifecycle.due_reminders()
    if as_json:
        emit_json({"due": [reminder_dict(r) for r in due], "count": len(due)})
        return
    for reminder in due:
        click.echo(f"Reminder due: {_reminder_line(reminder)}")


@in_section("lifecycle")
@click.command("open-threads")
@json_option
def open_threads_cmd(as_json: bool) -> None:
    """Threads still open (or never given a state), newest first.

    Live memories you may see of kind `thread`, and those filed in the `thread` category
    (but the events that close a thread); `update --state closed` closes one. --json prints
    an array."""
    found = memory().lifecycle.open_threads()
    if as_json:
        emit_json([record_dict(r) for r in found])
        return
    for record in found:
        click.echo(record_line(record))
    if not found:
        note("no open threads")


@in_section("lifecycle")
@click.command("growth")
@json_option
def growth_cmd(as_json: bool) -> None:
    """Memories written in each of the last 8 weeks, oldest first.

    --json prints an array of 8 integers."""
    counts = memory().lifecycle.growth()
    if as_json:
        emit_json(counts)
        return
    for weeks_ago, count in zip(range(len(counts), 0, -1), counts, strict=True):
        click.echo(f"{weeks_ago} week(s) ago  {count:>6}  {'#' * min(count, 60)}")


@in_section("lifecycle")
@click.command("health")
@json_option
def health_cmd(as_json: bool) -> None:
    """Embedding and anchor coverage of the live memories, faded important ones, and how
    many `review` lists here (due for review).

    Over the live memories you may see: the share with current vectors of the store's
    profile, the share with at least one anchor, how many were written as important
    (importance 7 or more) and have faded below 5 since, and `due_for_review`."""
    mem = memory()
    vitals = mem.lifecycle.health()
    due = mem.review_due_count()
    embedded = _share(vitals.embedded, vitals.live)
    anchored = _share(vitals.anchored, vitals.live)
    if as_json:
        emit_json(
            {
                "live": vitals.live,
                "embedding_coverage": embedded,
                "anchor_coverage": anchored,
                "stale_high_resonance": vitals.stale_high,
                "due_for_review": due,
            }
        )
        return
    click.echo(f"live memories          {vitals.live}")
    click.echo(f"embedding coverage     {embedded:.0%} ({vitals.embedded})")
    click.echo(f"anchor coverage        {anchored:.0%} ({vitals.anchored})")
    click.echo(f"stale high-resonance   {vitals.stale_high}")
    click.echo(f"due for review         {due}" + (" (memlane review)" if due else ""))


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def session_dict(session: Session) -> dict[str, object]:
    return {
        "id": session.id,
        "type": session.type,
        "project": session.project,
        "agent": session.agent,
        "started_at": session.started_at.isoformat(),
        "ended_at": session.ended_at.isoformat() if session.ended_at else None,
    }


def _session_line(session: Session) -> str:
    state = f"closed {_local(session.ended_at)}" if session.ended_at else "open"
    kind = f" [{session.type}]" if session.type else ""
    return f"{session.id}{kind}  {session.project or '-'}  {_local(session.started_at)}  {state}"


@in_section("lifecycle")
@click.group("sessions")
def sessions() -> None:
    """Working sessions that memories belong to: list, create, close."""


@sessions.command("list")
@click.option("--project", help="Only this project's sessions.")
@json_option
def sessions_list(project: str | None, as_json: bool) -> None:
    """Sessions, newest first."""
    found = memory().lifecycle.sessions(project)
    if as_json:
        emit_json({"sessions": [session_dict(s) for s in found], "count": len(found)})
        return
    for session in found:
        click.echo(_session_line(session))
    if not found:
        note("no sessions")


@sessions.command("create")
@click.option("--session-type", "session_type", help="development, review, exploration...")
@click.option("--project", help="Its project (default: this directory's).")
@json_option
def sessions_create(session_type: str | None, project: str | None, as_json: bool) -> None:
    """Open a new session; add memories to it with `memlane add --session-id ID`.

    A session id a write names is also recorded on its own, without this command."""
    session = memory().lifecycle.create_session(session_type, project)
    if as_json:
        emit_json(session_dict(session))
    else:
        click.echo(f"Session {session.id} open")


@sessions.command("close")
@click.argument("session_id")
@click.option("--no-summary", is_flag=True, help="Write no summary memory of the session.")
@json_option
def sessions_close(session_id: str, no_summary: bool, as_json: bool) -> None:
    """Close an open session and write an extractive summary memory of its memories, linked
    to them (none when it has no memories).

    An agent may close its own session, one no agent started, or one it wrote in; another
    agent's is "no open session". The summary is one memory (kind and category `summary`,
    tagged `episode`, source ref `session:ID`) holding the most central sentences of the
    session's live memories you may see (at most 5 whole sentences and 800 characters, in
    the order written, no model), linked to each of them with `derives`. It is as sure and
    as tainted as the memories it quotes, private when any of them is, and not itself a
    member of the session. --no-summary writes none; --json adds `summary_id` and
    `summarised` (the ids it links to)."""
    closed = memory().packs.close_session(session_id, summary=not no_summary)
    if as_json:
        emit_json(
            {
                **session_dict(closed),
                "summary_id": closed.summary_id,
                "summarised": list(closed.summarised),
                "warnings": list(closed.warnings),
            }
        )
        return
    done = f"; summary {closed.summary_id} of {len(closed.summarised)} memories"
    click.echo(f"Session {closed.id} closed{done if closed.summary_id else ''}")
    for warning in closed.warnings:
        note(warning)


@in_section("lifecycle")
@click.command("for-session")
@click.argument("session_id")
@json_option
def for_session_cmd(session_id: str, as_json: bool) -> None:
    """The memories of a session, newest first.

    Only those you may see."""
    found = memory().lifecycle.for_session(session_id)
    if as_json:
        emit_json({"results": [record_dict(r) for r in found], "count": len(found)})
        return
    for record in found:
        click.echo(record_line(record))


@in_section("lifecycle")
@click.command("fact-session")
@click.argument("memory_id")
@json_option
def fact_session_cmd(memory_id: str, as_json: bool) -> None:
    """The session a memory came from."""
    session = memory().lifecycle.fact_session(memory_id)
    if as_json:
        emit_json(session_dict(session))
    else:
        click.echo(_session_line(session))
