"""Wake: the identity cascade, the one-guess token ritual and its guess log."""

from __future__ import annotations

import contextlib
import hashlib
import json
import secrets
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from memlane.errors import Conflict, Invalid, MemlaneError, NotFound
from memlane.lazy import lazy_module
from memlane.model import Cascade, Filters, Record, WakeGuess, WakeRitual, replace
from memlane.runtime import ID_PREFIX, Runtime
from memlane.store import Writer
from memlane.timeutil import utcnow

if TYPE_CHECKING:
    from memlane.embed import Embedder
    from memlane.embed.chunk import Vector
    from memlane.lifecycle import wake as ritual
    from memlane.lifecycle.wake_scores import Scored

if not TYPE_CHECKING:  # the ritual's pure parts load with the first wake command
    ritual = lazy_module("memlane.lifecycle.wake")

# The store_meta key of the secret that signs ritual tokens (made on the first --begin).
WAKE_SECRET_META = "wake_secret"
WAKE_FETCH_MIN_IMPORTANCE = 3
Response = dict[str, Any]


class Wake:
    """Wake (`Memory.wake`): called, the identity cascade; `begin`, `respond`, `fetch`,
    the one-guess token ritual; `score`, `log`, `latest_scored`, its guess log."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    def _waking_agent(self) -> str:
        if not self.rt.agent:
            raise Invalid("wake needs an agent: set MEMLANE_AGENT")
        return self.rt.agent

    def _wake_pool(self, now: datetime, days: int, floor: int | None) -> list[Record]:
        """Every candidate of a cascade: importance 5+ (core and bridges), or `floor`+
        when given (every bloom it asks for), and whatever was active in `days` (recent),
        live and visible to the waking agent."""
        base = Filters(
            viewer=self._waking_agent(), include_private=True, limit=None, raw_resonance=True
        )
        strong = replace(
            base, min_importance=ritual.BRIDGE_MIN_IMPORTANCE if floor is None else floor
        )
        active = replace(base, min_importance=floor, active_since=now - timedelta(days=days))
        found = {r.id: r for f in (strong, active) for r in self.rt.store.query(f)}
        return self.rt.as_read(list(found.values()), sources=False)

    def __call__(
        self,
        *,
        limit: int = 20,  # lifecycle.wake.DEFAULT_LIMIT (a test keeps them equal)
        days: int = 7,  # lifecycle.wake.DEFAULT_DAYS
        min_resonance: int | None = None,
        activate: bool = True,
        include_excluded: bool = False,
    ) -> Cascade:
        """The agent's wake set: core, then recent, then bridges. `min_resonance` takes
        every bloom at or above that raw importance instead of `limit` (those no layer
        holds follow as the resonant layer). Waking counts as an activation of every
        bloom unless `activate` is False."""
        now = utcnow()
        chosen = ritual.cascade(
            self._wake_pool(now, days, min_resonance),
            now,
            limit=limit,
            days=days,
            min_importance=min_resonance,
            include_excluded=include_excluded,
        )
        if activate:
            self.rt.count([r.id for r in chosen.blooms], "activation")
        return chosen

    def fetch(
        self, *, days: int = 15, limit: int = 100, exclude_tags: tuple[str, ...] = ()
    ) -> list[Record]:
        """Facts for a wake presentation: importance 3+ (raw) of any kind, active in
        `days`, most important first; `exclude_tags` drops whole tag namespaces."""
        if days < 0 or limit < 1:
            raise Invalid("--days must be at least 0 and --limit at least 1")
        filters = Filters(
            viewer=self._waking_agent(),
            include_private=True,
            raw_resonance=True,
            min_importance=WAKE_FETCH_MIN_IMPORTANCE,
            order="importance",
            limit=limit,
            active_since=utcnow() - timedelta(days=days),
            exclude_tag_prefixes=tuple(t for t in exclude_tags if t),
        )
        return self.rt.as_read(self.rt.store.query(filters), sources=False)

    # ---- the ritual ------------------------------------------------------------------

    def _secret(self, w: Writer | None = None) -> bytes:
        """The token-signing secret; made (inside `w`) when there is none yet."""
        stored = self.rt.store.meta(WAKE_SECRET_META)
        if stored:
            return bytes.fromhex(stored)
        if w is None:
            raise Invalid("no wake ritual was ever begun in this store: run wake --begin")
        made = secrets.token_bytes(32)
        w.set_meta(WAKE_SECRET_META, made.hex())
        return made

    def _check_wake_number(self, agent: str, wake: int | None, force: bool) -> list[str]:
        """Refuse a wake number already logged under (unless forced); warn when it is
        below the agent's highest, or skips ahead of it."""
        if wake is None:
            return []
        if wake < 1:
            raise Invalid("--wake must be a positive number")
        logged = {g.wake for g in self.rt.store.wake.guesses(agent) if g.wake is not None}
        if wake in logged and not force:
            raise Conflict(f"wake {wake} already has logged guesses; pass --force-wake to reuse it")
        top = max(logged, default=None)
        if top is not None and wake < top:
            return [f"wake {wake} is below the highest logged wake ({top})"]
        if top is not None and wake > top + 1:
            return [f"wake {wake} skips ahead of the highest logged wake ({top})"]
        return []

    def begin(
        self,
        *,
        wake: int | None = None,
        model: str | None = None,
        force_wake: bool = False,
        limit: int = 20,  # lifecycle.wake.DEFAULT_LIMIT (a test keeps them equal)
        days: int = 7,  # lifecycle.wake.DEFAULT_DAYS
        min_resonance: int | None = None,
        include_excluded: bool = False,
        activate: bool = True,
    ) -> Response:
        """Start a ritual over the wake set: the first bloom's title and a signed token."""
        agent = self._waking_agent()
        warnings = self._check_wake_number(agent, wake, force_wake)
        chosen = self(
            limit=limit,
            days=days,
            min_resonance=min_resonance,
            activate=activate,
            include_excluded=include_excluded,
        )
        if not chosen.blooms:
            raise NotFound("nothing to wake into: no blooms for this agent")
        session = WakeRitual(
            id=secrets.token_hex(8),
            agent=agent,
            created_at=utcnow(),
            version=ritual.RITUAL_VERSION,
            wake=wake,
            model=model,
            sequence=tuple((r.id, r.title) for r in chosen.blooms),
        )
        with self.rt.transaction() as w:
            secret = self._secret(w)
            w.put_ritual(session)
        return {
            "status": "begun",
            "session": ritual.sign(secret, session.id, 0),
            "wake": wake,
            "model": model,
            "blooms": len(session.sequence),
            "bloom": self._next_bloom(session),
            "excluded": chosen.excluded,
            "warnings": warnings,
        }

    def _next_bloom(self, session: WakeRitual) -> Response | None:
        """The bloom the session's next step shows: id and title only (a guess is made
        from the title alone)."""
        if session.entry >= len(session.sequence):
            return None
        memory_id, title = session.sequence[session.entry]
        record = self.rt.store.get(memory_id)
        parts = 1
        if record is not None and record.live and self.rt.visible(record):
            title, parts = record.title, len(ritual.chunks(record.body))
        part = min(session.chunk, parts - 1)
        return {
            "id": memory_id,
            "title": ritual.shown_title(title, part, parts),
            "position": session.entry + 1,
            "part": part + 1,
            "parts": parts,
        }

    def respond(self, token: str, bloom_id: str, guess: str) -> Response:
        """Judge one guess for the current chunk, log it and advance, in one transaction.
        The token of the last call replays its response; older tokens are refused."""
        agent = self._waking_agent()
        secret = self._secret()
        session_id, step = ritual.verify(secret, token)
        with self.rt.transaction() as w:
            session = self._ritual(session_id, agent)
            if step == session.step - 1 and session.last_response:
                return {**json.loads(session.last_response), "replayed": True}
            current = ritual.sign(secret, session.id, session.step)
            if session.completed_at is not None:
                raise Conflict(f"this ritual is complete; its last token was {current}")
            if step != session.step:
                raise Invalid(f"this token is spent; the last one that worked is {current}")
            expected = session.sequence[session.entry][0]
            given = bloom_id.strip().removeprefix(ID_PREFIX)
            if given != expected.removeprefix(ID_PREFIX):
                raise Invalid(f"invalid_bloom_id: this step shows {expected}, not {bloom_id}")
            ritual.check_guess(guess)
            response, advanced = self._ritual_step(w, session, guess)
            response |= {
                "session": ritual.sign(secret, session.id, advanced.step),
                "wake": session.wake,
                "model": session.model,
            }
            response["next"] = self._next_bloom(advanced)
            if advanced.entry >= len(advanced.sequence):
                advanced = replace(advanced, completed_at=utcnow())
                response["summary"] = self._ritual_summary(advanced)
            w.put_ritual(replace(advanced, last_response=json.dumps(response)))
        return response

    def _ritual(self, session_id: str, agent: str) -> WakeRitual:
        session = self.rt.store.wake.ritual(session_id)
        if session is None:
            raise NotFound(f"no wake session {session_id}")
        if session.version != ritual.RITUAL_VERSION:
            raise Invalid("this session was begun by an older ritual: begin a new one")
        if session.agent != agent:
            raise Invalid("this ritual is walked by the agent that began it")
        return session

    def _ritual_step(
        self, w: Writer, session: WakeRitual, guess: str
    ) -> tuple[Response, WakeRitual]:
        """The step's response and the session advanced past it. A deleted bloom or a
        chunk cursor past the bloom's end judges nothing and moves to the next bloom."""
        memory_id, _ = session.sequence[session.entry]
        record = w.get(memory_id)
        next_bloom = replace(session, entry=session.entry + 1, chunk=0, step=session.step + 1)
        if record is None or not record.live or not self.rt.visible(record):
            return {"status": "bloom_missing", "id": memory_id}, next_bloom
        parts = ritual.chunks(record.body)
        if session.chunk >= len(parts):
            return {"status": "chunk_truncated", "id": memory_id}, next_bloom
        text = parts[session.chunk]
        source, phrases = ritual.phrases_for(record.wake_phrases, text, session.chunk)
        match = ritual.judge(guess, phrases)
        title = ritual.shown_title(record.title, session.chunk, len(parts))
        w.put_guess(
            WakeGuess(
                session.id,
                session.step,
                session.agent,
                memory_id,
                session.chunk,
                session.entry + 1,
                title,
                guess,
                tuple(phrases),
                source,
                match.kind,
                match.phrase_index,
                match.bucket,
                ritual.chunk_digest(text),
                utcnow(),
                session.wake,
                session.model,
            )
        )
        more = session.chunk + 1 < len(parts)
        advanced = replace(session, chunk=session.chunk + 1, step=session.step + 1)
        shown = {
            "id": memory_id,
            "title": title,
            "content": text,
            "part": session.chunk + 1,
            "parts": len(parts),
        }
        response = {
            "status": "shown",
            "bucket": match.bucket,
            "guess": guess,
            "source": source,
            "match": {"kind": match.kind, "phrase_index": match.phrase_index},
            "bloom": shown,
        }
        return response, advanced if more else next_bloom

    def _ritual_summary(self, session: WakeRitual) -> Response:
        rows = self.rt.store.wake.guesses(session.agent, session_id=session.id)
        return ritual.summary(((g.source, g.bucket) for g in rows), session.step - len(rows))

    # ---- the guess log -----------------------------------------------------------------

    def score(self) -> tuple[int, int]:
        """Score every pending guess row of the agent, oldest first, each written before
        the next is computed: (rows scored, rows skipped). Loads the embedder only when
        something is pending; without one, Unavailable and every row stays pending."""
        from memlane.embed.blob import to_blob
        from memlane.lifecycle import wake_scores as scoring

        agent = self._waking_agent()
        pending = self.rt.store.wake.guesses(agent, pending=True)
        if not pending:
            return 0, 0
        embedder = self.rt.vector_lane()[1]
        history = self._scored_history(agent)
        scored = skipped = 0
        for row in pending:
            try:
                scores, vector = self._score_row(row, embedder, history)
            except Exception:
                skipped += 1
                continue
            with self.rt.transaction() as w:
                w.score_guess(row, scores, to_blob(vector))
            history.append(
                scoring.Scored(
                    row.memory_id, row.title, row.session_id, row.model, vector, row.created_at
                )
            )
            scored += 1
        return scored, skipped

    def _scored_history(self, agent: str) -> list[Scored]:
        """The agent's scored guesses with their vectors, oldest first."""
        from memlane.embed.blob import from_blobs
        from memlane.lifecycle.wake_scores import Scored

        vectors = self.rt.store.wake.guess_vectors(agent)
        return [
            Scored(
                g.memory_id,
                g.title,
                g.session_id,
                g.model,
                from_blobs([vectors[key]], len(vectors[key]) // 4)[0],
                g.created_at,
            )
            for g in self.rt.store.wake.guesses(agent, pending=False)
            if (key := (g.session_id, g.step)) in vectors
        ]

    def _score_row(
        self, row: WakeGuess, embedder: Embedder, history: list[Scored]
    ) -> tuple[dict[str, float | int | None], Vector]:
        """Axis A and Axis B of one guess, against the rows written before it."""
        from memlane.embed.blob import from_blobs
        from memlane.lifecycle import wake_scores as scoring

        guess, title = embedder.embed_many([row.guess, scoring.bare_title(row.title)])
        signature, dim = embedder.profile.signature, embedder.dimension
        content = [
            from_blobs([blob], dim)[0]
            for _, _, blob in self.rt.store.vectors(signature, [row.memory_id])
        ]
        phrases = self._phrase_vectors(row.phrases, embedder) if row.source == "authored" else []
        earlier = [h for h in history if h.at < row.created_at]
        scores: dict[str, float | int | None] = {
            "sim_phrase": scoring.best(guess, phrases),
            "sim_content": scoring.best(guess, content),
            "sim_title": scoring.best(guess, [title]),
        }
        axis_b = scoring.axis_b(guess, row.memory_id, row.title, row.session_id, row.model, earlier)
        return scores | axis_b, guess

    def _phrase_vectors(self, phrases: Sequence[str], embedder: Embedder) -> list[Vector]:
        """Authored-phrase vectors through the cache (keyed by a hash of the profile and
        the phrase, no text kept). A cache that fails costs only time."""
        from memlane.embed.blob import from_blobs, to_blob

        out = []
        for phrase in phrases:
            text = " ".join(phrase.split())
            key = hashlib.sha256(f"{embedder.profile.signature}\n{text}".encode()).hexdigest()
            try:
                cached = self.rt.store.wake.phrase_vector(key)
            except MemlaneError:
                cached = None
            if cached is not None and len(cached) == 4 * embedder.dimension:
                out.append(from_blobs([cached], embedder.dimension)[0])
                continue
            vector = embedder.embed(text)
            with contextlib.suppress(MemlaneError), self.rt.transaction() as w:
                w.put_phrase_vector(key, to_blob(vector))
            out.append(vector)
        return out

    def log(
        self, *, wake: int | None = None, memory_id: str | None = None, limit: int | None = None
    ) -> list[WakeGuess]:
        """The agent's guess rows: one wake's in sequence order, or one bloom's across
        rituals newest first (`limit` of them), or everything."""
        agent = self._waking_agent()
        if memory_id is not None:
            rows = self.rt.store.wake.guesses(agent, memory_id=self.rt.resolve(memory_id))
            return list(reversed(rows))[:limit]
        rows = self.rt.store.wake.guesses(agent, wake=wake)
        return sorted(rows, key=lambda g: (g.created_at, g.session_id, g.step))

    def latest_scored(self) -> int | None:
        """The most recent wake with scored rows (report's default)."""
        rows = self.rt.store.wake.guesses(self._waking_agent(), pending=False)
        numbered = [g for g in rows if g.wake is not None]
        return numbered[-1].wake if numbered else None
