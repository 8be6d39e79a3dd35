"""Decisions made visible while a graph runs: custom stream events and callback child runs.

* Each decision is written to LangGraph's stream writer as it is made, so
  ``graph.stream(..., stream_mode="custom")`` yields
  ``{"aw_lookahead": <record>}`` (the same record as in state).
* Each simulated tool call appears in LangChain callbacks (LangSmith, Langfuse,
  ``astream_events``) as a child LLM run named ``aw_lookahead.world_model``:
  its prompt is the action, its output the predicted observation, and
  ``llm_output`` holds the prompt size (``prompt_tokens``), ``latency_s``
  and the decision. The run is tagged ``nostream`` so it never reaches the
  agent's ``stream_mode="messages"`` token stream.

Both carry redacted text only (:mod:`aw_lookahead.redact`, the process
default): tracing handlers such as LangSmith see placeholders, never the
secrets in an action or a predicted observation.

Outside a graph run (no config in context) both are skipped silently.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from langchain_core.outputs import Generation, LLMResult
from langchain_core.runnables.config import (
    get_async_callback_manager_for_config,
    get_callback_manager_for_config,
)
from langgraph.constants import TAG_NOSTREAM

from aw_lookahead.lookahead import Decision
from aw_lookahead.redact import redact_off_loop, redact_record, redact_text

__all__ = ["EVENT_KEY", "emit", "gate_traced", "gate_traced_sync"]

EVENT_KEY = "aw_lookahead"
RUN_NAME = "aw_lookahead.world_model"
_SERIALIZED: dict[str, Any] = {"name": RUN_NAME, "id": ["aw_lookahead", "world_model"]}


def _config() -> Any:
    from langgraph.config import get_config

    try:
        return get_config()
    except RuntimeError:
        return None


def emit(records: Sequence[Mapping[str, Any]], writer: Callable[[Any], None] | None = None) -> None:
    """Write one ``{"aw_lookahead": record}`` custom stream event per decision record."""
    if writer is None:
        from langgraph.config import get_stream_writer

        try:
            writer = get_stream_writer()
        except RuntimeError:
            return
    for rec in records:
        writer({EVENT_KEY: redact_record(dict(rec))})


def _prompts(calls: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each call as the run's prompt, redacted (secret-named arguments whole)."""
    return [
        json.dumps(
            redact_record({"name": c.get("name"), "arguments": c.get("args", {})}), default=str
        )
        for c in calls
    ]


def _size(calls: Sequence[Mapping[str, Any]]) -> int:
    return sum(len(str(c.get("args", ""))) for c in calls)


def _result(decision: Decision) -> LLMResult:
    pred = decision.prediction
    info = {
        "prompt_tokens": pred.usage.prompt_tokens if pred is not None else None,
        "completion_tokens": pred.usage.completion_tokens if pred is not None else None,
        "latency_s": round(decision.latency_s, 4),
        "kind": decision.kind.value,
        "outcome": decision.outcome.value,
        "reason": decision.reason,
        "error": decision.error,
        "cached": decision.cached,
    }
    info = redact_record(info)
    text = redact_text(pred.observation) if pred is not None else ""
    return LLMResult(generations=[[Generation(text=text, generation_info=info)]], llm_output=info)


def _observation_size(decision: Decision) -> int:
    return len(decision.prediction.observation) if decision.prediction is not None else 0


_META = {"ls_provider": "aw_lookahead", "ls_model_type": "llm"}


async def gate_traced(
    run: Callable[[], Awaitable[list[Decision]]], calls: Sequence[Mapping[str, Any]]
) -> list[Decision]:
    """Await ``run()`` (the decisions for ``calls``) inside one child run per call."""
    config = _config()
    if not calls or config is None or not config.get("callbacks"):
        return await run()
    manager = get_async_callback_manager_for_config(config)
    manager.add_tags([TAG_NOSTREAM, "aw_lookahead"])
    manager.add_metadata(_META)
    prompts = await redact_off_loop(_size(calls), _prompts, calls)
    runs = await manager.on_llm_start(_SERIALIZED, prompts, name=RUN_NAME)
    try:
        decisions = await run()
    except BaseException as exc:
        for r in runs:
            await r.on_llm_error(exc)
        raise
    for r, d in zip(runs, decisions, strict=False):
        await r.on_llm_end(await redact_off_loop(_observation_size(d), _result, d))
    return decisions


def gate_traced_sync(
    run: Callable[[], list[Decision]], calls: Sequence[Mapping[str, Any]]
) -> list[Decision]:
    """Blocking :func:`gate_traced`."""
    config = _config()
    if not calls or config is None or not config.get("callbacks"):
        return run()
    manager = get_callback_manager_for_config(config)
    manager.add_tags([TAG_NOSTREAM, "aw_lookahead"])
    manager.add_metadata(_META)
    runs = manager.on_llm_start(_SERIALIZED, _prompts(calls), name=RUN_NAME)
    try:
        decisions = run()
    except BaseException as exc:
        for r in runs:
            r.on_llm_error(exc)
        raise
    for r, d in zip(runs, decisions, strict=False):
        r.on_llm_end(_result(d))
    return decisions
