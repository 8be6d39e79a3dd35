"""MCP rules: the reply must be valid JSON that matches the tool's schema.

The schema is the tool's declared ``outputSchema`` when the trajectory's
tool list has one (checked with ``jsonschema`` against ``structuredContent``
or the whole reply); otherwise the shape the ground truth implies (same JSON
type, the same top-level keys). Leaves are tiered: runtime when masking
changes them, deterministic when their value is a boolean / null or appears
in the context (so it follows from the history), environment otherwise (its
JSON type must match).
"""

from __future__ import annotations

import json
import re
from typing import Any

from aw_lookahead._extras import jsonschema_module
from aw_lookahead.trajectory import Action

from .masking import mask
from .tiers import TierResult

__all__ = ["check_json", "flatten", "loads_lenient", "tool_name"]

_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*?)\n\s*```\s*$", re.DOTALL)
_MISSING = object()


def loads_lenient(text: str) -> Any:
    """Parse JSON, also when wrapped in a code fence; raises ``ValueError`` if it is not JSON."""
    m = _FENCE.match(text)
    return json.loads(m.group(1) if m else text.strip())


def tool_name(action: Action) -> str | None:
    """The tool an MCP action calls (``name``, ``tool`` or ``function.name``)."""
    if isinstance(action, str):
        try:
            action = loads_lenient(action)
        except ValueError:
            return None
    if isinstance(action, list) and action and isinstance(action[0], dict):
        action = action[0]
    if not isinstance(action, dict):
        return None
    for key in ("name", "tool", "tool_name"):
        if isinstance(action.get(key), str):
            return str(action[key])
    fn = action.get("function")
    if isinstance(fn, dict) and isinstance(fn.get("name"), str):
        return str(fn["name"])
    return None


def flatten(value: Any, path: str = "$") -> dict[str, Any]:
    """Leaves of a JSON value keyed by their path (``$.a[0].b``)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(flatten(v, f"{path}.{k}"))
        return out or {path: value}
    if isinstance(value, list):
        out = {}
        for i, v in enumerate(value):
            out.update(flatten(v, f"{path}[{i}]"))
        return out or {path: value}
    return {path: value}


def _schema_issues(
    pred: Any, truth: Any, action: Action, tools: list[dict[str, Any]] | None
) -> list[str]:
    name = tool_name(action)
    tool = next((t for t in tools or [] if isinstance(t, dict) and t.get("name") == name), None)
    schema = (tool or {}).get("outputSchema") or (tool or {}).get("output_schema")
    jsonschema: Any = jsonschema_module()
    if isinstance(schema, dict) and jsonschema is not None:
        target = pred.get("structuredContent", pred) if isinstance(pred, dict) else pred
        try:
            jsonschema.validate(target, schema)
        except jsonschema.ValidationError as exc:
            return [f"does not match {name}'s output schema: {exc.message[:120]}"]
        except jsonschema.SchemaError:
            pass
        return []
    if type(pred) is not type(truth) and not (
        isinstance(pred, int | float) and isinstance(truth, int | float)
    ):
        return [f"JSON {type(pred).__name__} where the tool returns {type(truth).__name__}"]
    if isinstance(truth, dict) and isinstance(pred, dict):
        missing = [k for k in truth if k not in pred]
        if missing:
            return [f"missing keys {missing[:5]}"]
    return []


def _in_context(value: Any, context: str) -> bool:
    if value is None or isinstance(value, bool):
        return True
    text = value if isinstance(value, str) else json.dumps(value)
    if isinstance(value, int | float):
        return re.search(rf"(?<![\w.]){re.escape(text)}(?![\w.])", context) is not None
    return len(text) >= 3 and text in context


def check_json(
    prediction: str,
    truth: str,
    action: Action,
    context: str,
    tools: list[dict[str, Any]] | None,
) -> tuple[list[str], dict[str, TierResult] | None]:
    """Format issues and tiers; ``None`` tiers when the ground truth is not JSON."""
    try:
        gold = loads_lenient(truth)
    except ValueError:
        return [], None
    fmt: list[str] = []
    try:
        pred: Any = loads_lenient(prediction)
    except ValueError:
        pred = _MISSING
        fmt.append("not valid JSON")
    if pred is not _MISSING:
        fmt.extend(_schema_issues(pred, gold, action, tools))
    pred_leaves = flatten(pred) if pred is not _MISSING else {}
    det, run, env = TierResult(), TierResult(), TierResult()
    for path, value in flatten(gold).items():
        got = pred_leaves.get(path, _MISSING)
        text = value if isinstance(value, str) else json.dumps(value)
        if mask(text) != text:
            run.total += 1
            ok = isinstance(got, str | int | float) and mask(str(got)) == mask(text)
            tier = run
        elif _in_context(value, context):
            det.total += 1
            ok = got is not _MISSING and got == value
            tier = det
        else:
            env.total += 1
            ok = got is not _MISSING and type(got) is type(value)
            tier = env
        if ok:
            tier.matched += 1
        else:
            tier.issues.append(f"{path}: expected {text[:40]!r}")
    return fmt, {"deterministic": det, "runtime": run, "environment": env}
