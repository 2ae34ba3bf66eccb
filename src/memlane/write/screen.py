"""The capture policy at the store's door: every text a write puts into the store.

`add` and its siblings run the capture policy on the fields they are given and report
what it did (write.capture). Everything else memlane writes (successors, merges,
summaries, reasons, journal lines, link reasons, reminders, registry entries, wake
logs, imported rows, entity names) passes through `ScreenedWriter`, which wraps the
store's Writer for one transaction:

- a secret in any free-text field becomes `[REDACTED:<kind>]`, and a memory so changed
  is tagged `auto-redacted`;
- a memory whose title or body reads as instructions to a model is tagged
  `injection-risk`, whoever wrote it;
- a memory's text that is already stored is never rewritten (a tombstone or a counter
  update does not redact what a deliberate `manual` capture kept), and the text of a
  memory whose capture mode keeps secrets (`kept` hashes, or `keep_all`) lands as given;
- a link that records a derivation (a summary, an insight, a consolidation, a merge)
  passes its source's `injection-risk` flag, taint and trust on to the derived memory;
- what it redacted is collected in `found`, (field, kind) pairs, for the caller to tell.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from memlane.errors import Invalid
from memlane.model import (
    INJECTION_TAG,
    REDACTED_TAG,
    Entity,
    EntityType,
    Link,
    LinkType,
    Mention,
    Record,
    RegistryEntry,
    Relation,
    Reminder,
    Session,
    Version,
    WakeGuess,
    WakeRitual,
    inherit_marks,
    is_derivation,
    replace,
)
from memlane.store import Writer
from memlane.write.injection import is_injection
from memlane.write.normalize import dedup_hash, read_text
from memlane.write.secrets import find_secrets, redact

# A memory's free-text fields: single strings, and tuples of strings.
RECORD_TEXTS = ("title", "body", "source_ref", "domain", "supersede_reason")
RECORD_LISTS = ("tags", "applicability", "wake_phrases")
# The same fields as stored columns (lists as JSON arrays), in memory and version rows.
_ROW_TEXTS: dict[str, tuple[str, ...]] = {
    "memory": RECORD_TEXTS,
    "version": (*RECORD_TEXTS[:4], "reason"),
    "link": ("reason",),
    "relation": ("label", "context"),
    "reminder": ("text",),
}
_ROW_LISTS: dict[str, tuple[str, ...]] = {"memory": RECORD_LISTS, "version": RECORD_LISTS}
# Fields as a person knows them, in what a redaction note names.
_LABELS = {"supersede_reason": "reason", "source_ref": "source ref", "wake_phrases": "wake phrases"}
# A name this long found inside a redacted secret was cut from it, not named by chance.
MIN_NAME_PIECE = 4
# The outcome of an imported row left out because what it names was a secret.
REDACTED = "redacted"


class Screen:
    """Redaction of single texts, remembering what it found."""

    def __init__(self) -> None:
        self.found: list[tuple[str, str]] = []  # (field, kind)
        self.values: set[str] = set()  # the secrets redacted, to refuse names cut from them
        self.clean: set[str] = set()  # names found to hold no secret before the transaction

    def text(self, value: str, where: str) -> str:
        clean, spans = redact(value)
        self.found += [(where, s.kind) for s in spans]
        self.values.update(value[s.start : s.end] for s in spans)
        return clean

    def cut_from_secret(self, name: str) -> bool:
        """Whether a name (an entity's) holds a secret or is a piece of one redacted in
        this transaction (`Sup3rS3cret` of `hunter2-Sup3rS3cret!`)."""
        if name not in self.clean and find_secrets(name):
            return True
        return len(name) >= MIN_NAME_PIECE and any(name in value for value in self.values)

    def optional(self, value: str | None, where: str) -> str | None:
        return None if value is None else self.text(value, where)

    def texts(self, values: Iterable[str], where: str) -> tuple[str, ...]:
        return tuple(self.text(v, where) for v in values)

    def record(self, record: Record, before: Record | None = None) -> Record:
        """A memory as it may be stored: every text field that differs from `before`
        (the stored row; None for a new memory) redacted, tagged for what was found."""
        changes: dict[str, Any] = {}
        count = len(self.found)
        for name in RECORD_TEXTS:
            value = getattr(record, name)
            if value is not None and (before is None or value != getattr(before, name)):
                changes[name] = self.text(value, _LABELS.get(name, name))
        for name in RECORD_LISTS:
            value = getattr(record, name)
            if before is None or value != getattr(before, name):
                changes[name] = self.texts(value, _LABELS.get(name, name))
        tags = list(changes.get("tags", record.tags))
        if len(self.found) > count and REDACTED_TAG not in tags:
            tags.append(REDACTED_TAG)
        title, body = changes.get("title", record.title), changes.get("body", record.body)
        text_changed = before is None or (title, body) != (before.title, before.body)
        if text_changed and INJECTION_TAG not in tags and is_injection(read_text(title, body)):
            tags.append(INJECTION_TAG)
        changes["tags"] = tuple(tags)
        if (title, body) != (record.title, record.body):
            changes["dedup_hash"] = dedup_hash(title, body)
        screened = replace(record, **changes)
        return record if screened == record else screened

    def row(self, kind: str, row: Mapping[str, Any]) -> dict[str, Any]:
        """An imported row (see Store.check_record) with its free text redacted."""
        out = dict(row)
        for name in _ROW_TEXTS.get(kind, ()):
            if isinstance(out.get(name), str):
                out[name] = self.text(out[name], _LABELS.get(name, name))
        for name in _ROW_LISTS.get(kind, ()):
            if isinstance(out.get(name), str):
                items = _list(out[name])
                screened = self.texts(items, name)
                if list(screened) != items:
                    out[name] = _json_list(screened)
        if kind in ("memory", "version") and out != row:
            out["dedup_hash"] = dedup_hash(out["title"], out["body"])
        if kind == "memory":
            tags = list(_list(out["tags"]))
            if out != row and REDACTED_TAG not in tags:
                tags.append(REDACTED_TAG)
            if INJECTION_TAG not in tags and is_injection(read_text(out["title"], out["body"])):
                tags.append(INJECTION_TAG)
            if tags != _list(out["tags"]):
                out["tags"] = _json_list(tags)
        if kind == "registry" and isinstance(out.get("data"), str):
            data = json.loads(out["data"])
            clean = self.data(data) if isinstance(data, dict) else data
            if clean != data:
                out["data"] = json.dumps(clean, ensure_ascii=False)
        return out

    def data(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """A registry entry's fields, their string values redacted."""
        return {k: self.text(v, k) if isinstance(v, str) else v for k, v in data.items()}

    def refuse(self, value: str, what: str) -> None:
        """A name that identifies something (a registry key, an entity) cannot be
        redacted without breaking what refers to it: one holding a secret is refused."""
        if self.cut_from_secret(value):
            raise Invalid(f"the {what} holds what looks like a secret")


def unchanged(record: Record) -> bool:
    """Whether the screen would store a new memory as it is: nothing to redact, no
    tag to add."""
    return Screen().record(record) == record


def clean_names(mentions: Iterable[Mention]) -> set[str]:
    """The names and aliases of `mentions` that hold no secret."""
    names = {text for m in mentions for text in (m.name, m.alias)}
    return {name for name in names if not find_secrets(name)}


def _texts(record: Record) -> tuple[Any, ...]:
    """What the screen reads of a memory: its text fields and lists (tags among them)."""
    return tuple(getattr(record, name) for name in (*RECORD_TEXTS, *RECORD_LISTS))


def _list(value: str) -> list[str]:
    parsed = json.loads(value or "[]")
    return [str(v) for v in parsed] if isinstance(parsed, list) else []


def _json_list(values: Iterable[str]) -> str:
    return json.dumps(list(values), ensure_ascii=False)


class ScreenedWriter:
    """A store Writer whose every write of text goes through a Screen (see the module)."""

    def __init__(self, inner: Writer) -> None:
        self._inner = inner
        self._kept: set[str] = set()  # dedup hashes of memories whose text lands as given
        self._cleared: set[tuple[Any, ...]] = set()  # texts the screen left as they were
        self._keep_all = False
        self._dropped_entities: set[str] = set()
        self.screen = Screen()

    @property
    def found(self) -> list[tuple[str, str]]:
        return self.screen.found

    def keep(self, dedup_hashes: Iterable[str]) -> None:
        """The memories with these hashes land as written: their capture mode (reviewed,
        manual) keeps what looks like a secret."""
        self._kept.update(dedup_hashes)

    def cleared(self, records: Iterable[Record]) -> None:
        """New memories screened before the transaction and left unchanged (see
        `unchanged`): inserted with these texts, they are not screened again.

        Trigger: add and add-batch. Why: the screen (secret patterns, the injection
        model) is a large share of the time a write would hold the store's lock.
        Outcome: it runs before the lock is taken; a memory whose texts differ from what
        was cleared (or one that would be changed) is screened here as well."""
        self._cleared.update(_texts(r) for r in records)

    def cleared_names(self, names: Iterable[str]) -> None:
        """Entity names found to hold no secret before the transaction (see
        `clean_names`): not searched for secrets again; a name cut from a secret
        redacted in this transaction is still refused."""
        self.screen.clean.update(names)

    def keep_everything(self) -> None:
        """Every memory and imported row of this transaction lands as written."""
        self._keep_all = True

    def _keeps(self, record: Record) -> bool:
        return self._keep_all or record.dedup_hash in self._kept

    def _record(self, record: Record, before: Record | None) -> Record:
        if self._keeps(record) or (before is None and _texts(record) in self._cleared):
            return record
        return self.screen.record(record, before)

    # ---- memories ------------------------------------------------------------------

    def insert(self, records: Sequence[Record]) -> list[str]:
        return self._inner.insert([self._record(r, None) for r in records])

    def replace(self, record: Record, prior: Version | None) -> None:
        self._inner.replace(self._record(record, self._inner.get(record.id)), prior)

    def load(self, kind: str, row: Mapping[str, Any], allow_tombstones: bool) -> str:
        return self._inner.load(kind, self._row(kind, row), allow_tombstones)

    def load_many(
        self, kind: str, rows: Sequence[Mapping[str, Any]], allow_tombstones: bool
    ) -> list[str | Invalid]:
        """Rows screened, then loaded; an entity named by a piece of a secret is left
        out with its aliases and mentions (outcome "redacted")."""
        screened: list[Mapping[str, Any]] = []
        outcomes: dict[int, str | Invalid] = {}
        for i, row in enumerate(rows):
            try:
                if self._dropped(kind, row):
                    outcomes[i] = REDACTED
                else:
                    screened.append(self._row(kind, row))
            except Invalid as exc:
                outcomes[i] = exc
        loaded = iter(self._inner.load_many(kind, screened, allow_tombstones))
        return [outcomes[i] if i in outcomes else next(loaded) for i in range(len(rows))]

    def _dropped(self, kind: str, row: Mapping[str, Any]) -> bool:
        if self._keep_all:
            return False
        if kind == "entity" and self.screen.cut_from_secret(str(row.get("name", ""))):
            self._dropped_entities.add(str(row.get("id")))
            return True
        if kind == "alias" and self.screen.cut_from_secret(str(row.get("alias", ""))):
            return True
        return kind in ("alias", "mention") and str(row.get("entity_id")) in self._dropped_entities

    def _row(self, kind: str, row: Mapping[str, Any]) -> Mapping[str, Any]:
        return row if self._keep_all else self.screen.row(kind, row)

    # ---- other text ------------------------------------------------------------------

    def add_link(self, link: Link) -> None:
        """A link, its reason screened; a derivation also passes the source's marks on
        (see model.inherit_marks): taint travels with the text."""
        self._inner.add_link(replace(link, reason=self.screen.optional(link.reason, "reason")))
        if is_derivation(link):
            derived, source = self._inner.get(link.source), self._inner.get(link.target)
            if derived is not None and source is not None:
                marked = inherit_marks(derived, source)
                if marked != derived:
                    self._inner.replace(marked, None)

    def journal(
        self,
        operation: str,
        memory_ids: Sequence[str | None],
        actor: str | None,
        detail: str | None = None,
    ) -> None:
        self._inner.journal(operation, memory_ids, actor, self.screen.optional(detail, "reason"))

    def put_reminder(self, reminder: Reminder) -> None:
        self._inner.put_reminder(replace(reminder, text=self.screen.text(reminder.text, "text")))

    def put_registry(self, entry: RegistryEntry) -> None:
        self.screen.refuse(entry.key, f"{entry.registry} name")
        self._inner.put_registry(replace(entry, data=self.screen.data(entry.data)))

    def set_mentions(self, mentions: Mapping[str, Sequence[Mention]]) -> None:
        """Entity names come from memory text: a name holding a secret is not kept."""
        cut = self.screen.cut_from_secret
        self._inner.set_mentions(
            {
                memory_id: [m for m in found if not cut(m.name) and not cut(m.alias)]
                for memory_id, found in mentions.items()
            }
        )

    def put_ritual(self, ritual: WakeRitual) -> None:
        sequence = tuple((i, self.screen.text(t, "title")) for i, t in ritual.sequence)
        response = self.screen.optional(ritual.last_response, "response")
        self._inner.put_ritual(replace(ritual, sequence=sequence, last_response=response))

    def put_guess(self, guess: WakeGuess) -> None:
        self._inner.put_guess(
            replace(
                guess,
                title=self.screen.text(guess.title, "title"),
                guess=self.screen.text(guess.guess, "guess"),
                phrases=self.screen.texts(guess.phrases, "wake phrase"),
            )
        )

    # ---- no free text: passed through ------------------------------------------------

    def get(self, memory_id: str) -> Record | None:
        return self._inner.get(memory_id)

    def find_duplicate(
        self, dedup_hash: str, session_id: str, owner: str | None, author: str | None, category: str
    ) -> str | None:
        return self._inner.find_duplicate(dedup_hash, session_id, owner, author, category)

    def score_guess(
        self, guess: WakeGuess, scores: dict[str, float | int | None], vector: bytes
    ) -> None:
        self._inner.score_guess(guess, scores, vector)

    def put_phrase_vector(self, key: str, vector: bytes) -> None:
        self._inner.put_phrase_vector(key, vector)

    def put_session(self, session: Session) -> None:
        self._inner.put_session(session)

    def close_session(self, session_id: str, at: datetime) -> bool:
        return self._inner.close_session(session_id, at)

    def rename_project(self, old: str, new: str) -> None:
        self._inner.rename_project(old, new)

    def dismiss_reminder(self, reminder_id: str, agent: str | None, at: datetime) -> bool:
        return self._inner.dismiss_reminder(reminder_id, agent, at)

    def delete_link(self, link_id: str) -> Link | None:
        return self._inner.delete_link(link_id)

    def remove_link(self, source: str, target: str, type: LinkType) -> bool:
        return self._inner.remove_link(source, target, type)

    def delete(self, memory_id: str) -> None:
        self._inner.delete(memory_id)

    def rewrite_version(self, version: Version) -> None:
        self._inner.rewrite_version(version)

    def merge_entities(self, source: str, target: str) -> None:
        self._inner.merge_entities(source, target)

    def put_entity(self, entity: Entity, alias: str) -> str:
        """A name given by hand is refused when it holds a secret (as a registry key)."""
        self.screen.refuse(entity.name, "entity name")
        return self._inner.put_entity(entity, alias)

    def set_entity_type(self, entity_id: str, type: EntityType) -> None:
        self._inner.set_entity_type(entity_id, type)

    def add_relation(self, relation: Relation) -> None:
        context = relation.context
        self._inner.add_relation(
            replace(
                relation,
                label=self.screen.text(relation.label, "relation"),
                context=self.screen.text(context, "context") if context else context,
            )
        )

    def end_relation(self, relation_id: str, at: datetime) -> bool:
        return self._inner.end_relation(relation_id, at)

    def remove_registry(self, registry: str, key: str) -> bool:
        return self._inner.remove_registry(registry, key)

    def ensure_session(
        self, session_id: str, at: datetime, agent: str | None, project: str | None = None
    ) -> None:
        self._inner.ensure_session(session_id, at, agent, project)

    def sighted(
        self,
        memory_id: str,
        session_id: str,
        at: datetime,
        source_ref: str | None,
        agent: str | None,
    ) -> None:
        self._inner.sighted(memory_id, session_id, at, source_ref, agent)

    def put_vectors(
        self,
        memory_id: str,
        profile: str,
        vectors: Sequence[tuple[int, bytes]],
        dim: int,
        content_hash: str,
    ) -> None:
        self._inner.put_vectors(memory_id, profile, vectors, dim, content_hash)

    def drop_vectors(self) -> None:
        self._inner.drop_vectors()

    def set_meta(self, key: str, value: str) -> None:
        self._inner.set_meta(key, value)

    def swap_meta(self, key: str, expected: str | None, value: str) -> bool:
        return self._inner.swap_meta(key, expected, value)

    def touch(self, memory_ids: Sequence[str], counter: str, at: datetime) -> None:
        self._inner.touch(memory_ids, counter, at)
