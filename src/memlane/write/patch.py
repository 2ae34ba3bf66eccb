"""Every mode of `update` as a pure record change."""

from __future__ import annotations

from typing import Any

from memlane.errors import Invalid
from memlane.model import (
    CLEAR,
    MAX_IMPORTANCE,
    ContentType,
    Kind,
    Patch,
    Record,
    ResonanceType,
    State,
    Visibility,
    parse_enum,
    replace,
)
from memlane.scope import parse_scope, scope_project
from memlane.write.draft import (
    as_int,
    as_list,
    as_text,
    check_body,
    check_tags,
    check_title,
    private_owner,
)
from memlane.write.normalize import clean_text, dedup_hash, derive_title
from memlane.write.settings import Limits


def relocated(record: Record, scope: str) -> Record:
    """`record` moved to `scope`. A project scope names the project (and branch) the
    memory belongs to; a memory moved to global keeps the project it was written in."""
    scope = parse_scope(scope)
    project, branch = scope_project(scope)
    if project is None:
        return replace(record, scope=scope)
    return replace(record, scope=scope, project=project, branch=branch)


def move_reason(old: str, new: str, reason: str | None = None) -> str:
    """The reason a moved memory's prior version keeps: it always names the old scope
    (a version holds no scope of its own), after the caller's reason if any."""
    moved = f"moved from {old} to {new}"
    return f"{reason.strip()} ({moved})" if reason and reason.strip() else moved


def make_patch(changes: dict[str, Any]) -> Patch:
    """A Patch from keyword changes; an unknown name is refused, not ignored."""
    unknown = sorted(set(changes) - set(Patch.__struct_fields__))
    if unknown:
        raise Invalid(f"unknown update field(s): {', '.join(unknown)}")
    return Patch(**changes)


def anchor_targets(current: tuple[str, ...], p: Patch) -> tuple[str, ...]:
    """Anchor ids after the anchor modes (replace, add, remove) of a patch."""
    return _edit_list(current, p.anchors, p.add_anchors, p.remove_anchors, "anchors")


def _content_modes(p: Patch) -> list[str]:
    modes = {
        "content": p.content is not None,
        "append": p.append is not None,
        "prepend": p.prepend is not None,
        "find/replace": p.find is not None or p.replace is not None,
    }
    return [name for name, used in modes.items() if used]


def find_replace(body: str, find: str, new: str, nth: int | None, replace_all: bool) -> str:
    """Replace one occurrence (the only one, or the nth) or all of them."""
    if not find:
        raise Invalid("--find text is empty")
    count = body.count(find)
    if count == 0:
        raise Invalid(f"text to find not present: {find[:60]!r}")
    if replace_all:
        return body.replace(find, new)
    if nth is None:
        if count > 1:
            raise Invalid(f"{count} matches for {find[:60]!r}: pass --nth N or --replace-all")
        return body.replace(find, new, 1)
    if not 1 <= nth <= count:
        raise Invalid(f"--nth {nth} is out of range: {count} match(es)")
    start = -len(find)
    for _ in range(nth):
        start = body.index(find, start + len(find))
    return body[:start] + new + body[start + len(find) :]


def _new_body(record: Record, p: Patch) -> str:
    modes = _content_modes(p)
    if len(modes) > 1:
        raise Invalid(f"content modes are mutually exclusive: {', '.join(modes)}")
    if p.content is not None:
        return p.content
    if p.append is not None:
        return record.body + p.append
    if p.prepend is not None:
        return p.prepend + record.body
    if p.find is not None or p.replace is not None:
        if p.find is None or p.replace is None:
            raise Invalid("--find and --replace go together")
        return find_replace(record.body, p.find, p.replace, p.nth, p.replace_all)
    return record.body


def _edit_list(
    current: tuple[str, ...], whole: Any, add: Any, remove: Any, name: str
) -> tuple[str, ...]:
    items = as_list(whole, name) if whole is not None else current
    items = tuple(dict.fromkeys(items + as_list(add, name)))
    dropped = set(as_list(remove, name))
    return tuple(i for i in items if i not in dropped)


def _visibility(record: Record, p: Patch, agent: str | None) -> tuple[Visibility, str | None]:
    chosen = parse_enum(Visibility, p.visibility, "visibility") if p.visibility else None
    if p.private and chosen is Visibility.PUBLIC:
        raise Invalid("private and visibility public contradict each other")
    target = Visibility.PRIVATE if p.private else chosen or record.visibility
    owner = as_text(p.owner, "owner")
    if target is Visibility.PUBLIC:
        if owner:
            raise Invalid("owner applies only to private memories")
        if record.visibility is Visibility.PRIVATE and not p.force:
            raise Invalid("making a private memory public exposes it to everyone: pass --force")
        return target, None
    return target, private_owner(owner, agent)


def _kept_title(record: Record, body: str) -> str:
    """The title a new body keeps when the patch names none.

    Trigger: the content changes and the title is the one derived from the old content
    (no writer chose it). Why: a derived title shown over a body that now says
    otherwise ("100 requests" over "500 requests") misleads every list and recall.
    Outcome: it is derived again from the new body; a title someone wrote stays.
    """
    if body != record.body and record.title == derive_title(record.body):
        return derive_title(body)
    return record.title


def apply_patch(record: Record, p: Patch, limits: Limits, agent: str | None) -> Record:
    """The record after the patch `agent` asks for (a private memory is the writing
    agent's: see private_owner); raises Invalid when the patch cannot apply."""
    body = check_body(clean_text(_new_body(record, p)), limits)
    title = check_title(as_text(p.title, "title") or _kept_title(record, body), limits)
    tags = _edit_list(record.tags, p.tags, p.add_tags, p.remove_tags, "tags")
    phrases = _edit_list(
        record.wake_phrases,
        p.wake_phrases,
        p.add_wake_phrases,
        p.remove_wake_phrases,
        "wake phrases",
    )
    visibility, owner = _visibility(record, p, agent)
    if p.scope is not None:
        record = relocated(record, p.scope)
    if p.wake_order is CLEAR:
        wake_order = None
    else:
        wake_order = as_int(p.wake_order, "wake order", -(10**9), 10**9)
        wake_order = record.wake_order if wake_order is None else wake_order
    return replace(
        record,
        title=title,
        body=body,
        dedup_hash=dedup_hash(title, body),
        tags=check_tags(tags, limits),
        wake_phrases=phrases,
        wake_order=wake_order,
        visibility=visibility,
        owner=owner,
        category=as_text(p.category, "category") or record.category,
        kind=parse_enum(Kind, p.kind, "kind") if p.kind else record.kind,
        importance=as_int(p.importance, "importance", 1, MAX_IMPORTANCE) or record.importance,
        resonance_type=(
            parse_enum(ResonanceType, p.resonance_type, "resonance type")
            if p.resonance_type
            else record.resonance_type
        ),
        content_type=(
            parse_enum(ContentType, p.content_type, "content type")
            if p.content_type
            else record.content_type
        ),
        state=parse_enum(State, p.state, "state") if p.state else record.state,
        session_id=as_text(p.session_id, "session_id") or record.session_id,
        applicability=(
            as_list(p.applicability, "applicability")
            if p.applicability is not None
            else record.applicability
        ),
        domain=as_text(p.domain, "domain") or record.domain,
        source_ref=as_text(p.source_ref, "source_ref") or record.source_ref,
    )
