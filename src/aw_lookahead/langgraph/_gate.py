"""Glue shared by the middleware and the graph node: tool calls -> decisions -> messages.

Event loops: async hooks (``ainvoke``/``astream``) run the engine on the
caller's running loop; sync hooks (``invoke``) run it on the package's one
background loop, as the engine's own ``*_sync`` wrappers do. The world
model's HTTP client is opened per call on the running loop (see
:class:`~aw_lookahead.endpoint.OpenAIProvider`), so one agent can
be driven by successive ``asyncio.run`` calls, ``invoke`` then ``ainvoke``,
or several threads.

Confirm-and-run (``on_veto="interrupt"``): a vetoed call is not answered
with a veto; its record is marked ``awaiting_approval`` and LangGraph's
``interrupt()`` carries a review request to a person (:mod:`._review`, in
``HumanInTheLoopMiddleware``'s format).
"""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool

from aw_lookahead._sync import run_sync
from aw_lookahead.errors import ConfigError
from aw_lookahead.lookahead import Decision, Lookahead
from aw_lookahead.lookahead.options import EngineOptionsBase
from aw_lookahead.lookahead.types import veto_basis
from aw_lookahead.trajectory import Domain, Trajectory, canonical_arguments
from aw_lookahead.worldmodel.base import WorldModel

from .convert import VETO_ID_PREFIX, DomainMap, messages_to_trajectory, tool_definitions

if TYPE_CHECKING:
    from langgraph.types import Command

__all__ = [
    "STATE_KEY",
    "EngineOwner",
    "GateMode",
    "Gatekeeper",
    "OnVeto",
    "PendingTurn",
    "asked_by_lookahead",
    "call_digest",
    "check_on_veto",
    "pending_calls",
    "pending_turn",
    "record_for",
    "thread_of",
    "undecided",
    "updated",
    "veto_message",
    "with_note",
]

STATE_KEY = "lookahead"
"""The state key (a list, appended to) holding one record per decided tool call."""


def pending_calls(messages: Sequence[BaseMessage]) -> tuple[AIMessage | None, list[dict[str, Any]]]:
    """The last AIMessage and its tool calls that no ToolMessage answers yet."""
    answered: set[str] = set()
    for m in reversed(messages):
        if isinstance(m, ToolMessage):
            answered.add(m.tool_call_id)
        elif isinstance(m, AIMessage):
            calls = [dict(c) for c in m.tool_calls if str(c.get("id")) not in answered]
            for c in calls:
                c.setdefault("type", "tool_call")
            return m, calls
    return None, []


def call_digest(call: Mapping[str, Any]) -> str:
    """What makes a call this call besides its id: tool name and canonical arguments.

    Providers number calls per turn (``call_0``), so an id alone repeats within a
    conversation and across them; a remembered decision is reused only for the same
    id *and* digest (and, in state, the same AIMessage).
    """
    text = f"{call.get('name')}\x00{canonical_arguments(call.get('args', {}))}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def thread_of() -> str | None:
    """The LangGraph thread being run (``configurable.thread_id``), or ``None`` outside one."""
    from langgraph.config import get_config

    try:
        config = get_config()
    except RuntimeError:
        return None
    thread = (config.get("configurable") or {}).get("thread_id")
    return None if thread is None else str(thread)


GateMode = Literal["gate", "select"]
"""How the middleware uses the engine: check each call, or choose among sampled calls."""

OnVeto = Literal["block", "interrupt"]
"""What the middleware and the node do with a vetoed call: answer it, or ask a person."""


def check_on_veto(on_veto: str) -> None:
    """The ``on_veto`` option of the middleware and the node: ``block`` or ``interrupt``."""
    if on_veto not in ("block", "interrupt"):
        raise ConfigError(f"on_veto must be 'block' or 'interrupt', got {on_veto!r}")


PendingTurn = tuple[AIMessage, list[dict[str, Any]], dict[str, Decision], list[BaseMessage]]
"""What :func:`pending_turn` gives: ``(ai, calls, prior, history)``."""


def pending_turn(state: Mapping[str, Any], messages_key: str = "messages") -> PendingTurn | None:
    """``(ai, calls, prior, history)`` of the turn to gate, or ``None`` when nothing is pending.

    ``calls`` are the last AIMessage's unanswered tool calls, ``prior`` the decisions
    state already holds for them, ``history`` the conversation before that message.
    """
    messages = list(state.get(messages_key, []))
    ai, calls = pending_calls(messages)
    if ai is None or not calls:
        return None
    history = messages[: next(i for i, m in enumerate(messages) if m is ai)]
    return ai, calls, prior_decisions(state, ai), history


def undecided(
    calls: Sequence[Mapping[str, Any]], prior: Mapping[str, Decision]
) -> list[Mapping[str, Any]]:
    """The calls ``prior`` holds no decision for, in order."""
    return [c for c in calls if str(c.get("id")) not in prior]


