"""The promotion ladder: when a memory has earned a wider scope. Pure.

A memory climbs one rung at a time: a branch's memory to its project, a project's to
global. Only explicit usage feedback (`memlane feedback`) earns a climb: being shown
or read counts for nothing, so nothing promotes itself by being surfaced often.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import msgspec

from memlane.model import Kind, Record, Taint
from memlane.scope import GLOBAL, scope_project

# Applied this many times and never violated: one use may be luck, three held uses
# are a pattern.
MIN_APPLIED = 3
# At least this old: a week spans several sessions, so the uses are not one
# session's burst of enthusiasm.
MIN_AGE = timedelta(days=7)
# Grounded at least as a deliberate note or a reviewer's word: an ungrounded
# self-opinion (signal none, 0.2) never climbs however often it is applied.
MIN_CONFIDENCE = 0.6
# What may leave a project for global: knowledge about how to work, which carries to
# other projects. Facts, decisions and events about one project stay in it.
PORTABLE_KINDS = frozenset(
    {
        Kind.LESSON,
        Kind.CONVENTION,
        Kind.PROCEDURE,
        Kind.PREFERENCE,
        Kind.CONSTRAINT,
        Kind.INSIGHT,
    }
)


class Verdict(msgspec.Struct, frozen=True):
    """Whether one memory may climb a rung: where to, and why (or why not)."""

    id: str
    scope: str
    target: str | None  # the next rung; None at the top (global)
    eligible: bool
    why: str


def next_rung(scope: str) -> str | None:
    """The scope one rung up: a branch's project, a project's global; None at global."""
    project, branch = scope_project(scope)
    if project is None:
        return None
    return f"project:{project}" if branch else GLOBAL


def judge(record: Record, now: datetime) -> Verdict:
    """Whether `record` is eligible for promotion now, with the first rule it fails or
    the evidence that makes it eligible."""
    target = next_rung(record.scope)
    refusal = _refusal(record, target, now)
    if refusal is not None:
        return Verdict(record.id, record.scope, target, False, refusal)
    age = (now - record.created_at).days
    why = (
        f"applied {record.applied_count} times, never violated, {age} days old, "
        f"confidence {record.confidence:.2f}"
    )
    return Verdict(record.id, record.scope, target, True, why)


def _refusal(record: Record, target: str | None, now: datetime) -> str | None:
    """The first eligibility rule `record` fails, said in a few words; None: none."""
    if target is None:
        return f"it is {record.scope}: the top of the ladder"
    if not record.live_at(now):
        return "it is no longer live (superseded, invalidated or retired)"
    if record.violated_count > 0:
        return f"it was violated {record.violated_count} time(s); a violated memory never climbs"
    if record.applied_count < MIN_APPLIED:
        return f"applied {record.applied_count} time(s), needs {MIN_APPLIED} (memlane feedback)"
    if now - record.created_at < MIN_AGE:
        return f"it is younger than {MIN_AGE.days} days"
    if record.confidence < MIN_CONFIDENCE:
        return f"confidence {record.confidence:.2f} is below {MIN_CONFIDENCE}"
    if record.taint is Taint.UNTRUSTED_WEB:
        return "it came from the web (untrusted_web)"
    if target == GLOBAL and record.kind not in PORTABLE_KINDS:
        return f"a {record.kind.value} stays in its project; only lessons, conventions, " + (
            "procedures, preferences, constraints and insights go global"
        )
    return None
