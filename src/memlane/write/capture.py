"""The capture policy on a write's raw fields: secrets redacted or
flagged, instruction-shaped text tagged. Pure: fields in, fields and findings out.

- `auto` (the default): secrets in the title, body and tags become `[REDACTED:<kind>]`
  and the memory is tagged `auto-redacted`.
- `reviewed` and `manual`: the text is kept as given; what looks like a secret is
  reported as a warning.
- Every mode tags instruction-shaped text aimed at a model `injection-risk`, so passive
  reads (hooks) never surface it.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

import msgspec

from memlane.errors import Invalid
from memlane.model import INJECTION_TAG as INJECTION_TAG
from memlane.model import REDACTED_TAG as REDACTED_TAG
from memlane.write.injection import injection_signals
from memlane.write.normalize import clean_text, read_text, stored_title
from memlane.write.secrets import find_secrets, redact

# The fields whose text a model reads back (checked for instructions to a model) and
# every other free-text field of a write (screened for secrets too).
_READ_FIELDS = ("title", "content", "body")
_TEXT_FIELDS = (*_READ_FIELDS, "source_ref", "domain", "supersede_reason", "reason")
_LIST_FIELDS = ("tags", "applicability", "wake_phrases", "wake_phrase")


class CaptureMode(StrEnum):
    AUTO = "auto"
    REVIEWED = "reviewed"
    MANUAL = "manual"


class Captured(msgspec.Struct, frozen=True):
    fields: dict[str, Any]
    redacted: tuple[str, ...] = ()  # kinds of the secrets replaced, in order found
    kept: tuple[str, ...] = ()  # kinds of what looks like a secret but was kept
    injection: tuple[str, ...] = ()  # instruction families the text matched
    mode: CaptureMode = CaptureMode.AUTO

    @property
    def keeps(self) -> bool:
        """Whether the write's text lands as given (reviewed, manual)."""
        return self.mode is not CaptureMode.AUTO

    @property
    def warnings(self) -> tuple[str, ...]:
        out = []
        if self.redacted:
            out.append(f"redacted {len(self.redacted)} secret(s): {', '.join(self.redacted)}")
        if self.kept:
            out.append(
                f"kept {len(self.kept)} possible secret(s) as given ({', '.join(self.kept)}); "
                "this store is a plain file"
            )
        if self.injection:
            out.append(
                f"tagged {INJECTION_TAG}: reads as instructions to a model "
                f"({', '.join(self.injection)})"
            )
        return tuple(out)


def parse_mode(value: str | CaptureMode | None) -> CaptureMode:
    if value is None:
        return CaptureMode.AUTO
    try:
        return CaptureMode(str(value).strip().lower())
    except ValueError:
        raise Invalid(
            f"unknown capture mode {value!r}; use one of auto, reviewed, manual"
        ) from None


def capture(fields: Mapping[str, Any], mode: CaptureMode = CaptureMode.AUTO) -> Captured:
    """The fields as the policy lets them be stored, and what it found."""
    out = dict(fields)
    found: list[str] = []
    families: list[str] = []
    for name in _TEXT_FIELDS:
        value = out.get(name)
        if isinstance(value, str):
            out[name], kinds = _screen(value, mode)
            found += kinds
    families += [f for text in _read_texts(out) for f in injection_signals(text)]
    for name in _LIST_FIELDS:
        value = out.get(name)
        if isinstance(value, str) and name != "wake_phrase":
            value = value.split(",")
        if isinstance(value, (list, tuple)):
            screened = []
            for item in value:
                text, kinds = _screen(item, mode) if isinstance(item, str) else (item, [])
                screened.append(text)
                found += kinds
            out[name] = screened
        elif isinstance(value, str):
            out[name], kinds = _screen(value, mode)
            found += kinds
    extra = []
    if found and mode is CaptureMode.AUTO:
        extra.append(REDACTED_TAG)
    if families:
        extra.append(INJECTION_TAG)
    if extra:
        out["tags"] = [*(out.get("tags") or []), *extra]
    redacted = tuple(found) if mode is CaptureMode.AUTO else ()
    kept = () if mode is CaptureMode.AUTO else tuple(found)
    return Captured(out, redacted, kept, tuple(dict.fromkeys(families)), mode)


def _read_texts(fields: Mapping[str, Any]) -> list[str]:
    """What the injection screen reads of a write: the title and body as the store's
    door will judge them (write.screen), one text, or each read field given alone when
    the write gives no body (a change of title only).

    Trigger: every write. Why: the screen at the store's door reads the same text, and
    a remembered judgement (write.injection) costs nothing the second time. Outcome:
    one judgement a memory."""
    body = fields.get("content", fields.get("body"))
    if isinstance(body, str) and body.strip():
        body = clean_text(body, "content")
        title = fields.get("title")
        return [read_text(stored_title(title if isinstance(title, str) else None, body), body)]
    return [v for name in _READ_FIELDS if isinstance(v := fields.get(name), str)]


def _screen(text: str, mode: CaptureMode) -> tuple[str, list[str]]:
    if mode is CaptureMode.AUTO:
        clean, spans = redact(text)
        return clean, [s.kind for s in spans]
    return text, [s.kind for s in find_secrets(text)]
