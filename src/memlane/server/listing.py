"""What a client lists of a tool, and what that listing costs a model's context.

A client sends the model every listed tool on every turn, so each byte of a listing
is paid again and again. The SDK builds a tool's input schema from its signature with
pydantic, which adds what no model needs: a title on the schema and on each property
(the name already says it), an optional argument spelled `anyOf: [X, null]` with
`default: null`, and enums kept apart in `$defs`. `slimmed` leaves those out; the
arguments a tool accepts are the same (pydantic still validates them).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.mcpserver.tools import Tool
    from mcp_types import Tool as Listed

JSON = dict[str, Any]
# The fields of a listed tool a client puts before the model; a title and the
# annotations are for the client's own display and permission prompts.
SHOWN = {"name", "description", "input_schema", "output_schema"}
NULL = {"type": "null"}


def listed_bytes(tools: Sequence[Listed]) -> dict[str, int]:
    """The bytes of each tool's listing as the model is shown it: its SHOWN fields as
    the compact UTF-8 JSON the protocol carries."""
    return {tool.name: _size(tool) for tool in tools}


def _size(tool: Listed) -> int:
    shown = tool.model_dump(mode="json", by_alias=True, exclude_none=True, include=SHOWN)
    return len(json.dumps(shown, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def slimmed(tool: Tool) -> Tool:
    """`tool`, listed without pydantic's noise: its description on one line, its
    schemas without titles or `$defs`, its optional arguments without the null."""
    tool.description = " ".join(tool.description.split())
    tool.parameters = slim(tool.parameters, optional=True)
    metadata = tool.fn_metadata  # the SDK reads the output schema from here, live
    if metadata.output_schema is not None:
        metadata.output_schema = slim(metadata.output_schema, optional=False)
    return tool


def slim(schema: JSON, *, optional: bool) -> JSON:
    """`schema` without titles, its `$defs` written where they are referred to, and,
    with `optional` (an input schema), `anyOf: [X, null]` defaulting to null as X.

    Trigger: an argument that may be left out. Why: a model leaves it out; it never
    needs to be told that null is accepted too. Outcome: the argument's own type, not
    required. An output schema keeps the null, for a client checks results against it.
    Schemas here are not recursive: a `$ref` is written out in full where it stands.
    """
    defs: JSON = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            node = {**defs[node["$ref"].rsplit("/", 1)[-1]], **node}
            del node["$ref"]
        out = {
            key: {name: walk(value) for name, value in inner.items()}
            if key == "properties"  # names of arguments, not keywords
            else walk(inner)
            for key, inner in node.items()
            if key not in ("title", "$defs")
        }
        return _without_null(out) if optional else out

    slim_schema: JSON = walk(schema)
    return slim_schema


def _without_null(node: JSON) -> JSON:
    arms = node.get("anyOf")
    if not arms or "default" not in node or node["default"] is not None or NULL not in arms:
        return node
    kept = [arm for arm in arms if arm != NULL]
    if len(kept) != 1:
        return node
    rest = {key: value for key, value in node.items() if key not in ("anyOf", "default")}
    return {**kept[0], **rest}
