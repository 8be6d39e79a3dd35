"""The four per-call behaviours of :class:`~aw_lookahead.mcp.proxy.LookaheadProxy`."""

from __future__ import annotations

import difflib
import time
from typing import TYPE_CHECKING, Any

import anyio

from aw_lookahead.lookahead.types import Decision, DecisionKind, Outcome
from aw_lookahead.trajectory import JsonlWriter, Turn

from .structured import fit_structured

if TYPE_CHECKING:
    from .proxy import LookaheadProxy, SessionState

META_KEY = "io.github.aw-lookahead/decision"


def result_text(result: Any) -> str:
    """The text of a ``CallToolResult`` as the world model should see it."""
    parts = [
        getattr(c, "text", None) or f"[{getattr(c, 'type', 'content')}]" for c in result.content
    ]
    text = "\n".join(parts)
    if not text and result.structured_content is not None:
        import json

        text = json.dumps(result.structured_content, ensure_ascii=False)
    return f"Error: {text}" if result.is_error and not text.lower().startswith("error") else text


def _summary(decision: Decision) -> dict[str, Any]:
    pred = decision.prediction
    return {
        "kind": decision.kind.value,
        "outcome": decision.outcome.value,
        "reason": decision.reason,
        "predicted_observation": decision.predicted_observation,
        "prompt_tokens": pred.usage.prompt_tokens if pred is not None else None,
        "trimmed_turns": pred.trimmed_turns if pred is not None else None,
        "cached": decision.cached,
    }


def divergence(predicted: str, real: str) -> float:
    """1 - similarity of the two texts (0 = identical, 1 = nothing in common)."""
    return round(1.0 - difflib.SequenceMatcher(None, predicted[:4000], real[:4000]).ratio(), 4)


