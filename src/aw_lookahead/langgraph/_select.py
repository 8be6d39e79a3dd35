"""Best-of-K selection among sampled model responses (the middleware's select mode).

Each candidate response is represented by its first tool call (a response's
later calls pass the gate afterwards). The engine simulates the candidates
together and ranks them; the chosen response is returned with the
alternatives and the decision recorded in state. Candidates without tool
calls (final answers) are not simulated; they are chosen only when no
candidate calls a tool.

When the engine prunes every candidate, the best-ranked one is returned
anyway with its veto recorded, so the gate answers its call with the veto
message and the model revises, exactly as in gate mode.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Sequence
from typing import Any

from langchain.agents.middleware import ExtendedModelResponse, ModelResponse
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.types import Command

from aw_lookahead._sync import run_sync
from aw_lookahead.lookahead import Decision, SelectResult

from ._gate import STATE_KEY, Gatekeeper, record
from ._observe import emit, gate_traced, gate_traced_sync
from .convert import message_text

__all__ = ["Candidates"]


def _ai(response: ModelResponse[Any]) -> AIMessage | None:
    return next((m for m in reversed(response.result) if isinstance(m, AIMessage)), None)


def _summary(index: int, ai: AIMessage | None, decision: Decision | None) -> dict[str, Any]:
    return {
        "index": index,
        "content": message_text(ai) if ai is not None else "",
        "tool_calls": [
            {"name": c["name"], "args": c["args"], "id": c.get("id")}
            for c in (ai.tool_calls if ai is not None else [])
        ],
        "decision": decision.model_dump(mode="json") if decision is not None else None,
    }


class Candidates:
    """The K sampled responses of one model turn and the choice among them."""

    def __init__(
        self, gatekeeper: Gatekeeper, history: Sequence[BaseMessage], system_prompt: str | None
    ) -> None:
        self.gatekeeper = gatekeeper
        self.history = list(history)
        self.system_prompt = system_prompt

    def _firsts(
        self, responses: Sequence[ModelResponse[Any]]
    ) -> tuple[list[int], list[dict[str, Any]]]:
        ais = [_ai(r) for r in responses]
        callers = [i for i, ai in enumerate(ais) if ai is not None and ai.tool_calls]
        return callers, [dict(ais[i].tool_calls[0]) for i in callers]  # type: ignore[union-attr]

    async def _select(self, firsts: Sequence[dict[str, Any]]) -> SelectResult:
        dmap = self.gatekeeper.domain_map
        domain = Counter(dmap.domain_of(str(c["name"])) for c in firsts).most_common(1)[0][0]
        traj = self.gatekeeper.trajectory(self.history, domain, self.system_prompt)
        actions = [dmap.action(c, domain) for c in firsts]
        return await self.gatekeeper.engine.select(traj, actions)

    @staticmethod
    def _in_order(result: SelectResult) -> list[Decision]:
        return sorted(result.decisions, key=lambda d: d.index)

    def _finish(
        self, responses: Sequence[ModelResponse[Any]], selected: Any
    ) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
        if selected is None:
            return responses[0]
        callers, firsts, result = selected
        assert isinstance(result, SelectResult)
        by_index = {d.index: d for d in result.decisions}
        pick = result.chosen or (result.decisions[0] if result.decisions else None)
        if pick is None:
            return responses[0]
        chosen_pos = pick.index
        chosen = responses[callers[chosen_pos]]
        ai = _ai(chosen)
        assert ai is not None
        if not ai.id:
            ai = ai.model_copy(update={"id": f"aw-lookahead-{uuid.uuid4().hex}"})
        result_msgs = [
            ai if isinstance(m, AIMessage) and m is _ai(chosen) else m for m in chosen.result
        ]
        alternatives = [
            _summary(callers[pos], _ai(responses[callers[pos]]), by_index.get(pos))
            for pos in range(len(callers))
            if pos != chosen_pos
        ]
        rec = record(
            firsts[chosen_pos],
            pick,
            "select",
            message_id=ai.id,
            candidates=len(responses),
            chosen_index=callers[chosen_pos],
            all_pruned=result.chosen is None,
            reason=result.reason,
            alternatives=alternatives,
        )
        emit([rec])
        return ExtendedModelResponse(
            model_response=ModelResponse(
                result=result_msgs, structured_response=chosen.structured_response
            ),
            command=Command(update={STATE_KEY: [rec]}),
        )

    async def choose(
        self, responses: Sequence[ModelResponse[Any]]
    ) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
        """Pick the best response (async); each simulation is a callback child run."""
        callers, firsts = self._firsts(responses)
        if not callers:
            return responses[0]
        box: list[SelectResult] = []

        async def run() -> list[Decision]:
            box.append(await self._select(firsts))
            return self._in_order(box[0])

        await gate_traced(run, firsts)
        return self._finish(responses, (callers, firsts, box[0]))

    def choose_sync(
        self, responses: Sequence[ModelResponse[Any]]
    ) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
        """Pick the best response (blocking)."""
        callers, firsts = self._firsts(responses)
        if not callers:
            return responses[0]
        box: list[SelectResult] = []

        def run() -> list[Decision]:
            box.append(run_sync(self._select(firsts)))
            return self._in_order(box[0])

        gate_traced_sync(run, firsts)
        return self._finish(responses, (callers, firsts, box[0]))
