"""``aw-lookahead mcp``: an MCP server exposing the world model as two tools.

* ``simulate``: history + one action + domain -> the predicted observation,
  with the verdict read from it (outcome, matched signals, reason).
* ``lookahead``: history + K candidate actions -> every candidate simulated
  concurrently, infeasible ones pruned, survivors ranked, the chosen one.

Both return ``structured_content`` valid against their advertised output
schema. World-model failures come back as ``isError`` results whose text
says what to fix (start a server, raise the timeout); they never hang past
the engine's deadline.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from aw_lookahead._extras import require
from aw_lookahead.errors import AwLookaheadError
from aw_lookahead.trajectory import Action
from aw_lookahead.worldmodel.base import WorldModel

from ._models import (
    DomainName,
    HistoryTurn,
    LookaheadResult,
    SignalView,
    SimulateResult,
    build_trajectory,
    decision_view,
)
from ._progress_notify import reporter, with_progress

if TYPE_CHECKING:
    from mcp.server import MCPServer
    from mcp.server.mcpserver import Context

__all__ = ["MAX_CANDIDATES", "build_server"]

INSTRUCTIONS = (
    "aw-lookahead predicts what an environment will answer to an action before the action "
    "runs. Call `simulate` to preview one tool call, shell command or GUI action given the "
    "steps so far; call `lookahead` with several candidate next actions to learn which ones "
    "would fail and which one to take. Predictions come from a language world model: treat "
    "them as strong hints, not ground truth."
)

SIMULATE_DESCRIPTION = (
    "Predict the observation an action would produce, without running it.\n\n"
    "Give the steps taken so far (`history`: action + real observation per step), the "
    "`action` to preview and its `domain`. For MCP tool calls the action is "
    '{"name": "<tool>", "arguments": {...}} and `tools` should hold the tool definitions '
    "(name, description, inputSchema). Returns the predicted observation plus a verdict: "
    "`outcome` (success, failure, no_op, risky, unknown), `feasible`, the `signals` that "
    "matched in the predicted text and a `reason`. Nothing is executed."
)

LOOKAHEAD_DESCRIPTION = (
    "Simulate several candidate next actions at once and choose the best.\n\n"
    "Give the `history`, two or more `candidates` (same format as simulate's action) and "
    "optionally the `task` so candidates can be ranked by progress. Every candidate is "
    "simulated concurrently; predicted failures, no-ops and risky actions are pruned with "
    "their reason; survivors are ranked best first. Returns `chosen_index` (null when every "
    "candidate was pruned), `chosen`, all `decisions` ranked, and `pruned`. Nothing is executed."
)


MAX_CANDIDATES = 16
"""Default cap on ``lookahead`` candidates per call (one world-model request each)."""

_HISTORY = Field(
    description="Earlier steps, oldest first, each {action, observation}. Empty at the start."
)


def build_server(
    world_model: WorldModel,
    *,
    name: str = "aw-lookahead",
    on_error: str = "fail_closed",
    deadline_s: float | None = None,
    max_candidates: int = MAX_CANDIDATES,
    environment: str | os.PathLike[str] | None = None,
) -> MCPServer:
    """An ``MCPServer`` with the ``simulate`` and ``lookahead`` tools over ``world_model``.

    ``lookahead`` takes at most ``max_candidates`` candidates per call (each
    costs one world-model request); more are refused with an ``isError``
    result that names the limit.
    """
    require("mcp", "mcp")
    from mcp.server import MCPServer
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations

    from aw_lookahead._version import __version__
    from aw_lookahead.lookahead import Lookahead, RuleJudge
    from aw_lookahead.lookahead.types import veto_basis

    server = MCPServer(name, instructions=INSTRUCTIONS, version=__version__)
    engine_kwargs: dict[str, Any] = {"on_error": on_error, "deadline_s": deadline_s}
    simulator = Lookahead(
        world_model,
        simulate="always",
        judges=[RuleJudge()],
        environment=environment,
        **engine_kwargs,
    )
    annotations = ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )

    async def simulate(
        action: Annotated[Action, Field(description="The action to preview.")],
        domain: Annotated[
            DomainName, Field(description="Environment kind: mcp, terminal, search, ...")
        ] = "mcp",
        history: Annotated[list[HistoryTurn] | None, _HISTORY] = None,
        tools: Annotated[
            list[dict[str, Any]] | None,
            Field(description="MCP tool definitions (name, description, inputSchema) for mcp."),
        ] = None,
        task: Annotated[str | None, Field(description="The agent's task, if known.")] = None,
        ctx: Context | None = None,
    ) -> SimulateResult:
        try:
            trajectory = build_trajectory(domain, history, task=task, tools=tools)
            started = time.perf_counter()
            (decision,) = await with_progress(
                reporter(ctx), lambda: simulator.gate(trajectory, [action])
            )
            took = time.perf_counter() - started
        except AwLookaheadError as exc:
            raise ToolError(f"{type(exc).__name__}: {exc}") from exc
        basis = veto_basis(decision)
        if basis == "observed":  # looked at, not predicted: certain, no model call
            return SimulateResult(
                observation=f"(observed, not predicted) {decision.reason}",
                outcome=str(decision.outcome.value),
                feasible=False,
                reason=decision.reason,
                signals=[SignalView(**s.model_dump(mode="json")) for s in decision.signals],
                latency_s=round(took, 4),
                p_failure=decision.p_failure,
                basis=basis,
            )
        if decision.prediction is None:
            raise ToolError(decision.explain())
        pred = decision.prediction
        return SimulateResult(
            basis=basis,
            observation=pred.observation,
            outcome=str(decision.outcome.value),
            feasible=decision.executes,
            reason=decision.reason,
            signals=[SignalView(**s.model_dump(mode="json")) for s in decision.signals],
            model=pred.model,
            latency_s=round(took, 4),
            tokens=decision.tokens,
            cached=decision.cached,
            truncated=pred.truncated,
            trimmed_turns=pred.trimmed_turns,
            p_failure=decision.p_failure,
            threshold=decision.threshold,
            uncertain=decision.uncertain,
        )

    async def lookahead(
        candidates: Annotated[
            list[Action], Field(min_length=1, description="Candidate next actions to compare.")
        ],
        domain: Annotated[DomainName, Field(description="Environment kind.")] = "mcp",
        history: Annotated[list[HistoryTurn] | None, _HISTORY] = None,
        task: Annotated[str | None, Field(description="The goal, used to rank.")] = None,
        tools: Annotated[
            list[dict[str, Any]] | None, Field(description="MCP tool definitions for mcp.")
        ] = None,
        ctx: Context | None = None,
    ) -> LookaheadResult:
        if len(candidates) > max_candidates:
            raise ToolError(
                f"too many candidates: {len(candidates)}, this server takes at most "
                f"{max_candidates} per call (each is one world-model request); send the "
                "most promising ones, or start the server with a higher --max-candidates"
            )
        try:
            trajectory = build_trajectory(domain, history, task=task, tools=tools)
            result = await with_progress(
                reporter(ctx),
                lambda: simulator.select(trajectory, candidates, task=task),
                what=f"simulating {len(candidates)} candidates",
            )
        except AwLookaheadError as exc:
            raise ToolError(f"{type(exc).__name__}: {exc}") from exc
        chosen = decision_view(result.chosen) if result.chosen is not None else None
        return LookaheadResult(
            chosen_index=chosen.index if chosen is not None else None,
            chosen=chosen,
            decisions=[decision_view(d) for d in result.decisions],
            pruned=[decision_view(d) for d in result.pruned],
            reason=result.reason,
        )

    # MCPServer injects the request Context into the parameter annotated with it; the
    # annotation is set here because mcp is imported lazily (string annotations could
    # not resolve it). The parameter is left out of the tools' input schemas.
    for fn, description in ((simulate, SIMULATE_DESCRIPTION), (lookahead, LOOKAHEAD_DESCRIPTION)):
        fn.__annotations__["ctx"] = Context
        server.tool(name=fn.__name__, description=description, annotations=annotations)(fn)
    return server
