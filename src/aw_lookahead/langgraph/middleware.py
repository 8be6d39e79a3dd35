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

Guarantees: a vetoed call never reaches a tool; every decision lands in
``state["lookahead"]`` (one JSON record per call, with the prediction and the
evidence); world-model calls go through our own client, never through
LangChain, so they never show in the agent's token stream. Every hook has a
sync and an async variant, so ``invoke`` and ``ainvoke`` both work (drive
one world model from one of them: its client binds to an event loop). A world
model that fails follows the engine's ``on_error`` policy and never hangs
the agent past the engine's ``deadline_s``.
"""

from __future__ import annotations

import operator
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Annotated, Any, Literal, NotRequired

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
)
from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime

from aw_lookahead.errors import ConfigError
from aw_lookahead.lookahead import Decision, Lookahead
from aw_lookahead.worldmodel.base import WorldModel

from ._gate import (
    STATE_KEY,
    EngineOwner,
    Gatekeeper,
    as_lookahead,
    outcome_update,
    pending_calls,
    prior_decisions,
)
from ._select import Candidates
from .convert import DomainMap

__all__ = ["LookaheadMiddleware", "LookaheadState"]


class LookaheadState(AgentState[Any]):
    """Agent state with the lookahead records (appended each turn, kept by the checkpointer)."""

    lookahead: NotRequired[Annotated[list[dict[str, Any]], operator.add]]


def _domain_map(domains: Mapping[str, str] | DomainMap | None) -> DomainMap:
    if isinstance(domains, DomainMap):
        return domains
    return DomainMap(domains=dict(domains or {}))


class LookaheadMiddleware(EngineOwner, AgentMiddleware[LookaheadState, Any, Any]):
    """Simulate tool calls before they run; veto (gate) or choose among samples (select).

    ``world_model`` is any :class:`~aw_lookahead.worldmodel.WorldModel` (the
    engine is built from it and ``engine_options``: ``judges``, ``router``,
    ``simulate``, ``on_error``, ``deadline_s``, ``cache``) or a ready
    :class:`~aw_lookahead.lookahead.Lookahead`. ``domains`` maps tool names
    to domains (see :class:`~aw_lookahead.langgraph.DomainMap`). ``tools``
    gives MCP tool definitions to the world model; when omitted, the tools of
    the agent's first model request are used. ``k`` and ``temperature`` are
    the select mode's sample count and sampling temperature. ``close()`` /
    ``aclose()`` close the world model's client when the agent is done.
    """

    state_schema = LookaheadState

    def __init__(
        self,
        world_model: WorldModel | Lookahead,
        *,
        mode: Literal["gate", "select"] = "gate",
        k: int = 3,
        temperature: float = 0.9,
        domains: Mapping[str, str] | DomainMap | None = None,
        tools: Iterable[BaseTool | Mapping[str, Any]] | None = None,
        **engine_options: Any,
    ) -> None:
        super().__init__()
        if mode not in ("gate", "select"):
            raise ConfigError(f"mode must be 'gate' or 'select', got {mode!r}")
        if k < 1:
            raise ConfigError(f"k must be >= 1, got {k}")
        self.mode = mode
        self.k = k
        self.temperature = temperature
        self.engine = as_lookahead(world_model, engine_options)
        self._tools_given = tools is not None
        self.gatekeeper = Gatekeeper(self.engine, domain_map=_domain_map(domains), tools=tools)
        self.tools = []

    # ------------------------------------------------------------------ gate

    def _split(
        self, state: LookaheadState
    ) -> tuple[AIMessage, list[dict[str, Any]], dict[str, Decision], list[Any]] | None:
        messages = list(state["messages"])
        ai, calls = pending_calls(messages)
        if ai is None or not calls:
            return None
        history = messages[: next(i for i, m in enumerate(messages) if m is ai)]
        return ai, calls, prior_decisions(state, ai), history

    @staticmethod
    def _update(
        ai: AIMessage,
        calls: list[dict[str, Any]],
        decisions: list[Decision],
        prior: dict[str, Decision],
    ) -> dict[str, Any] | None:
        vetoes, records = outcome_update(ai, calls, decisions, prior)
        update: dict[str, Any] = {}
        if vetoes:
            update["messages"] = vetoes
        if records:
            update[STATE_KEY] = records
        return update or None

    def after_model(self, state: LookaheadState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Gate the turn's tool calls (blocking variant, for ``invoke``)."""
        split = self._split(state)
        if split is None:
            return None
        ai, calls, prior, history = split
        todo = [c for c in calls if str(c.get("id")) not in prior]
        decisions = self.gatekeeper.gate(history, todo) if todo else []
        return self._update(ai, calls, decisions, prior)

    async def aafter_model(
        self, state: LookaheadState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Gate the turn's tool calls (async variant, for ``ainvoke``/``astream``)."""
        split = self._split(state)
        if split is None:
            return None
        ai, calls, prior, history = split
        todo = [c for c in calls if str(c.get("id")) not in prior]
        decisions = await self.gatekeeper.agate(history, todo) if todo else []
        return self._update(ai, calls, decisions, prior)

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
        responses = [handler(sampled) for _ in range(self.k)]
        return self._candidates(request).choose_sync(responses)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """Async :meth:`wrap_model_call`; the ``k`` samples are requested one after another
        so a scripted or rate-limited policy sees a deterministic order."""
        self._adopt_tools(request)
        if self.mode != "select":
            return await handler(request)
        sampled = self._sampled(request)
        responses = [await handler(sampled) for _ in range(self.k)]
        return await self._candidates(request).choose(responses)
