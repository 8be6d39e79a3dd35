"""A call checked again once the read-only calls before it in its turn have run.

The gate decides every call of a model turn together, before any runs, so a
``cat missing.txt`` written after ``ls`` in the same turn is judged without
the listing. Tool calls of one turn run concurrently; this module lets a later
call wait for the real results of the earlier read-only calls of its turn and
be checked again with them in its history. Guarantees: a call only waits on
calls before it that will run (no veto answers them) and that the engine's
router calls read-only, so nothing waits on a change it could be ordering
against, and waits form no cycle; a wait never outlasts the engine's deadline
(a call that is not back by then is left out of the history); the first
decision stands unless the second check vetoes, and both are recorded.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from aw_lookahead.lookahead import Decision
from aw_lookahead.trajectory import Domain, Trajectory

from ._gate import Gatekeeper, PendingTurn, call_digest

__all__ = ["Recheck", "TurnReads", "plan_recheck", "recheck_history"]

Key = tuple[str, str, str]


def key_of(ai: AIMessage, call: Mapping[str, Any]) -> Key | None:
    """Where a call's result is published: its message, id and digest (``None`` without ids)."""
    if not ai.id or not call.get("id"):
        return None
    return (str(ai.id), str(call["id"]), call_digest(call))


@dataclass(frozen=True)
class Recheck:
    """A call to check again: the history before its turn and the earlier reads to wait on."""

    ai: AIMessage
    history: list[BaseMessage]
    reads: list[dict[str, Any]]


def plan_recheck(
    gatekeeper: Gatekeeper,
    turn: PendingTurn | None,
    call: Mapping[str, Any],
    decision: Decision,
) -> Recheck | None:
    """The recheck of ``call`` when its turn (:func:`~._gate.pending_turn` of the tool
    node's state) runs read-only calls before it, else ``None``.

    Only a call that was simulated and allowed qualifies: a veto already holds,
    and a call the world model could not check gains nothing from a second try.
    """
    if turn is None or not decision.executes or decision.prediction is None:
        return None
    ai, pending, _, history = turn
    if key_of(ai, call) is None:
        return None
    ids = [str(c.get("id")) for c in pending]
    here = str(call.get("id"))
    if here not in ids or not (before := pending[: ids.index(here)]):
        return None
    trajectories: dict[Domain, Trajectory] = {}

    def reads_only(c: dict[str, Any]) -> bool:
        domain = gatekeeper.domain_map.domain_of(str(c.get("name")))
        if domain not in trajectories:
            trajectories[domain] = gatekeeper.trajectory(history, domain)
        action = gatekeeper.domain_map.action(c, domain)
        return gatekeeper.engine.router.route(trajectories[domain], action).read_only

    reads = [c for c in before if reads_only(c)]
    return Recheck(ai, list(history), reads) if reads else None


def recheck_history(plan: Recheck, results: Sequence[ToolMessage | None]) -> list[BaseMessage]:
    """The turn's history with the earlier reads that came back, as if they ran alone."""
    done = [(c, r) for c, r in zip(plan.reads, results, strict=True) if r is not None]
    if not done:
        return list(plan.history)
    ai = AIMessage(content=plan.ai.content, tool_calls=[c for c, _ in done], id=plan.ai.id)
    return [*plan.history, ai, *(r for _, r in done)]


class TurnReads:
    """The results of the calls that ran, for the later calls of their turn to wait on.

    Thread-safe and loop-agnostic (``concurrent.futures.Future``), so sync
    graphs (tool calls in threads) and async ones on any loop share it. Holds
    the results of the last ``capacity`` calls only.
    """

    def __init__(self, capacity: int = 512) -> None:
        self._lock = threading.Lock()
        self._futures: OrderedDict[Key, Future[ToolMessage | None]] = OrderedDict()
        self._capacity = capacity

    def _future(self, key: Key) -> Future[ToolMessage | None]:
        with self._lock:
            fut = self._futures.get(key)
            if fut is None:
                fut = self._futures[key] = Future()
                while len(self._futures) > self._capacity:
                    self._futures.popitem(last=False)
            return fut

    def publish(self, ai: AIMessage | None, call: Mapping[str, Any], result: Any) -> None:
        """Record what ``call`` returned (``None`` when it failed or returned no ToolMessage)."""
        key = key_of(ai, call) if ai is not None else None
        if key is None:
            return
        message = _tool_message(result, str(call.get("id")))
        fut = self._future(key)
        if not fut.done():
            fut.set_result(message)

    def _keys(self, plan: Recheck) -> list[Key]:
        return [k for c in plan.reads if (k := key_of(plan.ai, c)) is not None]

    def wait_sync(self, plan: Recheck, timeout_s: float) -> list[ToolMessage | None]:
        """The earlier reads' results; ``None`` for one not back within ``timeout_s`` in all."""
        futures = [self._future(k) for k in self._keys(plan)]
        deadline = time.monotonic() + timeout_s
        out: list[ToolMessage | None] = []
        for fut in futures:
            try:
                out.append(fut.result(timeout=max(0.0, deadline - time.monotonic())))
            except FutureTimeout:
                out.append(None)
        return out

    async def wait(self, plan: Recheck, timeout_s: float) -> list[ToolMessage | None]:
        """Async :meth:`wait_sync` (waits in a worker thread, so any event loop works)."""
        return await asyncio.to_thread(self.wait_sync, plan, timeout_s)


def _tool_message(result: Any, call_id: str) -> ToolMessage | None:
    from langgraph.types import Command

    if isinstance(result, ToolMessage):
        return result
    if isinstance(result, Command) and isinstance(result.update, Mapping):
        for m in result.update.get("messages") or ():
            if isinstance(m, ToolMessage) and m.tool_call_id == call_id:
                return m
    return None
