"""System prompts per domain and rendering of trajectory + action into chat messages."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from aw_lookahead._jsonl import read_text_file
from aw_lookahead.errors import ConfigError
from aw_lookahead.trajectory import Action, Domain, Trajectory

from .contract import render_observation, render_user_turn
from .history import RenderedHistory, render_history, tool_name
from .step_messages import StepMessages

Message = dict[str, str]
ToolLayout = Literal["compact", "full"]
PromptProfile = Literal["standard", "short"]
PROMPT_PROFILES: tuple[PromptProfile, ...] = ("standard", "short")

_TOOLS_SLOT = "{tool_definitions}"
_NO_TOOLS = "(no tool definitions were given; infer the tools from the calls)"
_DEFINITION_KEYS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")
_BRIEF_CHARS = 100

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
    """Tool definitions as the full layout's system prompt lists them (one JSON object each)."""
    if not tools:
        return _NO_TOOLS
    return "\n".join(json.dumps(t, ensure_ascii=False, sort_keys=True) for t in tools)


def tool_names_text(tools: Sequence[dict[str, Any]] | None) -> str:
    """The compact layout's system-prompt slot: one line of tool names."""
    if not tools:
        return _NO_TOOLS
    names = ", ".join(str(t.get("name", "?")) for t in tools)
    return (
        f"Tools on this server: {names}.\n"
        "A tool's full definition (description, input and output schema, annotations) is "
        "given under **Tool Definition:** in the first turn that calls it.\n"
    )


def _shorten(text: str) -> str:
    first = text.strip().split(". ", 1)[0].split("\n", 1)[0]
    return first if len(first) <= _BRIEF_CHARS else first[: _BRIEF_CHARS - 3].rstrip() + "..."


def _brief(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _shorten(v) if k == "description" and isinstance(v, str) else _brief(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_brief(v) for v in value]
    return value


def tool_definition_text(tool: dict[str, Any], *, brief: bool = False) -> str:
    """One tool's definition as a turn's **Tool Definition:** section carries it.

    Only what predicts the result is kept (name, title, description, schemas,
    annotations; no ``$schema`` URLs); ``brief`` cuts every description to its
    first sentence, the trimmer's last resort before refusing a prompt.
    """
    out: dict[str, Any] = {}
    for key in _DEFINITION_KEYS:
        value = tool.get(key)
        if value is None:
            continue
        if isinstance(value, dict) and "$schema" in value:
            value = {k: v for k, v in value.items() if k != "$schema"}
        out[key] = value
    if brief:
        out = _brief(out)
    return json.dumps(out, ensure_ascii=False, separators=(",", ":"))


class PromptSet:
    """One system prompt per domain, with optional overrides from a folder.

    An override folder may hold ``<domain>.md`` / ``<domain>.txt`` files or the
    reference layout ``<domain>/system_prompt.txt``; domains without a file
    keep the packaged prompt. ``{tool_definitions}`` (or ``{tools}``) in a prompt
    is filled by ``tool_layout``: ``"compact"`` (default) puts one line of tool
    names there and each called tool's full definition into the user turn that
    first calls it, so a prompt stays small for a 4K-context model while the
    system prompt stays identical for every candidate of a step; ``"full"``
    puts every definition there (for long-context models trained on that
    layout). Any other ``{name}`` slot (e.g. the reference MCP/SWE prompts'
    ``{demonstrations}``) is removed.

    ``profile`` picks the packaged text: ``"standard"`` (the full prompts) or
    ``"short"`` (a few lines per domain, for small models with a 4K context;
    domains without a short text keep the standard one). A model must be
    served with the profile it was trained on:
    :func:`~aw_lookahead.prompts.prompts_for_model` picks it by served name.
    """

    def __init__(
        self,
        overrides: str | Path | None = None,
        *,
        tool_layout: ToolLayout = "compact",
        profile: PromptProfile = "standard",
    ) -> None:
        if tool_layout not in ("compact", "full"):
            raise ConfigError(f"tool_layout must be 'compact' or 'full', got {tool_layout!r}")
        if profile not in PROMPT_PROFILES:
            raise ConfigError(
                f"prompt profile must be one of {', '.join(PROMPT_PROFILES)}, got {profile!r}"
            )
        self.tool_layout: ToolLayout = tool_layout
        self.profile: PromptProfile = profile
        self._texts: dict[Domain, str] = {}
        base = resources.files("aw_lookahead.prompts") / "system"
        own = base / profile if profile != "standard" else base

        for domain in Domain:
            folder = own if (own / f"{domain.value}.md").is_file() else base
            body = (folder / f"{domain.value}.md").read_text(encoding="utf-8")
            common = (folder / "_common.md").read_text(encoding="utf-8")
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

    def system(
        self,
        domain: Domain | str,
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        layout: ToolLayout | None = None,
    ) -> str:
        """The system prompt for ``domain`` with the tool slot filled (``layout`` overrides)."""
        text = self._texts[Domain.parse(domain)]
        if not _SLOT.search(text):
            return text
        full = (layout or self.tool_layout) == "full"
        fill = tool_definitions_text(tools) if full else tool_names_text(tools)
        return fill_placeholders(text, {"tool_definitions": fill, "tools": fill})

    def defines_tools_in_turns(self, trajectory: Trajectory) -> bool:
        """True when turns carry tool definitions (compact layout, our prompt, tools given)."""
        return (
            self.tool_layout == "compact"
            and bool(trajectory.tools)
            and trajectory.system_prompt is None
            and _TOOLS_SLOT in self._texts[trajectory.domain]
        )


@functools.cache
def default_prompts() -> PromptSet:
    """The packaged prompt set (loaded once)."""
    return PromptSet()


@functools.cache
def profile_prompts(profile: PromptProfile) -> PromptSet:
    """The packaged prompt set of ``profile`` (loaded once per profile)."""
    return default_prompts() if profile == "standard" else PromptSet(profile=profile)


def _system_text(trajectory: Trajectory, prompts: PromptSet | None) -> str:
    if trajectory.system_prompt is not None:
        return trajectory.system_prompt
    return (prompts or default_prompts()).system(trajectory.domain, tools=trajectory.tools)


class _ToolDefiner:
    """Hands out each called tool's definition once: for the first rendered turn calling it."""

    def __init__(self, trajectory: Trajectory, prompts: PromptSet | None, brief: bool) -> None:
        self._tools = _turn_tools(trajectory, prompts)
        self._brief = brief

    def peek(self, action: Action) -> str | None:
        """The definition of the tool ``action`` calls, if no earlier turn was handed it."""
        tool = self._tools.get(tool_name(action))
        return tool_definition_text(tool, brief=self._brief) if tool is not None else None

    def take(self, action: Action) -> str | None:
        """:meth:`peek`, and later turns calling the same tool get nothing."""
        text = self.peek(action)
        self._tools.pop(tool_name(action), None)
        return text


def _turn_tools(trajectory: Trajectory, prompts: PromptSet | None) -> dict[str, dict[str, Any]]:
    """The definitions that turns carry (compact layout, our prompt), by tool name."""
    tools: dict[str, dict[str, Any]] = {}
    if (prompts or default_prompts()).defines_tools_in_turns(trajectory):
        for tool in trajectory.tools or []:
            tools.setdefault(str(tool.get("name")), tool)
    return tools


def history_messages(
    trajectory: Trajectory,
    *,
    prompts: PromptSet | None = None,
    skip_turns: int = 0,
    brief_tools: bool = False,
) -> list[Message]:
    """System message plus one user/assistant pair per turn.

    ``skip_turns`` drops that many turns after the first (oldest first), to fit
    a context window; turn numbers keep their original values so the gap shows.
    In the compact tool layout a tool's definition rides with the first
    rendered turn that calls it, so dropping turns never drops a definition.
    ``brief_tools`` shortens the definitions' descriptions (last resort to fit).
    """
    return [dict(m) for m in _history(trajectory, prompts, skip_turns, brief_tools).messages]


def _history(
    trajectory: Trajectory, prompts: PromptSet | None, skip_turns: int, brief_tools: bool
) -> RenderedHistory:
    """The one history renderer: incremental (:mod:`.history`) untrimmed, in full when trimmed."""
    if skip_turns > 0:
        return _full_history(trajectory, prompts, skip_turns, brief_tools)
    return render_history(
        trajectory,
        _system_text(trajectory, prompts),
        _turn_tools(trajectory, prompts),
        brief_tools=brief_tools,
        definition=functools.partial(tool_definition_text, brief=brief_tools),
    )


def _full_history(
    trajectory: Trajectory, prompts: PromptSet | None, skip_turns: int, brief_tools: bool
) -> RenderedHistory:
    """Every kept turn rendered afresh: trimmed histories, and the reference for the tests."""
    system = _system_text(trajectory, prompts)
    definer = _ToolDefiner(trajectory, prompts, brief_tools)
    messages: list[Message] = []
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
                tool=definer.take(turn.action),
            )
        assistant = (
            turn.response if turn.response is not None else render_observation(turn.observation)
        )
        messages.append({"role": "user", "content": user})
        messages.append({"role": "assistant", "content": assistant})
    return RenderedHistory(
        tuple(messages),
        definer._tools,
        frozenset(),
        functools.partial(tool_definition_text, brief=brief_tools),
    )


