"""The four per-call behaviours of :class:`~aw_lookahead.mcp.proxy.LookaheadProxy`.

The handlers get a :class:`~._proxy_state.ModeContext` (the proxy's settings and
the services they use), not the proxy: this module never imports :mod:`.proxy`.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio

from aw_lookahead.lookahead.safety import unchecked_note
from aw_lookahead.lookahead.shadow import ShadowPair, shadow_pair
from aw_lookahead.lookahead.types import Decision, Outcome, veto_basis
from aw_lookahead.redact import redact_off_loop
from aw_lookahead.trajectory import JsonlWriter, Trajectory, Turn

from ._proxy_state import CONFIRM_ARG, Arguments, ModeContext, SessionState, error_result
from .results import result_text
from .structured import fit_structured, holds_prediction

if TYPE_CHECKING:
    from mcp.server import ServerRequestContext
    from mcp.types import CallToolResult, Tool

    from aw_lookahead.trajectory import Trajectory

META_KEY = "io.github.aw-lookahead/decision"


def _summary(decision: Decision) -> dict[str, object]:
    pred = decision.prediction
    return {
        "kind": decision.kind.value,
        "basis": veto_basis(decision),
        "outcome": decision.outcome.value,
        "reason": decision.reason,
        "predicted_observation": decision.predicted_observation,
        "prompt_tokens": pred.usage.prompt_tokens if pred is not None else None,
        "trimmed_turns": pred.trimmed_turns if pred is not None else None,
        "cached": decision.cached,
    }


DRYRUN_MARK = "[aw-lookahead dryrun] simulated by the world model; nothing was executed."
PLACEHOLDER_NOTE = (
    "The structured content only fills the output schema with placeholders; "
    "the text below is the prediction."
)
"""The first line of every dry-run result's text (the prediction follows it)."""


