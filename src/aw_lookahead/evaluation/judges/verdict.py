"""Reading the reference judge's reply (its rules; see :mod:`.reference`).

Thinking removed; the last ``<final_evaluation>`` block if any; a fenced JSON
block (the last one that mentions ``"scores"``), else a brace-matched object,
else the last object found backwards; light repairs (trailing commas,
quoted/unquoted keys); each score coerced to an integer and clamped to 1-5
(0 marks a missing one); ``total_score`` is the mean of the scores above 0.
"""

from __future__ import annotations

import json
import re
from typing import Any

from aw_lookahead.evaluation.official import last_tagged, remove_thinking

from .rubric import DIMENSIONS

__all__ = ["VERDICT_TAG", "parse_verdict"]

VERDICT_TAG = "final_evaluation"


def _balanced_from(text: str, start: int) -> str | None:
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(text)):
        ch = text[i]
        if escaped:
            escaped = False
        elif in_string:
            if ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return None


def _fenced(text: str) -> str | None:
    blocks = [m.group(1).strip() for m in re.finditer(r"```(?:json)?\s*([\s\S]*?)\s*```", text)]
    objects = [b for b in blocks if b.startswith("{") and b.endswith("}")]
    with_scores = [b for b in objects if '"scores"' in b]
    chosen = with_scores or objects
    return chosen[-1] if chosen else None


def _objects(text: str) -> str | None:
    found: list[str] = []
    pos = text.find("{")
    while pos != -1:
        obj = _balanced_from(text, pos)
        if obj is not None:
            found.append(obj)
            pos = text.find("{", pos + len(obj))
        else:
            pos = text.find("{", pos + 1)
    with_scores = [o for o in found if '"scores"' in o]
    chosen = with_scores or found
    return chosen[-1] if chosen else None


def _last_backwards(text: str) -> str | None:
    end = text.rfind("}")
    depth, in_string = 0, False
    for i in range(end, -1, -1):
        ch = text[i]
        if ch == '"' and (i == 0 or text[i - 1] != "\\"):
            in_string = not in_string
        if in_string:
            continue
        if ch == "}":
            depth += 1
        elif ch == "{":
            depth -= 1
            if depth == 0:
                return text[i : end + 1]
    return None


def _repair(text: str) -> str:
    text = re.sub(r",(\s*[}\]])", r"\1", text)
    text = re.sub(r"'(\w+)'(\s*:)", r'"\1"\2', text)
    return re.sub(r"([{,])\s*(\w+)\s*:", r'\1"\2":', text)


def _score(value: Any) -> int:
    if isinstance(value, int):  # bool included, as in the reference
        n = int(value)
    elif isinstance(value, float):
        n = round(value)
    elif isinstance(value, str):
        try:
            n = int(value.split("/")[0].strip())
        except ValueError:
            n = 0
    else:
        n = 0
    return min(5, n) if n > 0 else n


def _strings(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    return [value] if isinstance(value, str) and value else []


def parse_verdict(raw: str | None) -> dict[str, Any]:
    """Read a reference-judge reply: ``success``, ``scores``, ``total_score``, ``error``..."""
    failed: dict[str, Any] = {
        "success": False,
        "scores": dict.fromkeys(DIMENSIONS, 0),
        "total_score": 0.0,
        "strengths": [],
        "weaknesses": [],
    }
    text = (raw or "").strip()
    if not text:
        return {**failed, "error": "Empty output"}
    text = remove_thinking(text, VERDICT_TAG)
    tagged = last_tagged(text, VERDICT_TAG)
    target = tagged or text
    found = _fenced(target) or _objects(target) or _last_backwards(target)
    if found is None:
        return {**failed, "error": "No JSON object found"}
    found = _repair(found)
    try:
        try:
            result = json.loads(found)
        except json.JSONDecodeError:
            only = re.search(r'"scores"\s*:\s*\{[^}]+\}', found)
            if only is None:
                raise
            result = json.loads('{"strengths":[],"weaknesses":[],' + only.group(0) + "}")
    except json.JSONDecodeError as exc:
        return {**failed, "error": f"JSON error: {exc}"}
    if not isinstance(result, dict) or not isinstance(result.get("scores"), dict):
        keys = list(result) if isinstance(result, dict) else type(result).__name__
        return {**failed, "error": f"Invalid scores. Keys: {keys}"}
    scores = {d: _score(result["scores"].get(d, 0)) for d in DIMENSIONS}
    positive = [v for v in scores.values() if v > 0]
    return {
        "success": True,
        "scores": scores,
        "total_score": sum(positive) / len(positive) if positive else 0,
        "strengths": _strings(result.get("strengths", [])),
        "weaknesses": _strings(result.get("weaknesses", [])),
    }
