"""LangChain messages -> our :class:`~aw_lookahead.trajectory.Trajectory`.

The world model sees what the agent did and saw, in our schema:

* each executed tool call of an ``AIMessage`` becomes an action, in the form
  of its tool's domain: a JSON tool call ``{"name", "arguments"}`` for MCP-like
  tools, a keystroke list ``[{"keystrokes": "ls -la\\n", "duration": 1.0}]``
  for terminal tools;
* the ``ToolMessage`` answering it becomes the observation;
* the first human message becomes the task (prefixed by the agent's system
  prompt when one is known);
* calls vetoed by lookahead never ran, so they are left out of the history
  (the environment never saw them), and so are calls not answered yet.

:class:`DomainMap` maps tool names to domains. By default a tool whose name
looks like a shell (``bash``, ``shell``, ``terminal``, ``run_command``, ...)
is a terminal tool and every other tool is MCP-like; pass ``domains=`` to
override per name and ``default=`` for the rest.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool

from aw_lookahead.errors import ConfigError
from aw_lookahead.lookahead.routing import declared_annotations
from aw_lookahead.trajectory import Action, Domain, Trajectory, Turn

__all__ = [
    "TERMINAL_ARG_NAMES",
    "VETO_ID_PREFIX",
    "DomainMap",
    "message_text",
    "messages_to_trajectory",
    "tool_definitions",
]

VETO_ID_PREFIX = "aw-lookahead-veto-"
"""Message id prefix of the ToolMessages lookahead adds for vetoed calls."""

TERMINAL_ARG_NAMES: tuple[str, ...] = ("command", "cmd", "commands", "script", "input", "code")
"""Argument names read, in this order, as the shell text of a terminal tool call."""

_SHELL_NAME = re.compile(
    r"(?:^|_)(?:bash|shell|sh|zsh|terminal|console|exec|execute_command|run_command|"
    r"run_shell|run_shell_command|command|cmd)(?:$|_)",
    re.IGNORECASE,
)


def message_text(message: BaseMessage) -> str:
    """The text of a message: string content as is, content blocks' text joined."""
    content = message.content
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and isinstance(block.get("text"), str):
            parts.append(str(block["text"]))
    return "\n".join(parts)


def is_veto_message(message: BaseMessage) -> bool:
    """True for a ToolMessage that lookahead added for a vetoed call."""
    return isinstance(message, ToolMessage) and str(message.id or "").startswith(VETO_ID_PREFIX)


@dataclass(frozen=True)
class DomainMap:
    """Which domain each tool belongs to, and how its calls are written as actions.

    ``domains`` overrides per tool name (values: a :class:`Domain` or its
    name); tools not listed are terminal when their name looks like a shell,
    else ``default``. ``terminal_args`` are the argument names read as the
    shell text of a terminal call (a call with none of them is written as a
    JSON tool call instead, so nothing is lost).
    """

    domains: Mapping[str, Domain | str] = field(default_factory=dict)
    default: Domain | str = Domain.MCP
    terminal_args: tuple[str, ...] = TERMINAL_ARG_NAMES
    keystroke_duration: float = 1.0

    def __post_init__(self) -> None:
        try:
            parsed = {name: Domain.parse(d) for name, d in self.domains.items()}
            default = Domain.parse(self.default)
        except ValueError as exc:
            raise ConfigError(f"DomainMap: {exc}") from exc
        object.__setattr__(self, "domains", parsed)
        object.__setattr__(self, "default", default)

    @classmethod
    def of(cls, domains: Mapping[str, Domain | str] | DomainMap | None) -> DomainMap:
        """``domains`` itself when it is a map, else a map with those per-tool overrides.

        The adapters' ``domains=`` option takes either form.
        """
        return domains if isinstance(domains, DomainMap) else cls(domains=dict(domains or {}))

    def domain_of(self, tool_name: str) -> Domain:
        """The domain of ``tool_name``: the override, else shell-like -> terminal, else default."""
        if tool_name in self.domains:
            return Domain.parse(self.domains[tool_name])
        if _SHELL_NAME.search(tool_name):
            return Domain.TERMINAL
        return Domain.parse(self.default)

    def shell_text(self, args: Mapping[str, Any]) -> str | None:
        """The command a terminal call types, or ``None`` when it has no shell text."""
        for key in self.terminal_args:
            value = args.get(key)
            if isinstance(value, str):
                return value
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                return "\n".join(value)
        strings = [v for v in args.values() if isinstance(v, str)]
        return strings[0] if len(args) == 1 and len(strings) == 1 else None

    def action(self, tool_call: Mapping[str, Any], domain: Domain | None = None) -> Action:
        """A LangChain tool call as an action of ``domain`` (default: the tool's own)."""
        name = str(tool_call.get("name", ""))
        args = tool_call.get("args") or {}
        domain = domain or self.domain_of(name)
        if domain is Domain.TERMINAL and self.domain_of(name) is Domain.TERMINAL:
            keys = args.get("keystrokes") if isinstance(args, Mapping) else None
            if isinstance(keys, list):
                return list(keys)
            text = self.shell_text(args) if isinstance(args, Mapping) else None
            if text is not None:
                if not text.endswith("\n"):
                    text += "\n"
                return [{"keystrokes": text, "duration": self.keystroke_duration}]
        return {"name": name, "arguments": dict(args) if isinstance(args, Mapping) else args}


