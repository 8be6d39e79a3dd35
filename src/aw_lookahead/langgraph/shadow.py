"""Shadow mode: execute for real AND simulate; log (predicted, real) with a divergence score.

A live fidelity metric for a team deciding whether to trust a world model,
and training data (each pair holds a :class:`~aw_lookahead.trajectory.TurnSample`
whose target is the real observation). Use ``ShadowMiddleware`` in
``create_agent`` or hand its methods to a ``ToolNode``.

Guarantees: the tool runs exactly as it would without shadow mode and its
result is returned unchanged; the simulation runs concurrently with the tool
(on the running loop under ``ainvoke``, on the package's background loop
under ``invoke``) and its failure, or its running past ``deadline_s``,
only marks the pair (``error``), never the tool call. The gate decision the
engine *would* have made is logged too (``would_execute``), so the log also
counts the real successes a gate would have blocked.

:func:`divergence` is ``1 - F1`` of the token multisets of the two texts
after normalisation (per line: trailing whitespace stripped, runs of
whitespace collapsed; blank lines dropped). 0.0 means the same tokens,
1.0 no token in common; two empty texts diverge by 0.0.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import re
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ToolCallRequest
from pydantic import BaseModel, ConfigDict

from aw_lookahead._sync import _background_loop
from aw_lookahead.lookahead import Decision, Lookahead
from aw_lookahead.trajectory import Action, JsonlWriter, TurnSample, iter_jsonl_dicts
from aw_lookahead.worldmodel.base import WorldModel

from ._gate import EngineOwner, as_lookahead
from .convert import DomainMap, message_text, messages_to_trajectory
from .recorder import ToolResult, request_messages, result_message, run_id

__all__ = ["ShadowMiddleware", "ShadowPair", "divergence", "read_shadow_pairs"]

_WS = re.compile(r"\s+")


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    for raw in text.splitlines():
        line = _WS.sub(" ", raw.rstrip())
        if line.strip():
            out.extend(line.split())
    return out


def divergence(predicted: str, real: str) -> float:
    """``1 - F1`` between the token multisets of ``predicted`` and ``real`` (0 = same)."""
    p, r = Counter(_tokens(predicted)), Counter(_tokens(real))
    if not p and not r:
        return 0.0
    common = sum((p & r).values())
    if common == 0:
        return 1.0
    precision = common / sum(p.values())
    recall = common / sum(r.values())
    return round(1.0 - 2 * precision * recall / (precision + recall), 6)


class ShadowPair(BaseModel):
    """One shadowed call: what the world model predicted next to what really happened."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    tool_call_id: str
    tool: str
    action: Action
    predicted: str | None
    real: str
    real_status: str
    divergence: float | None
    would_execute: bool | None
    decision: dict[str, Any] | None
    error: str | None = None
    latency_s: float = 0.0
    sample: TurnSample


def read_shadow_pairs(path: str | Path) -> Iterator[ShadowPair]:
    """Stream the pairs a :class:`ShadowMiddleware` wrote (each validated)."""
    for _, obj in iter_jsonl_dicts(path):
        yield ShadowPair.model_validate(obj)


class ShadowMiddleware(EngineOwner, AgentMiddleware[Any, Any, Any]):
    """Run every tool call for real and simulate it too; log the pair, change nothing.

    ``world_model`` (or a ready ``Lookahead``) and ``engine_options`` as for
    :class:`~aw_lookahead.langgraph.LookaheadMiddleware`. Pairs go to
    ``path`` (JSONL, crash-safe) and/or ``on_pair``; ``pairs`` keeps the last
    ``keep`` of them in memory. ``deadline_s`` bounds how long a finished tool
    call waits for its simulation.
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
        **engine_options: Any,
    ) -> None:
        super().__init__()
        self.engine = as_lookahead(world_model, engine_options)
        self.domain_map = (
            domains if isinstance(domains, DomainMap) else DomainMap(domains=dict(domains or {}))
        )
        self.writer = JsonlWriter(path) if path is not None else None
        self.on_pair = on_pair
        self.deadline_s = deadline_s
        self.keep = keep
        self.pairs: list[ShadowPair] = []
        self._fallback_id = uuid.uuid4().hex

    @property
    def name(self) -> str:
        return "ShadowMiddleware"

    def _prepare(self, request: ToolCallRequest) -> tuple[Any, Action, dict[str, Any]]:
        call = dict(request.tool_call)
        domain = self.domain_map.domain_of(str(call.get("name")))
        traj = messages_to_trajectory(
            request_messages(request), domain=domain, domain_map=self.domain_map
        )
        return traj, self.domain_map.action(call, domain), call

    async def _simulate(self, traj: Any, action: Action) -> Decision:
        [decision] = await asyncio.wait_for(self.engine.gate(traj, [action]), self.deadline_s)
        return decision

    def _log(
        self,
        request: ToolCallRequest,
        *,
        prepared: tuple[Any, Action, dict[str, Any]],
        result: ToolResult,
        decision: Decision | None,
        error: str | None,
        started: float,
    ) -> None:
        traj, action, call = prepared
        answer = result_message(result, str(call.get("id")))
        if answer is None:
            return
        real = message_text(answer)
        predicted = decision.predicted_observation if decision is not None else None
        full = traj.with_turn(action, real)
        pair = ShadowPair(
            run_id=run_id(request, self._fallback_id),
            tool_call_id=str(call.get("id")),
            tool=str(call.get("name")),
            action=action,
            predicted=predicted,
            real=real,
            real_status=answer.status,
            divergence=divergence(predicted, real) if predicted is not None else None,
            would_execute=decision.executes if decision is not None else None,
            decision=decision.model_dump(mode="json") if decision is not None else None,
            error=error,
            latency_s=round(time.perf_counter() - started, 6),
            sample=TurnSample(trajectory=full, turn_idx=len(full.turns)),
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
        started = time.perf_counter()
        prepared = self._prepare(request)
        future = asyncio.run_coroutine_threadsafe(
            self._simulate(prepared[0], prepared[1]), _background_loop()
        )
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
        )
        return result

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolResult]],
    ) -> ToolResult:
        """Async :meth:`wrap_tool_call`: the tool and the simulation run concurrently."""
        started = time.perf_counter()
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
