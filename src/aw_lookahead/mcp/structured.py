"""Build ``structured_content`` for a simulated result that matches a tool's output schema.

MCP clients reject a successful result of a tool with an ``outputSchema``
unless ``structured_content`` validates against it. The world model answers
in text; :func:`fit_structured` first tries the JSON object in that text,
then fills the schema (the first string field gets the text, other required
fields a typed placeholder). The result is always checked with
``jsonschema``; ``None`` means no valid object could be built.
"""

from __future__ import annotations

import json
from typing import Any

from aw_lookahead._extras import matches_schema

__all__ = ["fit_structured", "holds_prediction"]

_PREFERRED = ("content", "text", "result", "output", "message", "value")


def _placeholder(schema: dict[str, Any], text: str) -> Any:
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        return _fill_object(schema, text)
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return max(0, schema.get("minimum", 0))
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return text


def _fill_object(schema: dict[str, Any], text: str) -> dict[str, Any]:
    props: dict[str, Any] = schema.get("properties") or {}
    required = list(schema.get("required") or [])
    strings = [k for k, v in props.items() if isinstance(v, dict) and v.get("type") == "string"]
    text_key = next((k for k in _PREFERRED if k in strings), strings[0] if strings else None)
    out: dict[str, Any] = {}
    for key, sub_schema in props.items():
        if key == text_key:
            out[key] = text
        elif key in required:
            out[key] = _placeholder(sub_schema, "")
    for key in required:
        out.setdefault(key, "")
    return out


def _json_object(text: str) -> dict[str, Any] | None:
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").removeprefix("json").strip()
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        obj = json.loads(body[start : end + 1])
    except json.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def fit_structured(text: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    """A dict valid under ``schema`` carrying ``text`` (or the JSON in it), else ``None``."""
    parsed = _json_object(text)
    if parsed is not None and matches_schema(parsed, schema):
        return parsed
    filled = _fill_object(schema, text)
    return filled if matches_schema(filled, schema) else None


def holds_prediction(structured: dict[str, Any], text: str) -> bool:
    """Whether ``structured`` carries the prediction (its JSON, or the text in a field).

    False for a skeleton of typed placeholders (a schema with no string field
    to hold the text): then the text alone says what was predicted.
    """
    return structured == _json_object(text) or text in structured.values()
