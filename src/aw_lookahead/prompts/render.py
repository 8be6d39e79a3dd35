"""System prompts per domain and rendering of trajectory + action into chat messages."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from aw_lookahead._contract import render_observation, render_user_turn
from aw_lookahead._jsonl import read_text_file
from aw_lookahead.errors import ConfigError
from aw_lookahead.trajectory import Action, Domain, Trajectory

Message = dict[str, str]

_SLOT = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SLOT_LINE = re.compile(r"^[ \t]*\{([A-Za-z_][A-Za-z0-9_]*)\}[ \t]*\n?", re.MULTILINE)


def fill_placeholders(text: str, values: dict[str, str]) -> str:
    """Fill ``{name}`` slots from ``values``; remove the others (a slot alone on its line
    takes the line with it), so a loaded template never reaches a model with a raw slot.

    Only identifiers in single braces count: JSON such as ``{"a": 1}`` is untouched.
    """
    text = _SLOT_LINE.sub(lambda m: m.group(0) if m.group(1) in values else "", text)
    return _SLOT.sub(lambda m: values.get(m.group(1), ""), text)


def tool_definitions_text(tools: Sequence[dict[str, Any]] | None) -> str:
    """Tool definitions as the MCP system prompt lists them (one JSON object per tool)."""
    if not tools:
        return "(no tool definitions were given; infer the tools from the calls)"
    return "\n".join(json.dumps(t, ensure_ascii=False, sort_keys=True) for t in tools)


class PromptSet:
    """One system prompt per domain, with optional overrides from a folder.

    An override folder may hold ``<domain>.md`` / ``<domain>.txt`` files or the
    reference layout ``<domain>/system_prompt.txt``; domains without a file
    keep the packaged prompt. ``{tool_definitions}`` (or ``{tools}``) in a prompt
    is replaced by the trajectory's tool definitions; any other ``{name}`` slot
    (e.g. the reference MCP/SWE prompts' ``{demonstrations}``) is removed.
    """

    def __init__(self, overrides: str | Path | None = None) -> None:
        self._texts: dict[Domain, str] = {}
        base = resources.files("aw_lookahead.prompts") / "system"
        common = (base / "_common.md").read_text(encoding="utf-8")
        for domain in Domain:
            body = (base / f"{domain.value}.md").read_text(encoding="utf-8")
            self._texts[domain] = body.rstrip() + "\n\n" + common
        if overrides is not None:
            self._load_overrides(Path(overrides))

    def _load_overrides(self, folder: Path) -> None:
        if not folder.is_dir():
            raise ConfigError(f"prompt override folder {folder} does not exist or is not a folder")
        found = 0
        for domain in Domain:
            for candidate in (
                folder / f"{domain.value}.md",
                folder / f"{domain.value}.txt",
                folder / domain.value / "system_prompt.txt",
            ):
                if candidate.is_file():
                    self._texts[domain] = read_text_file(candidate, what="prompt file")
                    found += 1
                    break
        if not found:
            names = ", ".join(f"{d.value}.md" for d in Domain)
            raise ConfigError(
                f"prompt override folder {folder} holds no prompt file; expected any of: {names} "
                "(or <domain>/system_prompt.txt)"
            )

    def system(self, domain: Domain | str, *, tools: Sequence[dict[str, Any]] | None = None) -> str:
        """The system prompt for ``domain`` with tool definitions filled in."""
        text = self._texts[Domain.parse(domain)]
        if not _SLOT.search(text):
            return text
        definitions = tool_definitions_text(tools)
        return fill_placeholders(text, {"tool_definitions": definitions, "tools": definitions})


@functools.cache
def default_prompts() -> PromptSet:
    """The packaged prompt set (loaded once)."""
    return PromptSet()


def _system_text(trajectory: Trajectory, prompts: PromptSet | None) -> str:
    if trajectory.system_prompt is not None:
        return trajectory.system_prompt
    return (prompts or default_prompts()).system(trajectory.domain, tools=trajectory.tools)


def history_messages(
    trajectory: Trajectory, *, prompts: PromptSet | None = None, skip_turns: int = 0
) -> list[Message]:
    """System message plus one user/assistant pair per turn.

    ``skip_turns`` drops that many turns after the first (oldest first), to fit
    a context window; turn numbers keep their original values so the gap shows.
    """
    messages: list[Message] = []
    system = _system_text(trajectory, prompts)
    if system:
        messages.append({"role": "system", "content": system})
    for i, turn in enumerate(trajectory.turns):
        if 0 < i <= skip_turns:
            continue
        first = i == 0
        user = turn.prompt
        if user is None:
            user = render_user_turn(
                i + 1,
                turn.action,
                task=trajectory.task if first else None,
                state=trajectory.initial_state if first else None,
            )
        assistant = (
            turn.response if turn.response is not None else render_observation(turn.observation)
        )
        messages.append({"role": "user", "content": user})
        messages.append({"role": "assistant", "content": assistant})
    return messages


def render_messages(
    trajectory: Trajectory,
    action: Action,
    *,
    prompts: PromptSet | None = None,
    skip_turns: int = 0,
) -> list[Message]:
    """Chat messages asking the world model for the observation that follows ``action``.

    The action goes only into the last message, so all candidates of one step
    share every earlier message byte for byte.
    """
    messages = history_messages(trajectory, prompts=prompts, skip_turns=skip_turns)
    first = not trajectory.turns
    messages.append(
        {
            "role": "user",
            "content": render_user_turn(
                len(trajectory.turns) + 1,
                action,
                task=trajectory.task if first else None,
                state=trajectory.initial_state if first else None,
            ),
        }
    )
    return messages
