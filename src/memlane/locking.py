"""The maintenance lock: one consolidate, organize, reflect or restore run at a time.

A run holds a lock in the store's meta table, taken by a compare-and-swap
(Writer.swap_meta), so of two runs starting at once on either backend exactly one
gets it; the other, from any process, is told who holds it. A crashed run's lock is
taken over at once when its process is gone from this machine, and after LOCK_STALE
otherwise.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

import msgspec

from memlane.errors import Conflict
from memlane.model import OK, WARN, Check
from memlane.store import Store
from memlane.timeutil import from_text, to_text, utcnow

LOCK_META = "consolidate.lock"
# A run holding the lock longer than this is taken to have crashed. A consolidation
# plans in seconds and writes in one transaction, so a live run never comes close; a
# crashed one blocks maintenance for at most this long.
LOCK_STALE = timedelta(minutes=30)


class Holder(msgspec.Struct, frozen=True):
    """The run that holds the lock, as its stamp in the meta table says."""

    token: str
    at: datetime
    pid: int
    operation: str
    host: str = ""  # the machine the run is on ("": written before hosts were kept)

    def holds(self, now: datetime) -> bool:
        """Whether the lock is still this run's: taken less than LOCK_STALE ago, by a
        process that still exists.

        Trigger: a run killed mid-way (SIGKILL, a crash, a closed laptop). Why: its
        lock would block every maintenance run for LOCK_STALE. Outcome: on the same
        machine a run whose process is gone holds nothing; a run on another machine
        (a shared PostgreSQL store) cannot be asked, so LOCK_STALE still bounds it.
        """
        if now - self.at >= LOCK_STALE:
            return False
        return self.host != socket.gethostname() or _running(self.pid)


class MaintenanceLock:
    """The lock over one store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def holder(self, now: datetime) -> Holder | None:
        """Who holds the lock now; None when free or when its holder went stale."""
        held = _read_holder(self.store.meta(LOCK_META))
        return held if held is not None and held.holds(now) else None

    def acquire(self, operation: str) -> tuple[str | None, Holder | None]:
        """(our token, None) when taken; (None, holder) when another run holds it;
        (our token, stale holder) when a crashed run's lock was taken over."""
        token, now = secrets.token_hex(8), utcnow()
        with self.store.write() as w:
            raw = self.store.meta(LOCK_META)
            held = _read_holder(raw)
            if held is not None and held.holds(now):
                return None, held
            stamp = {
                "token": token,
                "at": to_text(now),
                "pid": os.getpid(),
                "op": operation,
                "host": socket.gethostname(),
            }
            # Trigger: two runs reading a free (or stale) lock at once. Why: SQLite's
            # BEGIN IMMEDIATE makes read and set one step, but PostgreSQL's READ
            # COMMITTED lets both read before either writes. Outcome: the set is a
            # compare-and-swap from the value read; the run that loses it is skipped,
            # told who won.
            if not w.swap_meta(LOCK_META, raw, json.dumps(stamp)):
                return None, _read_holder(self.store.meta(LOCK_META))
        return token, held

    def release(self, token: str) -> None:
        with self.store.write() as w:
            raw = self.store.meta(LOCK_META)
            held = _read_holder(raw)
            if held is not None and held.token == token:
                w.swap_meta(LOCK_META, raw, "")  # not if a takeover replaced it meanwhile

    @contextmanager
    def held(self, operation: str = "maintenance") -> Iterator[None]:
        """Hold the lock for `operation` (Conflict while another run holds it)."""
        token, holder = self.acquire(operation)
        if token is None:
            raise Conflict(busy(holder))
        try:
            yield
        finally:
            self.release(token)

    def check(self) -> Check:
        """`doctor`: whether a maintenance run holds the lock now."""
        holder = self.holder(utcnow())
        if holder is None:
            return Check("maintenance lock", OK, "free")
        return Check(
            "maintenance lock",
            WARN,
            busy(holder),
            f"wait for pid {holder.pid}, or after {LOCK_STALE} it is taken over",
        )


def busy(holder: Holder | None) -> str:
    """Who holds the lock, for people."""
    if holder is None:
        return "another consolidate/organize run holds the lock"
    minutes = int(LOCK_STALE.total_seconds() // 60)
    return (
        f"a {holder.operation} run (pid {holder.pid}) has held the lock since "
        f"{to_text(holder.at)}; a crashed run's lock expires after {minutes} minutes"
    )


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        return True
    return True


def _read_holder(raw: str | None) -> Holder | None:
    try:
        data = json.loads(raw) if raw else None
        if not data:
            return None
        return Holder(
            str(data["token"]),
            from_text(data["at"]),
            int(data["pid"]),
            str(data["op"]),
            str(data.get("host", "")),
        )
    except (ValueError, KeyError, TypeError):  # unreadable: nobody holds it
        return None
