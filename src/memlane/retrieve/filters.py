"""Build `Filters` from the shared filter options of list/search/recent."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memlane.errors import Invalid
from memlane.model import Filters, Kind, ResonanceType, parse_enum
from memlane.scope import ALL, Context, parse_scope
from memlane.timeutil import parse_instant

_ORDERS = ("recent", "created", "oldest", "importance")
_OPTIONS = frozenset(
    {
        "scope",
        "category",
        "kind",
        "tags",
        "exclude_tags",
        "min_importance",
        "max_importance",
        "resonance_basis",
        "has_wake_phrase",
        "missing_wake_phrase",
        "has_anchors",
        "missing_anchors",
        "has_resonance_type",
        "missing_resonance_type",
        "resonance_types",
        "mine",
        "include_private",
        "since",
        "until",
        "as_of",
        "include_superseded",
        "session_id",
        "limit",
        "order",
    }
)


def _names(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, (list, tuple, set, frozenset)) and all(
        isinstance(i, str) for i in value
    ):
        items = list(value)
    else:
        raise Invalid(f"expected a name or a list of names, not {type(value).__name__}")
    return tuple(dict.fromkeys(i.strip() for i in items if i.strip()))


def _presence(has: Any, missing: Any, name: str) -> bool | None:
    if has and missing:
        raise Invalid(f"--has-{name} and --missing-{name} exclude each other")
    return True if has else (False if missing else None)


def _scopes(value: Any, context: Context) -> tuple[str, ...] | None:
    """None reads every scope; the default is the caller's branch, project and global."""
    names = _names(value)
    if not names:
        return context.chain
    if ALL in names:
        return None
    return tuple(parse_scope(n) for n in names)


def _limit(value: Any) -> int | None:
    if value is None:
        return 50
    return whole(value, "--limit", 0, "0 for no limit") or None


# The largest count a read takes: far past any store, inside SQLite's 64-bit integers.
MAX_COUNT = 10**9


def whole(value: Any, name: str, low: int, hint: str = "") -> int:
    """`value` as a count from `low` to MAX_COUNT; Invalid for anything else (a bool,
    a float, a string, a number SQLite cannot hold)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= MAX_COUNT:
        extra = f", {hint}" if hint else ""
        raise Invalid(f"{name} must be a whole number from {low} to {MAX_COUNT}{extra}")
    return value


def query_text(value: Any) -> str:
    """A query as given, when it is text; Invalid otherwise."""
    if not isinstance(value, str):
        raise Invalid(f"a query is a string, not {type(value).__name__}")
    return value


def make_filters(context: Context, viewer: str | None, options: Mapping[str, Any]) -> Filters:
    unknown = set(options) - _OPTIONS
    if unknown:
        raise Invalid(f"unknown filter option(s): {', '.join(sorted(unknown))}")
    o = dict(options)
    order = o.get("order") or "recent"
    if order not in _ORDERS:
        raise Invalid(f"invalid order {order!r}; choose from: {', '.join(_ORDERS)}")
    if (o.get("mine") or o.get("include_private")) and viewer is None:
        raise Invalid("--mine and --include-private need an identity: set MEMLANE_AGENT")
    times = {
        k: parse_instant(o[k], k.replace("_", "-")) for k in ("since", "until", "as_of") if o.get(k)
    }
    return Filters(
        scopes=_scopes(o.get("scope"), context),
        categories=_names(o.get("category")),
        kinds=tuple(parse_enum(Kind, k, "kind") for k in _names(o.get("kind"))),
        tags_any=_names(o.get("tags")),
        exclude_tag_prefixes=_names(o.get("exclude_tags")),
        min_importance=o.get("min_importance"),
        max_importance=o.get("max_importance"),
        raw_resonance=_basis(o.get("resonance_basis")),
        wake_phrase=_presence(
            o.get("has_wake_phrase"), o.get("missing_wake_phrase"), "wake-phrase"
        ),
        anchors=_presence(o.get("has_anchors"), o.get("missing_anchors"), "anchors"),
        resonance_type_set=_presence(
            o.get("has_resonance_type"), o.get("missing_resonance_type"), "resonance-type"
        ),
        resonance_types=tuple(
            parse_enum(ResonanceType, r, "resonance type") for r in _names(o.get("resonance_types"))
        ),
        viewer=viewer,
        include_private=bool(o.get("include_private")),
        mine=bool(o.get("mine")),
        since=times.get("since"),
        until=times.get("until"),
        as_of=times.get("as_of"),
        include_superseded=bool(o.get("include_superseded")),
        session_id=o.get("session_id"),
        limit=_limit(o.get("limit")),
        order=order,
    )


def _basis(value: Any) -> bool:
    """--resonance-basis: `decayed` (the default: importance after weekly decay) or
    `raw` (the stored importance, as wake reads it). True for raw."""
    if value is None or value == "decayed":
        return False
    if value == "raw":
        return True
    raise Invalid(f"invalid resonance basis {value!r}; choose from: raw, decayed")
