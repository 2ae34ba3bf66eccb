"""Lifecycle: what keeps a memory alive over months: explicit reinforcement, usage
feedback, review resurfacing, reminders, sessions and the graph's vital signs."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from memlane.errors import Invalid, NotFound
from memlane.lazy import lazy_module
from memlane.lifecycle.review import ReviewPolicy
from memlane.model import (
    REINFORCE_CAP,
    Kind,
    Record,
    Reminder,
    Session,
    State,
    Vitals,
    reinforced,
    replace,
)
from memlane.runtime import Runtime, new_id
from memlane.store import EMBED_PROFILE_META
from memlane.timeutil import days_between, utcnow

if TYPE_CHECKING:
    from memlane.write import dedup
else:  # the write policy loads with the first write: a read never runs it
    dedup = lazy_module("memlane.write.dedup")

# The second violation of a lesson costs it this much trust, once (when violated_count
# goes from 1 to 2): a lesson broken twice is in doubt, one broken once may be a slip.
TRUST_VIOLATION_DROP = 0.15
_SECOND_VIOLATION = 2
GROWTH_WEEKS = 8


class Lifecycle:
    """Reinforcement and usage feedback, review, reminders, sessions and the graph's
    vital signs (`Memory.lifecycle`)."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    def reinforce(self, memory_id: str, amount: int = 1, cap: int = REINFORCE_CAP) -> Record:
        """Raise a memory's importance by `amount` (at most `cap`), reset its decay clock
        and count the activation: the memory is still relevant."""
        if amount < 1:
            raise Invalid("--amount must be at least 1")
        if not 1 <= cap <= REINFORCE_CAP:
            raise Invalid(f"--cap must be between 1 and {REINFORCE_CAP}")
        with self.rt.transaction() as w:
            old = self.rt.live(w, memory_id)
            new = reinforced(old, utcnow(), amount, cap)
            w.replace(new, None)
            self.rt.journal(w, "reinforce", old.id)
        return self.rt.as_read([new])[0]

    def feedback(self, memory_id: str, *, applied: bool) -> Record:
        """Count one use of a memory: it was applied, or it was violated (followed and
        wrong, or ignored and missed). The second violation costs 0.15 trust, once."""
        with self.rt.transaction() as w:
            old = self.rt.live(w, memory_id)
            if applied:
                new = replace(old, applied_count=old.applied_count + 1)
            else:
                violated = old.violated_count + 1
                trust = old.trust_score
                if violated == _SECOND_VIOLATION:
                    trust = dedup.clamp(trust - TRUST_VIOLATION_DROP)
                new = replace(old, violated_count=violated, trust_score=trust)
            w.replace(new, None)
            self.rt.journal(w, "feedback.applied" if applied else "feedback.violated", old.id)
        return self.rt.as_read([new])[0]

    def review(
        self,
        threshold: float | None = None,
        min_importance: int | None = None,
        limit: int | None = None,
        **options: object,
    ) -> list[tuple[Record, float]]:
        """Live memories this agent may see that are due for review (see due_for_review),
        most decayed first; `threshold` and `min_importance` default to the review
        policy's; `options` are the shared filters (scope, kind, ...)."""
        policy = self.rt.review_policy
        chosen = ReviewPolicy(
            policy.threshold if threshold is None else threshold,
            policy.min_importance if min_importance is None else min_importance,
        )
        due = self.rt.review_queue(chosen, options)
        due = due[:limit] if limit else due
        read = self.rt.as_read([record for record, _ in due])  # as shown: sources checked
        return [(record, p) for record, (_, p) in zip(read, due, strict=True)]

    def reviewed(self, memory_id: str) -> Record:
        """Mark a memory reviewed: its review curve starts again now."""
        with self.rt.transaction() as w:
            old = self.rt.live(w, memory_id)
            new = replace(old, reviewed_at=utcnow())
            w.replace(new, None)
            self.rt.journal(w, "reviewed", old.id)
        return self.rt.as_read([new])[0]

    # ---- reminders ------------------------------------------------------------------

    def remind(self, when: str, text: str, *, timezone: str | None = None) -> Reminder:
        """A reminder for this agent, due at `when` ("in 2 hours", "friday 5pm", an
        ISO time) read in `timezone` (UTC by default); stored in UTC."""
        from memlane.write.reminders import parse_due

        body = " ".join(text.split())
        if not body:
            raise Invalid("say what to be reminded of")
        now = utcnow()
        due = parse_due(when, now, timezone)
        reminder = Reminder(
            id=f"r-{new_id().removeprefix('m-')}",
            text=body,
            due_at=due,
            created_at=now,
            agent=self.rt.agent,
            project=self.rt.context.project,
        )
        with self.rt.transaction() as w:
            w.put_reminder(reminder)
            self.rt.journal(w, "remind", None)
        return reminder

    def reminders(self, *, include_dismissed: bool = False) -> list[Reminder]:
        """This agent's reminders, soonest first (pending only unless asked)."""
        return self.rt.store.reminders.of(self.rt.agent, include_dismissed)

    def due_reminders(self) -> list[Reminder]:
        """This agent's pending reminders whose time has come: what a session-start
        hook shows (`reminders check`)."""
        now = utcnow()
        return [r for r in self.reminders() if r.due_at <= now]

    def dismiss(self, reminder_id: str) -> None:
        """Dismiss one of this agent's pending reminders."""
        with self.rt.transaction() as w:
            if not w.dismiss_reminder(reminder_id.strip(), self.rt.agent, utcnow()):
                raise NotFound(f"no pending reminder {reminder_id!r}")
            self.rt.journal(w, "dismiss", None)

    # ---- the graph's vital signs ----------------------------------------------------

    def open_threads(self) -> list[Record]:
        """Live threads still open (or never given a state) this agent may see, newest
        first: memories of kind thread, and those filed in the `thread` category (but
        the events that close a thread)."""
        mine = self.rt.agent is not None
        found = {
            r.id: r
            for r in self.rt.list(
                self.rt.filters(kind="thread", scope="all", limit=0, include_private=mine)
            )
        }
        filed = self.rt.list(
            self.rt.filters(category="thread", scope="all", limit=0, include_private=mine)
        )
        found |= {r.id: r for r in filed if r.kind is not Kind.EVENT}
        threads = [r for r in found.values() if r.state in (None, State.OPEN)]
        return sorted(threads, key=lambda r: (r.created_at, r.id), reverse=True)

    def growth(self, weeks: int = GROWTH_WEEKS) -> list[int]:
        """Memories written in each of the last `weeks` weeks, oldest first."""
        now = utcnow()
        since = now - timedelta(weeks=weeks)
        counts = [0] * weeks
        for created in self.rt.store.created_since(self.rt.agent, since):
            age = int(days_between(created, now) // 7)
            if 0 <= age < weeks:
                counts[weeks - 1 - age] += 1
        return counts

    def health(self) -> Vitals:
        """Embedding and anchor coverage of the live memories this agent may see, and
        how many important ones have faded."""
        profile = self.rt.store.meta(EMBED_PROFILE_META)  # the store's, whoever reads it
        return self.rt.store.vitals(self.rt.agent, profile, utcnow())

    # ---- sessions -------------------------------------------------------------------

    def create_session(self, type: str | None = None, project: str | None = None) -> Session:
        """A new open session (memories join it with --session-id)."""
        session = Session(
            id=f"s-{new_id().removeprefix('m-')}",
            started_at=utcnow(),
            type=type,
            project=project or self.rt.context.project,
            agent=self.rt.agent,
        )
        with self.rt.transaction() as w:
            w.put_session(session)
            self.rt.journal(w, "session.create", None)
        return session

    # Closing a session writes its episode summary: see Packs.close_session.

    def sessions(self, project: str | None = None) -> list[Session]:
        return self.rt.store.sessions.listing(project)

    def for_session(self, session_id: str) -> list[Record]:
        """The memories of a session this agent may see, newest first. The session is
        named by its id or an unambiguous part of it (its start, or what follows a
        prefix such as `s-`), as memory ids are."""
        sid = self._session_id(session_id)
        filters = self.rt.filters(
            session_id=sid, scope="all", limit=0, include_private=self.rt.agent is not None
        )
        return self.rt.list(filters)

    def _session_id(self, given: str) -> str:
        text = given.strip()
        if text and self.rt.store.sessions.get(text) is not None:
            return text
        near = [
            s.id
            for s in self.rt.store.sessions.listing(None)
            if text and (s.id.startswith(text) or s.id.partition("-")[2].startswith(text))
        ]
        if len(near) == 1:
            return near[0]
        if len(near) > 1:
            raise Invalid(f"session {given!r} is ambiguous: matches {', '.join(sorted(near)[:5])}")
        raise NotFound(f"no session {given!r}")

    def fact_session(self, memory_id: str) -> Session:
        """The session a memory came from."""
        record = self.rt.read(self.rt.store, memory_id)
        session = self.rt.store.sessions.get(record.session_id) if record.session_id else None
        if session is None:
            raise NotFound(f"{record.id} belongs to no session")
        return session
