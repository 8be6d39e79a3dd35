"""``TrajectoryRecorder``: every real (action, observation) of a run, as crash-safe JSONL.

Use it as ``create_agent`` middleware, or hand its methods to a ``ToolNode``::

    create_agent(model, tools, middleware=[TrajectoryRecorder("runs.jsonl")])
    ToolNode(tools, wrap_tool_call=rec.wrap_tool_call, awrap_tool_call=rec.awrap_tool_call)

Format: each line is a :class:`~aw_lookahead.trajectory.Trajectory` in our
schema holding exactly one turn (the call as an action of its tool's domain,
the tool's answer as the observation, ``metadata`` with ``tool_call_id``,
``name``, ``status``, ``step``). ``id`` is the run (the LangGraph
``thread_id`` when there is one, else one id per recorder); ``metadata.step``
orders the turns. :func:`read_recording` merges the lines back into one
trajectory per run. Guarantees: only calls that really ran are recorded
(vetoed calls never reach a tool); each line is written with one
``O_APPEND`` write (:class:`~aw_lookahead.trajectory.JsonlWriter`), so a
process killed mid-run leaves only whole lines; the tool's result is
returned untouched.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ToolCallRequest
from langchain_core.messages import BaseMessage, ToolMessage
from langgraph.types import Command

from aw_lookahead.trajectory import Domain, JsonlWriter, Trajectory, Turn, read_trajectories

from .convert import DomainMap, message_text, messages_to_trajectory

__all__ = ["TrajectoryRecorder", "read_recording", "request_messages", "result_message", "run_id"]

ToolResult = ToolMessage | Command[Any]


def request_messages(request: ToolCallRequest) -> list[BaseMessage]:
    """The conversation visible to a tool call (empty when the node got bare tool calls)."""
    state = request.state
    messages: Any = None
    if isinstance(state, Mapping):
        messages = state.get("messages")
    elif isinstance(state, list):
        messages = state
    else:
        messages = getattr(state, "messages", None)
    return [m for m in messages or () if isinstance(m, BaseMessage)]


def run_id(request: ToolCallRequest, fallback: str) -> str:
    """The LangGraph ``thread_id`` of the call, else ``fallback``."""
    runtime = getattr(request, "runtime", None)
    config = getattr(runtime, "config", None) or {}
    thread = (config.get("configurable") or {}).get("thread_id")
    return str(thread) if thread is not None else fallback


def result_message(result: ToolResult, tool_call_id: str) -> ToolMessage | None:
    """The ToolMessage answering ``tool_call_id`` in a tool's result (a message or a Command)."""
    if isinstance(result, ToolMessage):
        return result
    update = result.update
    messages = update.get("messages") if isinstance(update, Mapping) else None
    for m in messages or ():
        if isinstance(m, ToolMessage) and m.tool_call_id == tool_call_id:
            return m
    return None


class TrajectoryRecorder(AgentMiddleware[Any, Any, Any]):
    """Writes each executed tool call and its real observation to ``path`` (JSONL).

    ``domains`` maps tool names to domains as in
    :class:`~aw_lookahead.langgraph.DomainMap`. ``fsync=True`` forces each
    line to disk. The file is opened on construction and appended to.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        domains: Mapping[str, str] | DomainMap | None = None,
        fsync: bool = False,
    ) -> None:
        super().__init__()
        self.domain_map = DomainMap.of(domains)
        self.writer = JsonlWriter(path, fsync=fsync)
        self.path = self.writer.path
        self._fallback_id = uuid.uuid4().hex
        self._steps: dict[str, int] = {}
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return "TrajectoryRecorder"

    def record(self, request: ToolCallRequest, result: ToolResult) -> None:
        """Append one line for ``request`` answered by ``result`` (no-op without a ToolMessage)."""
        call = dict(request.tool_call)
        answer = result_message(result, str(call.get("id")))
        if answer is None:
            return
        rid = run_id(request, self._fallback_id)
        messages = request_messages(request)
        domain = self.domain_map.domain_of(str(call.get("name")))
        base = messages_to_trajectory(messages, domain=domain, domain_map=self.domain_map)
        with self._lock:
            step = self._steps.get(rid, len(base.turns))
            self._steps[rid] = step + 1
            turn = Turn(
                action=self.domain_map.action(call, domain),
                observation=message_text(answer),
                metadata={
                    "tool_call_id": answer.tool_call_id,
                    "name": call.get("name"),
                    "status": answer.status,
                    "step": step,
                },
            )
            self.writer.write(
                Trajectory(
                    domain=domain,
                    task=base.task,
                    turns=[turn],
                    id=rid,
                    metadata={"recorder": "aw-lookahead", "step": step},
                )
            )

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolResult]
    ) -> ToolResult:
        """Run the tool, then record its real answer."""
        result = handler(request)
        self.record(request, result)
        return result

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolResult]],
    ) -> ToolResult:
        """Async :meth:`wrap_tool_call`."""
        result = await handler(request)
        self.record(request, result)
        return result

    def close(self) -> None:
        """Close the file (further records raise)."""
        self.writer.close()


def read_recording(path: str | Path) -> list[Trajectory]:
    """Merge a recorder's lines into one trajectory per run, turns ordered by step.

    A run whose turns span several domains keeps each action as written and
    gets the ``mcp`` domain. Every line is validated against the
    trajectory schema (a bad line raises
    :class:`~aw_lookahead.errors.TrajectoryError` naming it).
    """
    runs: dict[str, list[Trajectory]] = {}
    for line in read_trajectories(path):
        runs.setdefault(line.id or "", []).append(line)
    out: list[Trajectory] = []
    for rid, lines in runs.items():
        lines.sort(key=lambda t: int(t.metadata.get("step", 0)))
        first = lines[0]
        out.append(
            Trajectory(
                domain=first.domain if len({t.domain for t in lines}) == 1 else Domain.MCP,
                task=first.task,
                turns=[turn for t in lines for turn in t.turns],
                id=rid or None,
                metadata={"recorder": "aw-lookahead"},
            )
        )
    return out