class ModeHandlers:
    def __init__(self, context: ModeContext) -> None:
        self.context = context
        cfg = context.config
        self._log = JsonlWriter(cfg.shadow_log) if cfg.shadow_log is not None else None
        self._shadow_open: list[_ShadowEntry] = []
        self._shadow_changed = anyio.Event()
        self._shadow_run = uuid.uuid4().hex[:12]
        self._writing = 0
        self._written = anyio.Event()

    def close(self) -> None:
        if self._log is not None:
            self._log.close()

    async def _decide(self, session: SessionState, action: dict[str, object]) -> Decision:
        trajectory = await self.context.trajectory(session)
        (decision,) = await self.context.engine.gate(trajectory, [action])
        if decision.prediction is not None:
            self.context.stats["simulated"] += 1
        return decision

    # ------------------------------------------------------------------ gate

    async def gate(self, session: SessionState, tool: Tool, arguments: Arguments) -> CallToolResult:
        action: dict[str, object] = {"name": tool.name, "arguments": arguments}
        decision = await self._decide(session, action)
        if not decision.executes:
            self.context.stats["vetoed"] += 1
            return error_result(decision.explain(), {META_KEY: _summary(decision)})
        result = await self.context.forward(session, tool.name, arguments)
        meta = dict(result.meta or {})
        meta[META_KEY] = _summary(decision)
        update: dict[str, object] = {"meta": meta}
        note = unchecked_note(decision) if self.context.config.note_unchecked else None
        if note is not None:
            from mcp.types import TextContent

            update["content"] = [*result.content, TextContent(text=note)]
        return result.model_copy(update=update)

    # ------------------------------------------------------------------ preview

    async def preview(
        self, ctx: ServerRequestContext, session: SessionState, tool: Tool, arguments: Arguments
    ) -> CallToolResult:
        from mcp import types

        action: dict[str, object] = {"name": tool.name, "arguments": arguments}
        decision = await self._decide(session, action)
        predicted = decision.predicted_observation or f"(no prediction: {decision.reason})"
        verdict = f"Verdict: {decision.outcome.value}" + (
            f" ({decision.reason})" if decision.reason else ""
        )
        message = f"Preview of {tool.name}({arguments}):\nPredicted result:\n{predicted}\n{verdict}"
        capability = types.ClientCapabilities(elicitation=types.ElicitationCapability())
        if self.context.config.elicit and ctx.session.check_client_capability(capability):
            schema = {
                "type": "object",
                "properties": {"confirm": {"type": "boolean", "description": "Execute it?"}},
                "required": ["confirm"],
            }
            answer = await ctx.session.elicit_form(message + "\nExecute this call?", schema)
            if answer.action == "accept" and (answer.content or {}).get("confirm") is True:
                return await self.context.forward(session, tool.name, arguments)
            return error_result(
                f"[aw-lookahead] Not executed: the user did not confirm.\n{message}",
                {META_KEY: _summary(decision)},
            )
        token = self.context.issue_token(session, tool.name, arguments)
        return error_result(
            f"[aw-lookahead] PREVIEW ONLY - nothing was executed.\n{message}\n"
            f"To execute it, call {tool.name!r} again with the same arguments plus "
            f'"{CONFIRM_ARG}": "{token}" (single use, valid '
            f"{self.context.config.confirm_ttl_s:g} s).",
            {META_KEY: {**_summary(decision), "confirm_token": token}},
        )

    # ------------------------------------------------------------------ dryrun

    async def dryrun(
        self, session: SessionState, tool: Tool, arguments: Arguments
    ) -> CallToolResult:
        from mcp.types import CallToolResult, TextContent

        action: dict[str, object] = {"name": tool.name, "arguments": arguments}
        call_no = session.calls
        session.calls += 1
        decision = await self._decide(session, action)
        if decision.prediction is None:
            return error_result(
                f"[aw-lookahead dryrun] no simulated result: {decision.reason or decision.error}. "
                "Nothing was executed (dry run)."
            )
        text = decision.prediction.observation
        is_error = decision.outcome is Outcome.FAILURE
        perturb = self.context.config.perturb
        if perturb is not None:
            fault = perturb.plan(session.ordinal, call_no, tool.name)
            if fault.delay_s > 0:
                await anyio.sleep(fault.delay_s)
            text, injected = perturb.apply(fault, text, tool.name)
            is_error = is_error or injected
        session.turns.append(Turn(action=action, observation=text, metadata={"simulated": True}))
        meta = {META_KEY: {**_summary(decision), "dryrun": True}}
        shown = f"{DRYRUN_MARK}\n{text}"  # visible to a client that ignores _meta
        if is_error:
            return error_result(shown, meta)
        structured = None
        if tool.output_schema:
            structured = fit_structured(text, dict(tool.output_schema))
            if structured is None:
                return error_result(
                    f"[aw-lookahead dryrun] the simulated result does not fit {tool.name!r}'s "
                    f"output schema; predicted text:\n{text}",
                    meta,
                )
            if not holds_prediction(structured, text):
                shown = f"{DRYRUN_MARK} {PLACEHOLDER_NOTE}\n{text}"
        return CallToolResult(
            content=[TextContent(text=shown)], structured_content=structured, _meta=meta
        )

    # ------------------------------------------------------------------ shadow

    async def shadow(
        self, session: SessionState, tool: Tool, arguments: Arguments
    ) -> CallToolResult:
        action: dict[str, object] = {"name": tool.name, "arguments": arguments}
        trajectory = await self.context.trajectory(session)
        entry = _ShadowEntry(
            time.time(),
            time.perf_counter(),
            f"{self._shadow_run}-session-{session.ordinal}",
            trajectory,
            action,
            tool.name,
        )
        self._shadow_open.append(entry)
        self.context.spawn(self._shadow_predict, entry)
        try:
            result = await self.context.forward(session, tool.name, arguments)
            entry.real = result_text(result)
            entry.real_is_error = bool(result.is_error)
            return result
        except Exception as exc:
            entry.real = f"[downstream failure] {exc}"
            entry.real_is_error = True
            raise
        finally:
            entry.real_done = True
            await self._shadow_settle(entry)

    async def _shadow_predict(self, entry: _ShadowEntry) -> None:
        entry.decision = (await self.context.engine.gate(entry.history, [entry.action]))[0]
        await self._shadow_settle(entry)

    async def _shadow_settle(self, entry: _ShadowEntry, missing: str | None = None) -> None:
        """Write ``entry`` once both halves are in (with ``missing``: without the prediction).

        The record is built, redacted and written off the event loop when it is
        large (:func:`~aw_lookahead.redact.redact_off_loop`), so a big tool
        argument, result or history never stalls the other sessions; the write
        is shielded from cancellation, so the log is never closed under it.
        """
        if entry.written or not entry.real_done or (entry.decision is None and missing is None):
            return
        entry.written = True
        self._shadow_open.remove(entry)
        self._shadow_changed.set()
        if self._log is None:
            return
        self._writing += 1
        try:
            with anyio.CancelScope(shield=True):
                model = self.context.engine.world_model.model_id
                await redact_off_loop(entry.size(), self._write, self._log, entry, missing, model)
        finally:
            self._writing -= 1
            if not self._writing:
                self._written.set()

    @staticmethod
    def _write(log: JsonlWriter, entry: _ShadowEntry, missing: str | None, model: str) -> None:
        log.write(entry.record(missing, model))

    async def flush_shadow(self, wait_s: float, why: str) -> None:
        """Wait up to ``wait_s`` for pending predictions, then write every completed real call.

        A pair whose prediction has not come is written with ``predicted: null``
        and ``predicted_error`` saying why (``why``); calls whose real result
        never came are not pairs and are left out.
        """
        with anyio.move_on_after(wait_s):
            while any(e.real_done for e in self._shadow_open):
                self._shadow_changed = anyio.Event()
                await self._shadow_changed.wait()
        for entry in [e for e in self._shadow_open if e.real_done]:
            await self._shadow_settle(entry, f"no prediction: {why} (waited {wait_s:g} s for it)")
        while self._writing:  # writes still in a worker thread finish before the log closes
            self._written = anyio.Event()
            await self._written.wait()


@dataclass
class _ShadowEntry:
    """One shadowed call while its real result and its prediction are on their way."""

    started_at: float
    started: float
    run_id: str
    history: Trajectory
    action: dict[str, object]
    tool: str
    real: str | None = None
    real_is_error: bool | None = None
    real_done: bool = False
    decision: Decision | None = None
    written: bool = False

    def size(self) -> int:
        """About how many characters the record holds (what redacting it costs)."""
        predicted = self.decision.predicted_observation if self.decision is not None else None
        history = sum(len(str(t.action)) + len(t.observation) for t in self.history.turns)
        return len(self.real or "") + len(str(self.action)) + history + len(predicted or "")

    def record(self, missing: str | None, model: str) -> ShadowPair:
        return shadow_pair(
            source="mcp",
            run_id=self.run_id,
            tool_call_id=None,
            tool=self.tool,
            history=self.history,
            action=self.action,
            real=self.real or "",
            real_is_error=bool(self.real_is_error),
            decision=self.decision,
            model=model,
            started_at=self.started_at,
            latency_s=time.perf_counter() - self.started,
            predicted_error=missing,
        )