def veto_message(call: Mapping[str, Any], decision: Decision) -> ToolMessage:
    """The error ToolMessage that answers a vetoed call; its text is ``decision.explain()``.

    The explanation names the call as the model wrote it (``{"name",
    "arguments"}``), not in the world model's action form, so the model
    recognises its own call. The id carries
    :data:`~aw_lookahead.langgraph.convert.VETO_ID_PREFIX`, so later turns
    know the call never ran; the decision rides in ``artifact`` (kept in
    state, never sent to the model).
    """
    as_called = {"name": call.get("name"), "arguments": call.get("args", {})}
    return ToolMessage(
        content=decision.model_copy(update={"action": as_called}).explain(),
        tool_call_id=str(call["id"]),
        name=str(call.get("name", "")),
        status="error",
        id=f"{VETO_ID_PREFIX}{uuid.uuid4().hex}",
        artifact={"aw_lookahead": decision.model_dump(mode="json")},
    )


def record(
    call: Mapping[str, Any], decision: Decision, mode: GateMode, **extra: Any
) -> dict[str, Any]:
    """One JSON state record for a decided call."""
    return {
        "mode": mode,
        "tool_call_id": call.get("id"),
        "call_digest": call_digest(call),
        "tool": call.get("name"),
        "kind": decision.kind.value,
        "executes": decision.executes,
        "basis": veto_basis(decision),
        "decision": decision.model_dump(mode="json"),
        **extra,
    }


def as_lookahead(world_model: WorldModel | Lookahead, options: EngineOptionsBase) -> Lookahead:
    """``world_model`` itself when it is an engine, else a :class:`Lookahead` around it."""
    if isinstance(world_model, Lookahead):
        if options:
            raise ConfigError(
                f"engine options {sorted(options)} were given together with a ready Lookahead; "
                "pass them to Lookahead(...) instead, or pass the world model here"
            )
        return world_model
    return Lookahead(world_model, **options)


class Gatekeeper:
    """Decides the pending tool calls of one agent turn with the lookahead engine."""

    def __init__(
        self,
        engine: Lookahead,
        *,
        domain_map: DomainMap | None = None,
        tools: Iterable[BaseTool | Mapping[str, Any]] | None = None,
    ) -> None:
        self.engine = engine
        self.domain_map = domain_map or DomainMap()
        self.tools: list[BaseTool | Mapping[str, Any]] = list(tools or ())
        self._definitions = tool_definitions(self.tools) if self.tools else None

    def set_tools(self, tools: Iterable[BaseTool | Mapping[str, Any]]) -> None:
        """Use these tools' definitions (from ``create_agent`` or the request) for MCP prompts."""
        self.tools = list(tools)
        self._definitions = tool_definitions(self.tools) if self.tools else None

    def _groups(self, calls: Sequence[Mapping[str, Any]]) -> dict[Domain, list[int]]:
        groups: dict[Domain, list[int]] = {}
        for i, call in enumerate(calls):
            groups.setdefault(self.domain_map.domain_of(str(call.get("name"))), []).append(i)
        return groups

    async def gate(
        self,
        history: Sequence[BaseMessage],
        calls: Sequence[Mapping[str, Any]],
        *,
        system_prompt: str | None = None,
    ) -> list[Decision]:
        """Decisions for ``calls`` (same order); one engine batch per domain, concurrently.

        ``history`` is the conversation before the AIMessage that made the calls.
        """
        return await self._gate_here(history, calls, system_prompt)

    def gate_sync(
        self,
        history: Sequence[BaseMessage],
        calls: Sequence[Mapping[str, Any]],
        *,
        system_prompt: str | None = None,
    ) -> list[Decision]:
        """Blocking :meth:`gate`."""
        return run_sync(self._gate_here(history, calls, system_prompt))

    def trajectory(
        self, history: Sequence[BaseMessage], domain: Domain, system_prompt: str | None = None
    ) -> Trajectory:
        """The executed history as a trajectory of ``domain``, with the known tool definitions."""
        traj = messages_to_trajectory(
            history, domain=domain, domain_map=self.domain_map, system_prompt=system_prompt
        )
        if self._definitions is not None:
            traj = traj.model_copy(update={"tools": self._definitions})
        return traj

    async def _gate_here(
        self,
        history: Sequence[BaseMessage],
        calls: Sequence[Mapping[str, Any]],
        system_prompt: str | None,
    ) -> list[Decision]:
        groups = self._groups(calls)

        async def one(domain: Domain, idx: list[int]) -> tuple[list[int], list[Decision]]:
            traj = self.trajectory(history, domain, system_prompt)
            actions = [self.domain_map.action(calls[i], domain) for i in idx]
            return idx, await self.engine.gate(traj, actions)

        async def run_all() -> list[tuple[list[int], list[Decision]]]:
            return list(await asyncio.gather(*(one(d, idx) for d, idx in groups.items())))

        out: list[Decision | None] = [None] * len(calls)
        for idx, decisions in await run_all():
            for i, d in zip(idx, decisions, strict=True):
                out[i] = d.model_copy(update={"index": i})
        return [d for d in out if d is not None]


