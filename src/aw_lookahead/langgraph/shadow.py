"""Shadow mode for LangChain agents: execute for real AND simulate; log the pair.

A live fidelity metric for a team deciding whether to trust a world model,
and training data. Use ``ShadowMiddleware`` in ``create_agent`` or hand its
methods to a ``ToolNode``. The record (:class:`ShadowPair`), the divergence
measure (:func:`divergence`, ``1 - F1`` of token multisets) and the reader
live in :mod:`aw_lookahead.lookahead.shadow` and are shared with the MCP
proxy's shadow mode, so both logs have one format; they are re-exported here.

Guarantees: the tool runs exactly as it would without shadow mode and its
result is returned unchanged; the simulation runs concurrently with the tool
(on the running loop under ``ainvoke``, on the package's background loop
under ``invoke``) and its failure, or its running past ``deadline_s``,
only marks the pair (``predicted_error``), never the tool call. The gate
decision the engine *would* have made is logged too (``would_execute``), so
the log also counts the real successes a gate would have blocked.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Unpack

from langchain.agents.middleware import AgentMiddleware, ToolCallRequest

from aw_lookahead._sync import submit
from aw_lookahead.lookahead import Decision, Lookahead
from aw_lookahead.lookahead.options import EngineOptionsBase
from aw_lookahead.lookahead.shadow import ShadowPair, divergence, read_shadow_pairs, shadow_pair
from aw_lookahead.trajectory import Action, JsonlWriter, Trajectory
from aw_lookahead.worldmodel.base import WorldModel

from ._gate import EngineOwner, as_lookahead
from .convert import DomainMap, message_text, messages_to_trajectory
from .recorder import ToolResult, request_messages, result_message, run_id

__all__ = ["ShadowMiddleware", "ShadowPair", "divergence", "read_shadow_pairs"]

_Prepared = tuple[Trajectory, Action, dict[str, Any]]


class ShadowMiddleware(EngineOwner, AgentMiddleware[Any, Any, Any]):
    """Run every tool call for real and simulate it too; log the pair, change nothing.

    ``world_model`` (or a ready ``Lookahead``) and ``engine_options`` as for
    :class:`~aw_lookahead.langgraph.LookaheadMiddleware`, all but ``deadline_s``
    (:class:`~aw_lookahead.lookahead.options.EngineOptionsBase`): here ``deadline_s``
    bounds how long a finished tool call waits for its simulation. Pairs go to
    ``path`` (JSONL, crash-safe) and/or ``on_pair``; ``pairs`` keeps the last
    ``keep`` of them in memory.
    """

    def __init__(
        self,
        world_model: WorldModel | Lookahead,
        *,
        path: str | Path | None = None,
        on_pair: Callable[[ShadowPair], None] | None = None,
        domains: Mapping[str, str] | DomainMap | None = None,
        deadline_s: float = 60.0,
        keep: int = 1000,
        **engine_options: Unpack[EngineOptionsBase],
    ) -> None:
        super().__init__()
        self.engine = as_lookahead(world_model, engine_options)
        self.domain_map = DomainMap.of(domains)
        self.writer = JsonlWriter(path) if path is not None else None
        self.on_pair = on_pair
        self.deadline_s = deadline_s
        self.keep = keep
        self.pairs: list[ShadowPair] = []
        self._fallback_id = uuid.uuid4().hex

    @property
    def name(self) -> str:
        return "ShadowMiddleware"

    def _prepare(self, request: ToolCallRequest) -> _Prepared:
        call = dict(request.tool_call)
        domain = self.domain_map.domain_of(str(call.get("name")))
        traj = messages_to_trajectory(
            request_messages(request), domain=domain, domain_map=self.domain_map
        )
        return traj, self.domain_map.action(call, domain), call

    async def _simulate(self, traj: Trajectory, action: Action) -> Decision:
        [decision] = await asyncio.wait_for(self.engine.gate(traj, [action]), self.deadline_s)
        return decision

    def _log(
        self,
        request: ToolCallRequest,
        *,
        prepared: _Prepared,
        result: ToolResult,
        decision: Decision | None,
        error: str | None,
        started: float,
        started_at: float,
    ) -> None:
        traj, action, call = prepared
        answer = result_message(result, str(call.get("id")))
        if answer is None:
            return
        pair = shadow_pair(
            source="langgraph",
            run_id=run_id(request, self._fallback_id),
            tool_call_id=str(call.get("id")),
            tool=str(call.get("name")),
            history=traj,
            action=action,
            real=message_text(answer),
            real_is_error=answer.status == "error",
            decision=decision,
            model=self.engine.world_model.model_id,
            started_at=started_at,
            latency_s=time.perf_counter() - started,
            predicted_error=error,
        )
        self.pairs.append(pair)
        del self.pairs[: -self.keep]
        if self.writer is not None:
            self.writer.write(pair)
        if self.on_pair is not None:
            self.on_pair(pair)

    @staticmethod
    def _settle(
        future: concurrent.futures.Future[Decision], timeout: float
    ) -> tuple[Decision | None, str | None]:
        try:
            return future.result(timeout), None
        except Exception as exc:  # the shadow never affects the real call
            future.cancel()
            return None, f"{type(exc).__name__}: {exc}"

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolResult]
    ) -> ToolResult:
        """Start the simulation, run the tool, then log both; returns the tool's result."""
        started, started_at = time.perf_counter(), time.time()
        prepared = self._prepare(request)
        future = submit(self._simulate(prepared[0], prepared[1]))
        try:
            result = handler(request)
        except BaseException:
            future.cancel()
            raise
        decision, error = self._settle(future, self.deadline_s)
        self._log(
            request,
            prepared=prepared,
            result=result,
            decision=decision,
            error=error,
            started=started,
            started_at=started_at,
        )
        return result

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolResult]],
    ) -> ToolResult:
        """Async :meth:`wrap_tool_call`: the tool and the simulation run concurrently."""
        started, started_at = time.perf_counter(), time.time()
        prepared = self._prepare(request)
        sim = asyncio.ensure_future(self._simulate(prepared[0], prepared[1]))
        try:
            result = await handler(request)
        except BaseException:
            sim.cancel()
            raise
        decision: Decision | None = None
        error: str | None = None
        try:
            decision = await sim
        except Exception as exc:  # the shadow never affects the real call
            error = f"{type(exc).__name__}: {exc}"
        self._log(
            request,
            prepared=prepared,
            result=result,
            decision=decision,
            error=error,
            started=started,
            started_at=started_at,
        )
        return result

    def close(self) -> None:
        """Close the pair log and the world model's client."""
        if self.writer is not None:
            self.writer.close()
        super().close()

    async def aclose(self) -> None:
        """Async :meth:`close`."""
        if self.writer is not None:
            self.writer.close()
        await super().aclose()
