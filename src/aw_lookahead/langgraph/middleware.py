"""``LookaheadMiddleware``: predictive lookahead for ``langchain.agents.create_agent``.

Two modes:

* ``mode="gate"`` (``after_model``): every tool call of a model turn is
  simulated at once; each vetoed call is answered with a
  ``ToolMessage(status="error")`` whose text (:meth:`Decision.explain`) says
  what was predicted, why it was blocked and that it did not run.
  ``create_agent`` then sends only the unanswered calls to its tools node
  (the mechanism of the built-in human-in-the-loop middleware); when every
  call was vetoed the model gets the turn back to revise.
* ``mode="select"`` (``wrap_model_call``): the policy model is sampled ``k``
  times, the candidates' tool calls are simulated, the best candidate is
  returned and the alternatives and decisions are recorded in state. The
  chosen response's other calls still pass the gate.

Guarantees: a vetoed call never reaches a tool unless a person approves it
(``on_veto="interrupt"``: LangGraph's ``interrupt()`` carries the decision;
``"approve"`` runs exactly that call once, ``"reject"`` returns the veto);
every decision lands in ``state["lookahead"]`` (one JSON record per call,
with the prediction and the evidence) and is written to the ``custom`` stream
as it is made; world-model calls appear in LangChain callbacks as child runs
(:mod:`._observe`), never in the agent's token stream. Every hook has a sync
and an async variant, and the world model's client is opened per call, so
``invoke``, ``ainvoke``, successive ``asyncio.run`` calls and threads all
work with one middleware. A call lookahead could not check follows the
engine's ``on_error`` (default ``fail_safe``: destructive ones are blocked,
the rest run); one that ran unchecked carries a short note in its
ToolMessage (``note_unchecked=False`` turns it off). Nothing waits past the
engine's ``deadline_s``.
"""

from __future__ import annotations

import operator
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Annotated, Any, NotRequired, Unpack

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
)
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime
from langgraph.types import Command

from aw_lookahead.errors import ConfigError
from aw_lookahead.lookahead import Decision, Lookahead, unchecked_note
from aw_lookahead.lookahead.options import EngineOptions
from aw_lookahead.worldmodel.base import WorldModel

from ._gate import (
    STATE_KEY,
    EngineOwner,
    Gatekeeper,
    GateMode,
    OnVeto,
    PendingTurn,
    as_lookahead,
    check_on_veto,
    outcome_update,
    pending_turn,
    record,
    record_for,
    undecided,
    updated,
    veto_message,
    with_note,
)
from ._observe import emit, gate_traced, gate_traced_sync
from ._review import answer_instead, ask_person
from ._select import Candidates
from ._turn_reads import Recheck, TurnReads, plan_recheck, recheck_history
from .convert import DomainMap

__all__ = ["LookaheadMiddleware", "LookaheadState"]


class LookaheadState(AgentState[Any]):
    """Agent state with the lookahead records (appended each turn, kept by the checkpointer)."""

    lookahead: NotRequired[Annotated[list[dict[str, Any]], operator.add]]


def _with_record(
    result: ToolMessage | Command[Any], rec: dict[str, Any] | None
) -> ToolMessage | Command[Any]:
    """``result`` carrying the recheck's state record (as a Command when it was a message)."""
    if rec is None:
        return result
    if isinstance(result, ToolMessage):
        return Command(update={"messages": [result], STATE_KEY: [rec]})
    if isinstance(result.update, Mapping):
        return updated(result, {STATE_KEY: [*result.update.get(STATE_KEY, ()), rec]})
    return result


def _pending(request: ToolCallRequest) -> PendingTurn | None:
    """The turn the tool node runs (``None`` outside a graph's state)."""
    state = request.state
    return pending_turn(state) if isinstance(state, Mapping) else None


def _calls_tools(response: ModelResponse[Any]) -> bool:
    return any(isinstance(m, AIMessage) and m.tool_calls for m in response.result)


