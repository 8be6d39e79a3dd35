"""``LookaheadNode`` and ``lookahead_condition`` for hand-built ``StateGraph``s.

Adoption (the model node is ``"agent"``, the ``ToolNode`` is ``"tools"``)::

    graph.add_node("lookahead", LookaheadNode(world_model, tools=tools))
    graph.add_conditional_edges("agent", lookahead_condition)

The node simulates every pending tool call of the last ``AIMessage`` and
returns a ``Command``: the vetoes as error ``ToolMessage``\\ s plus
``goto=[Send("tools", [call]) ...]`` for the approved calls only, or
``goto="agent"`` when every call was vetoed. Handing ``ToolNode`` the list of
approved calls (never the whole state) matters: given the state, ``ToolNode``
runs *every* call of the last AIMessage, vetoed or not.

Decisions are written to the ``custom`` stream as they are made and world-model
calls appear as child runs in LangChain callbacks (see :mod:`._observe`).
``on_veto="interrupt"`` asks a person about the turn's vetoed calls with one
``interrupt()`` before answering them, in ``HumanInTheLoopMiddleware``'s
format (see :mod:`._review`): ``approve`` sends exactly that call to the tools
node once, ``edit`` sends the edited call instead, ``reject`` answers it with
the veto, ``respond`` with the person's message. The note on a call
that ran unchecked needs the tools node's cooperation: build it as
``ToolNode(tools, wrap_tool_call=node.wrap_tool_call,
awrap_tool_call=node.awrap_tool_call)``.

For the deprecated ``create_react_agent`` pass :meth:`LookaheadNode.hook`
as ``post_model_hook`` (with ``version="v2"``): there the agent's own router
sends only the unanswered calls to its tools node, so the hook returns the
vetoes as a plain state update.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, Unpack

from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import BaseTool
from langgraph.graph import END
from langgraph.types import Command, Send

from aw_lookahead.errors import UsageError
from aw_lookahead.lookahead import Decision, Lookahead, unchecked_note
from aw_lookahead.lookahead.options import EngineOptions
from aw_lookahead.worldmodel.base import WorldModel

from ._gate import (
    EngineOwner,
    Gatekeeper,
    OnVeto,
    as_lookahead,
    call_digest,
    check_on_veto,
    outcome_update,
    pending_calls,
    pending_turn,
    thread_of,
    undecided,
    with_note,
)
from ._observe import emit, gate_traced, gate_traced_sync
from ._review import answer_instead, ask_person
from .convert import DomainMap

__all__ = ["LookaheadNode", "lookahead_condition"]


def lookahead_condition(
    state: Mapping[str, Any] | Sequence[BaseMessage], *, messages_key: str = "messages"
) -> Literal["lookahead", "__end__"]:
    """Route after the model: ``"lookahead"`` when the last AIMessage calls tools, else END.

    The same test as LangGraph's ``tools_condition``, with the lookahead node
    as destination; use ``{"lookahead": "<your node name>", END: END}`` as the
    path map if the node has another name. The return type names both
    destinations, so ``compile()`` refuses a graph without a ``lookahead``
    node and without a path map (LangGraph would otherwise drop the route
    with a log line).
    """
    messages = state if isinstance(state, Sequence) else state.get(messages_key, [])
    _, calls = pending_calls(list(messages))
    return "lookahead" if calls else "__end__"  # END, spelled out for the Literal


def _graph_nodes(config: RunnableConfig | None) -> set[str]:
    """The node names of the running graph, read from LangGraph's task config; empty if hidden.

    LangGraph keeps one ``branch:to:<node>`` channel per node; its task
    config carries them in the reader it hands each node. That is not a
    public API, so any other shape reads as "unknown" (empty).
    """
    try:
        read = (config or {}).get("configurable", {})["__pregel_read"]
        channels = read.args[1]
        names = {k[len("branch:to:") :] for k in channels if str(k).startswith("branch:to:")}
    except (KeyError, TypeError, AttributeError, IndexError):
        return set()
    return names


class LookaheadNode(EngineOwner, RunnableLambda[Any, Any]):
    """A graph node (a Runnable with sync and async variants) gating the last turn's calls.

    ``model_node`` gets the turn back when every call was vetoed;
    ``tools_node`` receives each approved call as ``Send(tools_node, [call])``.
    ``state_key`` names a list field of your state (with an ``operator.add``
    reducer) that receives one JSON record per decision; without it the
    decisions of vetoed calls still ride in their ToolMessages' ``artifact``.
    Options are as for :class:`~aw_lookahead.langgraph.LookaheadMiddleware`
    (``on_veto="interrupt"`` needs a checkpointer).
    """

    _MEMO = 512

    def __init__(
        self,
        world_model: WorldModel | Lookahead,
        *,
        tools: Iterable[BaseTool | Mapping[str, Any]] | None = None,
        domains: Mapping[str, str] | DomainMap | None = None,
        model_node: str = "agent",
        tools_node: str = "tools",
        messages_key: str = "messages",
        state_key: str | None = None,
        on_veto: OnVeto = "block",
        note_unchecked: bool = True,
        **engine_options: Unpack[EngineOptions],
    ) -> None:
        check_on_veto(on_veto)
        self.on_veto = on_veto
        self.note_unchecked = note_unchecked
        # (thread, message id, call id, digest) -> decision: a node re-run on resume
        # (interrupt) reuses them; (thread, call id, digest) -> the latest decision: the
        # tool wrappers find the notes of unchecked calls. Never keyed by the id alone.
        self._decided: OrderedDict[tuple[str | None, ...], Decision] = OrderedDict()
        self._latest: OrderedDict[tuple[str | None, ...], Decision] = OrderedDict()
        dmap = DomainMap.of(domains)
        self.engine = as_lookahead(world_model, engine_options)
        self.gatekeeper = Gatekeeper(self.engine, domain_map=dmap, tools=tools)
        self.model_node = model_node
        self.tools_node = tools_node
        self.messages_key = messages_key
        self.state_key = state_key
        super().__init__(self._run_node, afunc=self._arun_node, name="lookahead")

    @staticmethod
    def _short_key(call: Mapping[str, Any]) -> tuple[str | None, ...]:
        return (thread_of(), str(call.get("id")), call_digest(call))

    @classmethod
    def _key(cls, ai: Any, call: Mapping[str, Any]) -> tuple[str | None, ...]:
        return (*cls._short_key(call), getattr(ai, "id", None))

    def _fresh(self, ai: Any, todo: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        """The calls of ``todo`` not decided yet (a re-run after ``interrupt`` reuses decisions)."""
        return [c for c in todo if self._key(ai, c) not in self._decided]

    def _merged(self, ai: Any, todo: Sequence[Mapping[str, Any]]) -> list[Decision]:
        return [self._decided[self._key(ai, c)] for c in todo]

    def _remember(
        self, ai: Any, calls: Sequence[Mapping[str, Any]], decisions: Sequence[Decision]
    ) -> None:
        for call, decision in zip(calls, decisions, strict=True):
            short = self._short_key(call)
            self._decided[(*short, getattr(ai, "id", None))] = decision
            self._latest[short] = decision
            self._latest.move_to_end(short)
        limit = max(self._MEMO, len(calls))  # never forget a call of the turn being decided
        for memo in (self._decided, self._latest):
            while len(memo) > limit:
                memo.popitem(last=False)

    def _command(
        self,
        ai: Any,
        calls: list[dict[str, Any]],
        decisions: list[Decision],
        prior: dict[str, Decision],
    ) -> Command[Any]:
        vetoes, records = outcome_update(ai, calls, decisions, prior)
        emit(records)
        edited: dict[str, dict[str, Any]] = {}
        if self.on_veto == "interrupt" and vetoes:
            by_id = {
                **prior,
                **{
                    str(c.get("id")): d
                    for c, d in zip(undecided(calls, prior), decisions, strict=True)
                },
            }
            asked = [next(c for c in calls if str(c.get("id")) == v.tool_call_id) for v in vetoes]
            pairs = [(c, by_id[str(c.get("id"))]) for c in asked]
            answers: list[ToolMessage] = []
            for (call, decision), review in zip(pairs, ask_person(pairs), strict=True):
                answer = answer_instead(review, call, decision)
                if answer is not None:
                    answers.append(answer)
                elif review.type == "edit":
                    edited[str(call.get("id"))] = review.args

            vetoes = answers

        def as_run(c: Mapping[str, Any]) -> dict[str, Any]:
            cid = str(c.get("id"))
            return {**c, "args": edited[cid]} if cid in edited else dict(c)

        vetoed = {m.tool_call_id for m in vetoes}
        keep = [as_run(c) for c in calls if str(c.get("id")) not in vetoed]
        revised: list[Any] = []
        if edited:  # the transcript shows the call that ran, as HumanInTheLoopMiddleware does
            tool_calls = [as_run(c) for c in ai.tool_calls]
            revised = [ai.model_copy(update={"tool_calls": tool_calls})]
        update: dict[str, Any] = {self.messages_key: [*revised, *vetoes]}
        if self.state_key is not None and records:
            update[self.state_key] = records
        goto: Any = [Send(self.tools_node, [c]) for c in keep] if keep else self.model_node
        return Command(update=update, goto=goto)

    def _decide_sync(self, state: Mapping[str, Any]) -> tuple[Any, ...] | None:
        prep = pending_turn(state, self.messages_key)
        if prep is None:
            return None
        ai, calls, prior, history = prep
        todo = undecided(calls, prior)
        new = self._fresh(ai, todo)
        decisions = (
            gate_traced_sync(lambda: self.gatekeeper.gate_sync(history, new), new) if new else []
        )
        self._remember(ai, new, decisions)
        return ai, calls, self._merged(ai, todo), prior

    async def _decide(self, state: Mapping[str, Any]) -> tuple[Any, ...] | None:
        prep = pending_turn(state, self.messages_key)
        if prep is None:
            return None
        ai, calls, prior, history = prep
        todo = undecided(calls, prior)
        new = self._fresh(ai, todo)
        decisions = (
            await gate_traced(lambda: self.gatekeeper.gate(history, new), new) if new else []
        )
        self._remember(ai, new, decisions)
        return ai, calls, self._merged(ai, todo), prior

    # ------------------------------------------------------------------ ToolNode wrappers

    def _note(self, request: Any) -> str | None:
        decision = self._latest.get(self._short_key(request.tool_call))
        if decision is None or not self.note_unchecked:
            return None
        return unchecked_note(decision)

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        """For ``ToolNode(wrap_tool_call=...)``: notes a call that ran without a check."""
        result = handler(request)
        note = self._note(request)
        return with_note(result, note) if note else result

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        """For ``ToolNode(awrap_tool_call=...)``: async :meth:`wrap_tool_call`."""
        result = await handler(request)
        note = self._note(request)
        return with_note(result, note) if note else result

    def _check_nodes(self, config: RunnableConfig | None) -> None:
        """Refuse to run in a graph that lacks ``tools_node`` or ``model_node``.

        LangGraph drops a ``Send`` to an unknown node with a log line only, so
        a misnamed node would lose every approved call. Where the running
        graph's node names cannot be read, nothing is checked.
        """
        nodes = _graph_nodes(config)
        missing = [n for n in (self.tools_node, self.model_node) if nodes and n not in nodes]
        if missing:
            raise UsageError(
                f"LookaheadNode(tools_node={self.tools_node!r}, model_node={self.model_node!r}): "
                f"this graph has no node {' or '.join(map(repr, missing))}; its nodes are "
                f"{', '.join(sorted(nodes))}. Pass the names your graph uses."
            )

    def _run_node(self, state: Mapping[str, Any], config: RunnableConfig) -> Command[Any]:
        self._check_nodes(config)
        decided = self._decide_sync(state)
        return Command(goto=END) if decided is None else self._command(*decided)

    async def _arun_node(self, state: Mapping[str, Any], config: RunnableConfig) -> Command[Any]:
        self._check_nodes(config)
        decided = await self._decide(state)
        return Command(goto=END) if decided is None else self._command(*decided)

    # ------------------------------------------------------------------ post_model_hook

    def _hook_update(self, decided: tuple[Any, ...] | None) -> dict[str, Any]:
        if decided is None:
            return {}
        vetoes, records = outcome_update(*decided)
        emit(records)
        update: dict[str, Any] = {self.messages_key: vetoes} if vetoes else {}
        if self.state_key is not None and records:
            update[self.state_key] = records
        return update

    @property
    def hook(self) -> RunnableLambda[Any, Any]:
        """A ``post_model_hook`` for ``create_react_agent``: returns the vetoes as an update."""

        def sync(state: Mapping[str, Any]) -> dict[str, Any]:
            return self._hook_update(self._decide_sync(state))

        async def asynchronous(state: Mapping[str, Any]) -> dict[str, Any]:
            return self._hook_update(await self._decide(state))

        return RunnableLambda(sync, afunc=asynchronous, name="lookahead_hook")
