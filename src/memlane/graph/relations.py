"""The canonical vocabularies of the entity graph, and how free wording maps onto them.

Entity types (model.EntityType): person, project, service, tool (a library, a
program, a framework), file (a file or a directory), organisation, place, concept,
else unknown. Predicates (model.Predicate): uses, depends_on, part_of, owns,
works_on, contributes_to, manages, replaces, located_in, related_to.

Wording is read case- and separator-blind ("Relies on", "relies-on" and
`relies_on` are one phrase). A phrase the table does not know is kept as written
under related_to; a passive or inverse phrase ("owned by", "used by", "contains")
names the canonical predicate with its ends swapped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec

from memlane.errors import Invalid
from memlane.model import EntityType, Predicate, Relation

_SEPARATORS = re.compile(r"[\s_\-]+")
# Wording longer than this is a sentence, not a predicate: refused (the context is
# where prose goes).
MAX_LABEL_CHARS = 200

P = Predicate
# phrase -> canonical predicate, read subject -> object.
_SYNONYMS: dict[str, Predicate] = {
    **{p.value: p for p in Predicate},
    "use": P.USES,
    "using": P.USES,
    "utilizes": P.USES,
    "utilises": P.USES,
    "built with": P.USES,
    "calls": P.USES,
    "runs on": P.USES,
    "depends on": P.DEPENDS_ON,
    "depend on": P.DEPENDS_ON,
    "relies on": P.DEPENDS_ON,
    "rely on": P.DEPENDS_ON,
    "requires": P.DEPENDS_ON,
    "needs": P.DEPENDS_ON,
    "imports": P.DEPENDS_ON,
    "part of": P.PART_OF,
    "is part of": P.PART_OF,
    "belongs to": P.PART_OF,
    "member of": P.PART_OF,
    "is member of": P.PART_OF,
    "owns": P.OWNS,
    "own": P.OWNS,
    "maintains": P.OWNS,
    "works on": P.WORKS_ON,
    "working on": P.WORKS_ON,
    "builds": P.WORKS_ON,
    "develops": P.WORKS_ON,
    "contributes to": P.CONTRIBUTES_TO,
    "contributed to": P.CONTRIBUTES_TO,
    "manages": P.MANAGES,
    "leads": P.MANAGES,
    "supervises": P.MANAGES,
    "replaces": P.REPLACES,
    "replaced": P.REPLACES,
    "supersedes": P.REPLACES,
    "succeeds": P.REPLACES,
    "located in": P.LOCATED_IN,
    "lives in": P.LOCATED_IN,
    "based in": P.LOCATED_IN,
    "hosted in": P.LOCATED_IN,
    "related to": P.RELATED_TO,
    "relates to": P.RELATED_TO,
    "associated with": P.RELATED_TO,
}
# phrase -> canonical predicate read object -> subject (the ends swap).
_INVERSES: dict[str, Predicate] = {
    "used by": P.USES,
    "depended on by": P.DEPENDS_ON,
    "required by": P.DEPENDS_ON,
    "needed by": P.DEPENDS_ON,
    "contains": P.PART_OF,
    "has part": P.PART_OF,
    "includes": P.PART_OF,
    "owned by": P.OWNS,
    "maintained by": P.OWNS,
    "worked on by": P.WORKS_ON,
    "managed by": P.MANAGES,
    "led by": P.MANAGES,
    "replaced by": P.REPLACES,
    "superseded by": P.REPLACES,
    "location of": P.LOCATED_IN,
}
_TYPE_SYNONYMS: dict[str, EntityType] = {
    **{t.value: t for t in EntityType},
    "people": EntityType.PERSON,
    "user": EntityType.PERSON,
    "human": EntityType.PERSON,
    "repo": EntityType.PROJECT,
    "repository": EntityType.PROJECT,
    "product": EntityType.PROJECT,
    "api": EntityType.SERVICE,
    "system": EntityType.SERVICE,
    "database": EntityType.SERVICE,
    "library": EntityType.TOOL,
    "package": EntityType.TOOL,
    "framework": EntityType.TOOL,
    "program": EntityType.TOOL,
    "language": EntityType.TOOL,
    "path": EntityType.FILE,
    "directory": EntityType.FILE,
    "folder": EntityType.FILE,
    "org": EntityType.ORGANISATION,
    "organization": EntityType.ORGANISATION,
    "company": EntityType.ORGANISATION,
    "team": EntityType.ORGANISATION,
    "location": EntityType.PLACE,
    "city": EntityType.PLACE,
    "country": EntityType.PLACE,
    "idea": EntityType.CONCEPT,
    "topic": EntityType.CONCEPT,
}


class Phrase(msgspec.Struct, frozen=True):
    """A predicate as written, read: its canonical predicate, the words as written (its
    label), and whether its ends swap ("owned by")."""

    predicate: Predicate
    label: str
    swapped: bool = False


def words_of(text: str) -> str:
    """A phrase compared case- and separator-blind: "Relies_On" -> "relies on"."""
    return _SEPARATORS.sub(" ", text.casefold()).strip()


def read_predicate(text: str) -> Phrase:
    """The canonical predicate free wording names (see the module docstring)."""
    label = " ".join(text.split())
    if len(label) > MAX_LABEL_CHARS:
        raise Invalid(
            f"a predicate is a few words, not {len(label)} characters: say more in the context"
        )
    words = words_of(label)
    if words in _SYNONYMS:
        return Phrase(_SYNONYMS[words], label)
    if words in _INVERSES:
        return Phrase(_INVERSES[words], label, swapped=True)
    return Phrase(Predicate.RELATED_TO, label)


def same_relation(predicate: Predicate, label: str, other: Predicate, other_label: str) -> bool:
    """Whether two wordings name one relation: the same canonical predicate, and for
    related_to (where the wording is all the meaning) the same words."""
    if predicate is not other:
        return False
    return predicate is not Predicate.RELATED_TO or words_of(label) == words_of(other_label)


def merged_relations(
    source: str, target: str, mine: Sequence[Relation], theirs: Sequence[Relation]
) -> tuple[int, int]:
    """(moved, ended): what merging entity `source` into `target` does to the current
    relations of each (`mine`, `theirs`). One that would join `target` to itself, or
    repeat one `target` has, is ended; the others move."""
    held = [(r.subject_id, r.object_id, r) for r in theirs]
    moved = ended = 0
    for r in mine:
        subject = target if r.subject_id == source else r.subject_id
        obj = target if r.object_id == source else r.object_id
        repeats = subject == obj or any(
            (s, o) == (subject, obj) and same_relation(h.predicate, h.label, r.predicate, r.label)
            for s, o, h in held
        )
        ended, moved = ended + repeats, moved + (not repeats)
        held.append((subject, obj, r))
    return moved, ended


def read_type(text: str) -> EntityType:
    """The canonical entity type a word names; unknown when the table does not know it."""
    return _TYPE_SYNONYMS.get(words_of(text).replace(" ", "_"), EntityType.UNKNOWN)
