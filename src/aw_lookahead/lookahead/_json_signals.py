"""Signals from JSON observations: MCP results, JSON-RPC replies, HTTP JSON bodies."""

from __future__ import annotations

import json
from typing import Any

from .types import Outcome, Signal

__all__ = ["json_payload", "json_signals"]


def json_payload(text: str) -> Any:
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[-1].rsplit("```", 1)[0].strip()
    if not body or body[0] not in "[{":
        return None
    try:
        return json.loads(body)
    except json.JSONDecodeError:
        return None


def json_signals(payload: Any) -> list[Signal]:
    """Signals from an MCP result / JSON-RPC reply / HTTP JSON body."""
    if not isinstance(payload, dict):
        return []
    out: list[Signal] = []
    inner = payload.get("result")
    result: dict[str, Any] = inner if isinstance(inner, dict) else payload
    flag = result.get("isError", result.get("is_error"))
    if flag is True:
        out.append(
            Signal(
                source="rule",
                name="mcp.is_error",
                outcome=Outcome.FAILURE,
                matched=json.dumps({"isError": True}),
                detail="the tool reports an error",
            )
        )
    error = payload.get("error")
    if error not in (None, False, "", {}):
        out.append(
            Signal(
                source="rule",
                name="mcp.error_object",
                outcome=Outcome.FAILURE,
                matched=json.dumps({"error": error}, ensure_ascii=False)[:200],
                detail="the reply carries an error object",
            )
        )
    for key in ("status", "statusCode", "status_code", "code"):
        value = payload.get(key)
        if isinstance(value, int) and 400 <= value <= 599:
            out.append(
                Signal(
                    source="rule",
                    name="http.error_status",
                    outcome=Outcome.FAILURE,
                    matched=json.dumps({key: value}),
                    detail="an HTTP error status",
                )
            )
            break
    if not out and flag is False:
        out.append(
            Signal(
                source="rule",
                name="mcp.ok",
                outcome=Outcome.SUCCESS,
                matched=json.dumps({"isError": False}),
                detail="the tool reports success",
            )
        )
    return out