def _schema(tool: BaseTool) -> dict[str, Any]:
    try:
        schema = tool.tool_call_schema
        if isinstance(schema, dict):
            return dict(schema)
        json_schema = getattr(schema, "model_json_schema", None) or schema.schema
        return dict(json_schema())
    except Exception:  # a tool with an unusual schema still gets a definition
        return {"type": "object"}


def tool_definitions(tools: Iterable[BaseTool | Mapping[str, Any]]) -> list[dict[str, Any]]:
    """MCP-style definitions ``{"name", "description", "inputSchema", "annotations"}``.

    LangChain tools are described from their call schema and metadata (both
    adapter layouts of MCP annotations); dicts already in MCP form (or OpenAI
    function form) are normalised. ``annotations`` holds the hints the tool
    states, and is left out when it states none.
    """
    out: list[dict[str, Any]] = []
    for tool in tools:
        if isinstance(tool, BaseTool):
            out.append(
                {
                    "name": tool.name,
                    "description": tool.description,
                    "inputSchema": _schema(tool),
                    **_annotations(tool),
                }
            )
        elif isinstance(tool, Mapping):
            fn = tool.get("function") if isinstance(tool.get("function"), Mapping) else tool
            assert isinstance(fn, Mapping)
            out.append(
                {
                    "name": fn.get("name", ""),
                    "description": fn.get("description", ""),
                    "inputSchema": fn.get("inputSchema") or fn.get("parameters") or {},
                    **_annotations(fn),
                }
            )
    return out


def _annotations(tool: Any) -> dict[str, dict[str, bool]]:
    """``{"annotations": ...}`` with the hints ``tool`` states, or ``{}`` when it states none
    (MCP's defaults written out would read as a tool that says it destroys)."""
    hints = declared_annotations(tool)
    return {"annotations": _camel(hints)} if hints else {}


def _camel(hints: Mapping[str, bool]) -> dict[str, bool]:
    names = {
        "read_only_hint": "readOnlyHint",
        "destructive_hint": "destructiveHint",
        "idempotent_hint": "idempotentHint",
        "open_world_hint": "openWorldHint",
    }
    return {names.get(k, k): v for k, v in hints.items()}


def _task(messages: Sequence[BaseMessage], system_prompt: str | None) -> str | None:
    system = system_prompt
    if system is None:
        system = next((message_text(m) for m in messages if isinstance(m, SystemMessage)), None)
    human = next((message_text(m) for m in messages if isinstance(m, HumanMessage)), None)
    parts = [p.strip() for p in (system, human) if p and p.strip()]
    return "\n\n".join(parts) if parts else None


def messages_to_trajectory(
    messages: Sequence[BaseMessage],
    *,
    domain: Domain | str | None = None,
    domain_map: DomainMap | None = None,
    tools: Iterable[BaseTool | Mapping[str, Any]] | None = None,
    system_prompt: str | None = None,
    trajectory_id: str | None = None,
) -> Trajectory:
    """The executed history of a conversation as a trajectory of ``domain``.

    ``domain`` defaults to the domain of the tools used (terminal when every
    call so far is a terminal call, else the map's default). Calls of tools
    from another domain are kept as JSON tool calls. Each turn's metadata
    holds the ``tool_call_id``, the tool ``name`` and the ToolMessage
    ``status``. ``tools`` fill :attr:`Trajectory.tools` (MCP definitions).
    """
    dmap = domain_map or DomainMap()
    answers: dict[str, ToolMessage] = {
        m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)
    }
    executed: list[tuple[dict[str, Any], ToolMessage]] = []
    for m in messages:
        if not isinstance(m, AIMessage):
            continue
        for call in m.tool_calls:
            answer = answers.get(str(call.get("id")))
            if answer is None or is_veto_message(answer):
                continue
            executed.append((dict(call), answer))
    if domain is None:
        used = {dmap.domain_of(str(c["name"])) for c, _ in executed}
        domain = used.pop() if len(used) == 1 else dmap.default
    dom = Domain.parse(domain)
    turns = [
        Turn(
            action=dmap.action(call, dom),
            observation=message_text(answer),
            metadata={
                "tool_call_id": answer.tool_call_id,
                "name": call.get("name"),
                "status": answer.status,
            },
        )
        for call, answer in executed
    ]
    return Trajectory(
        domain=dom,
        task=_task(messages, system_prompt),
        tools=tool_definitions(tools) if tools is not None else None,
        turns=turns,
        id=trajectory_id,
    )
