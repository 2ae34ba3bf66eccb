"""Markdown with YAML front matter: `---`, a YAML mapping, `---`, then the body."""

from __future__ import annotations

import re
from typing import Any

from memlane.errors import Invalid

_FENCE = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)


def split(text: str, where: str = "the file") -> tuple[dict[str, Any], str]:
    """(front matter, body); a text without front matter is all body."""
    import yaml  # only files with front matter need it

    found = _FENCE.match(text.lstrip("\ufeff"))
    if found is None:
        return {}, text
    try:
        meta = yaml.safe_load(found.group(1)) or {}
    except yaml.YAMLError as exc:
        problem = " ".join(str(getattr(exc, "problem", None) or exc).split())
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise Invalid(f"{where}: the front matter is not valid YAML ({problem}{at})") from None
    except ValueError as exc:  # a date YAML reads as one but the calendar lacks (2020-02-30)
        raise Invalid(f"{where}: the front matter holds an impossible value ({exc})") from None
    if not isinstance(meta, dict):
        raise Invalid(f"{where}: the front matter must be a YAML mapping")
    return meta, text[found.end() :]


def join(meta: dict[str, Any], body: str) -> str:
    """Front matter and body as one Markdown text (keys in the given order)."""
    import yaml

    head = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{head}---\n{body}"