class ModeHandlers:
    def __init__(self, proxy: LookaheadProxy) -> None:
        self.proxy = proxy
        cfg = proxy.config
        self._log = JsonlWriter(cfg.shadow_log) if cfg.shadow_log is not None else None

    def close(self) -> None:
        if self._log is not None:
            self._log.close()

    async def _decide(self, session: SessionState, action: dict[str, Any]) -> Decision:
        trajectory = await self.proxy.trajectory(session)
        (decision,) = await self.proxy.engine.gate(trajectory, [action])
        if decision.prediction is not None:
            self.proxy.stats["simulated"] += 1
        return decision

    # ------------------------------------------------------------------ gate

    async def gate(self, session: SessionState, tool: Any, arguments: dict[str, Any]) -> Any:
        from .proxy import error_result

        action = {"name": tool.name, "arguments": arguments}
        decision = await self._decide(session, action)
        if not decision.executes:
            self.proxy.stats["vetoed"] += 1
            return error_result(decision.explain(), {META_KEY: _summary(decision)})
        result = await self.proxy.forward(session, tool.name, arguments)
        meta = dict(result.meta or {})
        meta[META_KEY] = _summary(decision)
        return result.model_copy(update={"meta": meta})

    # ------------------------------------------------------------------ preview

    async def preview(
        self, ctx: Any, session: SessionState, tool: Any, arguments: dict[str, Any]
    ) -> Any:
        from mcp import types

        from .proxy import CONFIRM_ARG, error_result

        action = {"name": tool.name, "arguments": arguments}
        decision = await self._decide(session, action)
        predicted = decision.predicted_observation or f"(no prediction: {decision.error})"
        verdict = f"Verdict: {decision.outcome.value}" + (
            f" ({decision.reason})" if decision.reason else ""
        )
        message = f"Preview of {tool.name}({arguments}):\nPredicted result:\n{predicted}\n{verdict}"
        capability = types.ClientCapabilities(elicitation=types.ElicitationCapability())
        if self.proxy.config.elicit and ctx.session.check_client_capability(capability):
            schema = {
                "type": "object",
                "properties": {"confirm": {"type": "boolean", "description": "Execute it?"}},
                "required": ["confirm"],
            }
            answer = await ctx.session.elicit_form(message + "\nExecute this call?", schema)
            if answer.action == "accept" and (answer.content or {}).get("confirm") is True:
                return await self.proxy.forward(session, tool.name, arguments)
            return error_result(
                f"[aw-lookahead] Not executed: the user did not confirm.\n{message}",
                {META_KEY: _summary(decision)},
            )
        token = self.proxy.issue_token(session, tool.name, arguments)
        return error_result(
            f"[aw-lookahead] PREVIEW ONLY - nothing was executed.\n{message}\n"
            f"To execute it, call {tool.name!r} again with the same arguments plus "
            f'"{CONFIRM_ARG}": "{token}" (single use, valid '
            f"{self.proxy.config.confirm_ttl_s:g} s).",
            {META_KEY: {**_summary(decision), "confirm_token": token}},
        )

    # ------------------------------------------------------------------ dryrun

    async def dryrun(self, session: SessionState, tool: Any, arguments: dict[str, Any]) -> Any:
        from mcp.types import CallToolResult, TextContent

        from .proxy import error_result

        action = {"name": tool.name, "arguments": arguments}
        call_no = session.calls
        session.calls += 1
        decision = await self._decide(session, action)
        if decision.prediction is None:
            return error_result(
                f"[aw-lookahead dryrun] no simulated result: {decision.error or decision.reason}. "
                "Nothing was executed (dry run)."
            )
        text = decision.prediction.observation
        is_error = decision.outcome is Outcome.FAILURE
        perturb = self.proxy.config.perturb
        if perturb is not None:
            fault = perturb.plan(session.ordinal, call_no, tool.name)
            if fault.delay_s > 0:
                await anyio.sleep(fault.delay_s)
            text, injected = perturb.apply(fault, text, tool.name)
            is_error = is_error or injected
        session.turns.append(Turn(action=action, observation=text, metadata={"simulated": True}))
        meta = {META_KEY: {**_summary(decision), "dryrun": True}}
        if is_error:
            return error_result(text, meta)
        structured = None
        if tool.output_schema:
            structured = fit_structured(text, dict(tool.output_schema))
            if structured is None:
                return error_result(
                    f"[aw-lookahead dryrun] the simulated result does not fit {tool.name!r}'s "
                    f"output schema; predicted text:\n{text}",
                    meta,
                )
        return CallToolResult(
            content=[TextContent(text=text)], structured_content=structured, _meta=meta
        )

    # ------------------------------------------------------------------ shadow

    async def shadow(self, session: SessionState, tool: Any, arguments: dict[str, Any]) -> Any:
        action = {"name": tool.name, "arguments": arguments}
        trajectory = await self.proxy.trajectory(session)
        real_done = anyio.Event()
        box: dict[str, Any] = {}
        self.proxy.spawn(self._shadow_log, session.ordinal, trajectory, action, real_done, box)
        try:
            result = await self.proxy.forward(session, tool.name, arguments)
            box["real"] = result_text(result)
            box["real_is_error"] = bool(result.is_error)
            return result
        except Exception as exc:
            box["real"] = f"[downstream failure] {exc}"
            box["real_is_error"] = True
            raise
        finally:
            real_done.set()

    async def _shadow_log(
        self, ordinal: int, trajectory: Any, action: dict[str, Any], done: Any, box: dict[str, Any]
    ) -> None:
        started = time.time()
        decision = (await self.proxy.engine.gate(trajectory, [action]))[0]
        await done.wait()
        predicted = decision.predicted_observation
        record = {
            "time": started,
            "session": ordinal,
            "turn": len(trajectory.turns) + 1,
            "action": action,
            "predicted": predicted,
            "predicted_outcome": decision.outcome.value,
            "predicted_error": decision.error,
            "real": box.get("real"),
            "real_is_error": box.get("real_is_error"),
            "divergence": None if predicted is None else divergence(predicted, box.get("real", "")),
            "outcome_agrees": (decision.outcome is Outcome.FAILURE)
            == bool(box.get("real_is_error"))
            if decision.kind is not DecisionKind.UNSIMULATED
            else None,
        }
        if self._log is not None:
            self._log.write(record)
