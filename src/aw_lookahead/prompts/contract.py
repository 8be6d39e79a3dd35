"""The turn layout of the world-model message contract (see docs/training.md, "Message contract").

A user turn is ``### Turn i`` followed by optional ``**Task Instruction:**`` and
``**Current State:**`` sections (turn 1 only), an optional ``**Tool Definition:**``
section (the compact MCP layout: the called tool's definition, in the first
turn that calls it) and the ``**Action:**`` section; JSON actions sit in a
```` ```json ```` fence. An assistant turn is
``**Environment Observation:**`` followed by the observation.

This module is the single place that writes and reads that layout, so the
renderer, the AgentWorldBench importer and the trainer cannot drift apart.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

OBSERVATION_MARKER = "**Environment Observation:**"
ACTION_HEADER = "**Action:**"
TASK_HEADER = "**Task Instruction:**"
STATE_HEADER = "**Current State:**"
TOOL_HEADER = "**Tool Definition:**"

_SECTION = re.compile(
    r"^\*\*(Task Instruction|Current State|Tool Definition|Action):\*\*[ \t]*$", re.MULTILINE
)
_FENCE = re.compile(r"^```(?:json)?[ \t]*\n(.*)\n```[ \t]*$", re.DOTALL)


def format_action(action: Any) -> str:
    """An action as it appears under ``**Action:**``: text as is, JSON in a json fence."""
    if isinstance(action, str):
        return action
    return "```json\n" + json.dumps(action, ensure_ascii=False) + "\n```"


def render_user_turn(
    index: int,
    action: Any,
    *,
    task: str | None = None,
    state: str | None = None,
    tool: str | None = None,
) -> str:
    """Render user turn ``index`` (1-based); ``tool`` is a tool definition's text."""
    parts = [f"### Turn {index}"]
    if task:
        parts.append(f"{TASK_HEADER}\n{task}\n")
    if state:
        parts.append(f"{STATE_HEADER}\n{state}\n")
    if tool:
        parts.append(f"{TOOL_HEADER}\n{tool}\n")
    parts.append(f"{ACTION_HEADER}\n{format_action(action)}")
    return "\n".join(parts)


def render_observation(observation: str) -> str:
    """Render the assistant message that carries an observation."""
    return f"{OBSERVATION_MARKER}\n{observation}"


def strip_observation_marker(text: str) -> str:
    """Remove a leading ``**Environment Observation:**`` line, if present."""
    stripped = text.lstrip()
    if stripped.startswith(OBSERVATION_MARKER):
        rest = stripped[len(OBSERVATION_MARKER) :]
        return rest[1:] if rest.startswith("\n") else rest.lstrip(" \t")
    return text


@dataclass(frozen=True)
class ParsedUserTurn:
    """The fields recovered from a rendered user turn (best effort)."""

    action: Any
    task: str | None
    state: str | None
    tool: str | None = None


def parse_action_text(text: str) -> Any:
    """Decode a fenced JSON action; anything else stays text."""
    body = text.strip()
    m = _FENCE.match(body)
    if m:
        try:
            return json.loads(m.group(1))
        except json.JSONDecodeError:
            return body
    return body


def parse_user_turn(text: str) -> ParsedUserTurn:
    """Recover action, task and state from a rendered user turn.

    Text without an ``**Action:**`` header is taken whole (minus a
    ``### Turn`` heading) as the action.
    """
    sections: dict[str, str] = {}
    matches = list(_SECTION.finditer(text))
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        sections[m.group(1)] = text[m.end() : end].strip("\n").rstrip()
    if "Action" in sections:
        action = parse_action_text(sections["Action"])
    else:
        body = re.sub(r"^###\s*Turn\s+\d+\s*\n?", "", text.lstrip())
        action = parse_action_text(body)
    return ParsedUserTurn(
        action=action,
        task=sections.get("Task Instruction") or None,
        state=sections.get("Current State") or None,
        tool=sections.get("Tool Definition") or None,
    )