class LookaheadMiddleware(EngineOwner, AgentMiddleware[LookaheadState, Any, Any]):
    """Simulate tool calls before they run; veto (gate) or choose among samples (select).

    ``world_model`` is any :class:`~aw_lookahead.worldmodel.WorldModel` (the
    engine is built from it and ``engine_options``: ``judges``, ``router``,
    ``simulate``, ``on_error``, ``deadline_s``, ``cache``) or a ready
    :class:`~aw_lookahead.lookahead.Lookahead`. ``domains`` maps tool names
    to domains (see :class:`~aw_lookahead.langgraph.DomainMap`). ``tools``
    gives MCP tool definitions to the world model; when omitted, the tools of
    the agent's first model request are used. ``k`` and ``temperature`` are
    the select mode's sample count and sampling temperature. ``on_veto``:
    ``"block"`` answers a vetoed call with the veto; ``"interrupt"`` pauses
    the graph with ``interrupt()`` so a person can approve (run it once) or
    reject (return the veto) - needs a checkpointer. ``note_unchecked`` adds
    a one-line note to the ToolMessage of a call that ran without a check.
    ``recheck_after_reads`` (gate mode, ``on_veto="block"``): a call allowed
    while the read-only calls before it in the same turn had not run yet waits
    for their real results (at most the engine's ``deadline_s``) and is checked
    once more with them, so ``cat missing.txt`` after ``ls`` is judged against
    the listing; one more world-model call per such call. ``close()`` /
    ``aclose()`` close a long-lived client if one was made.
    """

    state_schema = LookaheadState

    def __init__(
        self,
        world_model: WorldModel | Lookahead,
        *,
        mode: GateMode = "gate",
        k: int = 3,
        temperature: float = 0.9,
        domains: Mapping[str, str] | DomainMap | None = None,
        tools: Iterable[BaseTool | Mapping[str, Any]] | None = None,
        on_veto: OnVeto = "block",
        note_unchecked: bool = True,
        recheck_after_reads: bool = True,
        **engine_options: Unpack[EngineOptions],
    ) -> None:
        super().__init__()
        if mode not in ("gate", "select"):
            raise ConfigError(f"mode must be 'gate' or 'select', got {mode!r}")
        check_on_veto(on_veto)
        self.on_veto = on_veto
        self.note_unchecked = note_unchecked
        self.recheck_after_reads = recheck_after_reads
        self.turn_reads = TurnReads()
        if k < 1:
            raise ConfigError(f"k must be >= 1, got {k}")
        self.mode = mode
        self.k = k
        self.temperature = temperature
        self.engine = as_lookahead(world_model, engine_options)
        self._tools_given = tools is not None
        self.gatekeeper = Gatekeeper(self.engine, domain_map=DomainMap.of(domains), tools=tools)
        self.tools = []

    # ------------------------------------------------------------------ gate

    def _update(
        self,
        ai: AIMessage,
        calls: list[dict[str, Any]],
        decisions: list[Decision],
        prior: dict[str, Decision],
        runtime: Runtime[Any],
    ) -> dict[str, Any] | None:
        confirm = self.on_veto == "interrupt"
        vetoes, records = outcome_update(ai, calls, decisions, prior, confirm=confirm)
        emit(records, runtime.stream_writer)
        update: dict[str, Any] = {}
        if vetoes:
            update["messages"] = vetoes
        if records:
            update[STATE_KEY] = records
        return update or None

    def after_model(self, state: LookaheadState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Gate the turn's tool calls (blocking variant, for ``invoke``)."""
        split = pending_turn(state)
        if split is None:
            return None
        ai, calls, prior, history = split
        todo = undecided(calls, prior)
        decisions = (
            gate_traced_sync(lambda: self.gatekeeper.gate_sync(history, todo), todo) if todo else []
        )
        return self._update(ai, calls, decisions, prior, runtime)

    async def aafter_model(
        self, state: LookaheadState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Gate the turn's tool calls (async variant, for ``ainvoke``/``astream``)."""
        split = pending_turn(state)
        if split is None:
            return None
        ai, calls, prior, history = split
        todo = undecided(calls, prior)
        decisions = (
            await gate_traced(lambda: self.gatekeeper.gate(history, todo), todo) if todo else []
        )
        return self._update(ai, calls, decisions, prior, runtime)

    # ------------------------------------------------------------------ tool execution

    def _before_tool(
        self, request: ToolCallRequest
    ) -> tuple[ToolMessage | None, str | None, ToolCallRequest]:
        """``(answer, note, request)``: an answer replaces execution; a note goes on the
        result; the request is the one to run (a person may have edited its arguments)."""
        rec = record_for(request.state, request.tool_call)
        if rec is None:
            return None, None, request
        decision = Decision.model_validate(rec["decision"])
        if not rec.get("awaiting_approval"):
            note = unchecked_note(decision) if self.note_unchecked else None
            return None, note, request
        call = request.tool_call
        [review] = ask_person([(call, decision)])
        answer = answer_instead(review, call, decision)
        if answer is not None:
            return answer, None, request
        how = "approved"
        if review.type == "edit":
            request = request.override(tool_call={**call, "args": review.args})
            how = "edited and approved"
        return (
            None,
            (
                f"[lookahead] Note: a person {how} this call although lookahead had "
                f"blocked it ({decision.reason[:200]})."
            ),
            request,
        )

    def _recheck_plan(self, request: ToolCallRequest, turn: PendingTurn | None) -> Recheck | None:
        if not self.recheck_after_reads or self.on_veto != "block" or self.mode != "gate":
            return None
        rec = record_for(request.state, request.tool_call)
        if rec is None:
            return None
        decision = Decision.model_validate(rec["decision"])
        return plan_recheck(self.gatekeeper, turn, request.tool_call, decision)

    def _rechecked(
        self, request: ToolCallRequest, plan: Recheck, decision: Decision
    ) -> tuple[Command[Any] | None, dict[str, Any]]:
        """``(veto, record)``: the veto answers the call instead of running it."""
        call = dict(request.tool_call)
        rec = record(call, decision, "gate", message_id=plan.ai.id, recheck=True)
        emit([rec], getattr(request.runtime, "stream_writer", None))
        if decision.executes:
            return None, rec
        return Command(update={"messages": [veto_message(call, decision)], STATE_KEY: [rec]}), rec

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Run the call; ask a person first when it was vetoed under ``on_veto="interrupt"``;
        check it again first when read-only calls before it in its turn are running."""
        turn, ran = _pending(request), None
        try:
            answer, note, request = self._before_tool(request)
            if answer is not None:
                return answer
            rec: dict[str, Any] | None = None
            plan = self._recheck_plan(request, turn)
            if plan is not None:
                results = self.turn_reads.wait_sync(plan, self.engine.deadline_s)
                call = dict(request.tool_call)
                history = recheck_history(plan, results)
                [decision] = gate_traced_sync(
                    lambda: self.gatekeeper.gate_sync(history, [call]), [call]
                )
                veto, rec = self._rechecked(request, plan, decision)
                if veto is not None:
                    return veto
            ran = handler(request)
            return _with_record(with_note(ran, note) if note else ran, rec)
        finally:
            self.turn_reads.publish(turn[0] if turn else None, request.tool_call, ran)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Async :meth:`wrap_tool_call`."""
        turn, ran = _pending(request), None
        try:
            answer, note, request = self._before_tool(request)
            if answer is not None:
                return answer
            rec: dict[str, Any] | None = None
            plan = self._recheck_plan(request, turn)
            if plan is not None:
                results = await self.turn_reads.wait(plan, self.engine.deadline_s)
                call = dict(request.tool_call)
                history = recheck_history(plan, results)
                [decision] = await gate_traced(
                    lambda: self.gatekeeper.gate(history, [call]), [call]
                )
                veto, rec = self._rechecked(request, plan, decision)
                if veto is not None:
                    return veto
            ran = await handler(request)
            return _with_record(with_note(ran, note) if note else ran, rec)
        finally:
            self.turn_reads.publish(turn[0] if turn else None, request.tool_call, ran)

    # ------------------------------------------------------------------ select

    def _adopt_tools(self, request: ModelRequest[Any]) -> None:
        if not self._tools_given and not self.gatekeeper.tools and request.tools:
            self.gatekeeper.set_tools(request.tools)

    def _sampled(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        settings = {**request.model_settings, "temperature": self.temperature}
        return request.override(model_settings=settings)

    def _candidates(self, request: ModelRequest[Any]) -> Candidates:
        system = request.system_message.text if request.system_message is not None else None
        return Candidates(self.gatekeeper, list(request.messages), system)

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """Select mode: sample ``k`` responses and keep the best; gate mode: pass through."""
        self._adopt_tools(request)
        if self.mode != "select":
            return handler(request)
        sampled = self._sampled(request)
        responses = [handler(sampled)]
        if not _calls_tools(responses[0]):
            return responses[0]  # a turn without tool calls: nothing to choose between
        responses += [handler(sampled) for _ in range(self.k - 1)]
        return self._candidates(request).choose_sync(responses)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """Async :meth:`wrap_model_call`; the ``k`` samples are requested one after another
        so a scripted or rate-limited policy sees a deterministic order. A first sample
        without tool calls is returned at once (no K samples for a final answer)."""
        self._adopt_tools(request)
        if self.mode != "select":
            return await handler(request)
        sampled = self._sampled(request)
        responses = [await handler(sampled)]
        if not _calls_tools(responses[0]):
            return responses[0]
        responses += [await handler(sampled) for _ in range(self.k - 1)]
        return await self._candidates(request).choose(responses)