def prior_decisions(state: Mapping[str, Any], ai: AIMessage) -> dict[str, Decision]:
    """Decisions already recorded in state for ``ai``'s calls (select mode), by tool-call id.

    A record counts only for the same message, id and :func:`call_digest`.
    """
    digests = {str(c.get("id")): call_digest(c) for c in ai.tool_calls}
    out: dict[str, Decision] = {}
    for rec in state.get(STATE_KEY) or ():
        if not (isinstance(rec, Mapping) and ai.id and rec.get("message_id") == ai.id):
            continue
        call_id = str(rec.get("tool_call_id"))
        if call_id in digests and rec.get("call_digest") == digests[call_id]:
            out[call_id] = Decision.model_validate(rec["decision"])
    return out


def outcome_update(
    ai: AIMessage,
    calls: Sequence[Mapping[str, Any]],
    decisions: Sequence[Decision],
    prior: Mapping[str, Decision],
    *,
    confirm: bool = False,
) -> tuple[list[ToolMessage], list[dict[str, Any]]]:
    """Veto ToolMessages for every vetoed call and state records for the new decisions.

    ``decisions`` answer the calls not in ``prior`` (in order); ``prior``
    decisions were recorded when they were made, so only their vetoes are added.
    With ``confirm`` a vetoed call gets no veto message; its record is marked
    ``awaiting_approval`` instead (the tool wrapper asks a person).
    """
    fresh = iter(decisions)
    vetoes: list[ToolMessage] = []
    records: list[dict[str, Any]] = []
    for call in calls:
        decision = prior.get(str(call.get("id")))
        ask = confirm and decision is None
        if decision is None:
            decision = next(fresh)
            ask = ask and not decision.executes
            records.append(record(call, decision, "gate", message_id=ai.id, awaiting_approval=ask))
        if not decision.executes and not ask:
            vetoes.append(veto_message(call, decision))
    return vetoes, records


def record_for(state: Any, call: Mapping[str, Any]) -> dict[str, Any] | None:
    """The latest state record for this call (same id and :func:`call_digest`), or ``None``."""
    records = state.get(STATE_KEY) if isinstance(state, Mapping) else None
    call_id, digest = call.get("id"), call_digest(call)
    for rec in reversed(records or ()):
        if (
            isinstance(rec, Mapping)
            and rec.get("tool_call_id") == call_id
            and rec.get("call_digest") == digest
        ):
            return dict(rec)
    return None


def asked_by_lookahead(request: Any) -> bool:
    """True when ``LookaheadMiddleware(on_veto="interrupt")`` asks a person about this call.

    For ``HumanInTheLoopMiddleware``'s ``when=`` predicate, so a vetoed call is
    put to the person once (with the prediction), not twice::

        HumanInTheLoopMiddleware(
            interrupt_on={"shell": {"allowed_decisions": ["approve", "reject"],
                                    "when": lambda req: not asked_by_lookahead(req)}},
            interrupt_mode="per_call",
        )
    """
    rec = record_for(getattr(request, "state", None), request.tool_call)
    return bool(rec and rec.get("awaiting_approval"))


def with_note(result: Any, note: str) -> Any:
    """``result`` (a ToolMessage, or a Command carrying them) with ``note`` appended to its text."""
    from langgraph.types import Command

    if isinstance(result, ToolMessage):
        content = result.content
        if isinstance(content, str):
            return result.model_copy(
                update={"content": f"{content}\n\n{note}" if content else note}
            )
        if isinstance(content, list):
            block = {"type": "text", "text": note}
            return result.model_copy(update={"content": [*content, block]})
        return result
    if isinstance(result, Command) and isinstance(result.update, Mapping):
        msgs = result.update.get("messages")
        if isinstance(msgs, list):
            noted = [with_note(m, note) if isinstance(m, ToolMessage) else m for m in msgs]
            return updated(result, {"messages": noted})
    return result


def updated(command: Command[Any], changes: Mapping[str, Any]) -> Command[Any]:
    """``command`` (a ``Command`` whose ``update`` is a mapping) with ``changes`` laid over
    its update; its graph, resume and goto kept."""
    from langgraph.types import Command

    return Command(
        graph=command.graph,
        update={**(command.update or {}), **changes},
        resume=command.resume,
        goto=command.goto,
    )


class EngineOwner:
    """Mixin: close the world model's client (``aclose`` for async use, ``close`` for sync)."""

    engine: Lookahead

    async def aclose(self) -> None:
        """Close the world model's HTTP client (call when the agent is done)."""
        await self.engine.world_model.aclose()

    def close(self) -> None:
        """Blocking :meth:`aclose`."""
        run_sync(self.engine.world_model.aclose())