def render_messages(
    trajectory: Trajectory,
    action: Action,
    *,
    prompts: PromptSet | None = None,
    skip_turns: int = 0,
    brief_tools: bool = False,
) -> list[Message]:
    """Chat messages asking the world model for the observation that follows ``action``.

    The action (and, in the compact tool layout, the called tool's definition
    when no earlier rendered turn carries it) goes only into the last message,
    so all candidates of one step share every earlier message byte for byte.
    """
    step = render_step(
        trajectory, [action], prompts=prompts, skip_turns=skip_turns, brief_tools=brief_tools
    )
    return [dict(m) for m in step.messages(0)]


def render_step(
    trajectory: Trajectory,
    actions: Sequence[Action],
    *,
    prompts: PromptSet | None = None,
    skip_turns: int = 0,
    brief_tools: bool = False,
    states: Sequence[str | None] = (),
) -> StepMessages:
    """Render the history once and each action's last user turn (see :func:`render_messages`).

    ``states`` (one per action, or none) is what was observed of the environment
    just before each action; it joins the turn's ``**Current State:**``, after the
    trajectory's initial state on a first turn, so the shared history is unchanged.
    """
    history = _history(trajectory, prompts, skip_turns, brief_tools)
    first = not trajectory.turns
    task = trajectory.task if first else None
    initial = trajectory.initial_state if first else None
    index = len(trajectory.turns) + 1
    observed = list(states) + [None] * (len(actions) - len(states))
    last = tuple(
        {
            "role": "user",
            "content": render_user_turn(
                index,
                action,
                task=task,
                state="\n\n".join(s for s in (initial, seen) if s) or None,
                tool=history.peek(action),
            ),
        }
        for action, seen in zip(actions, observed, strict=True)
    )
    return StepMessages(
        history.messages, last, skip_turns, brief_tools, history.key, history.size_bytes
    )
