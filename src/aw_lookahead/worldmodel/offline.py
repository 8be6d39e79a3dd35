"""World model over an in-process ``vllm.LLM``: whole batches at full engine throughput.

For evaluation and data generation, where one process owns the GPU and
thousands of samples are predicted: :meth:`VLLMOfflineWorldModel.predict_batch`
sends every (trajectory, action) sample in **one** ``LLM.chat`` call, so the
engine schedules them together and its prefix cache shares identical
histories. The messages are rendered by
:func:`~aw_lookahead.prompts.render_messages` and replies parsed by
:func:`~aw_lookahead.prompts.parse_reply`, exactly as
:class:`~aw_lookahead.worldmodel.OpenAIWorldModel` does, so both backends
follow the same message contract.

Guarantees:

* ``import`` of this module does not import vLLM; the engine is built on
  first use (or injected with ``llm=``), in a worker thread.
* The blocking engine always runs in a worker thread (``asyncio.to_thread``),
  one batch at a time (a lock), so the event loop stays responsive.
* Per sample failures (empty reply, prompt longer than the context) come
  back as :class:`~aw_lookahead.errors.WorldModelError` in
  ``return_exceptions`` mode; an engine crash fails the whole batch.
* No history trimming: a prompt longer than ``max_model_len`` gives
  :class:`~aw_lookahead.errors.ContextTooLongError` for that sample.

In a script, guard the entry point with ``if __name__ == "__main__":``: vLLM
starts its engine in a spawned process that re-imports the main module.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from typing import Any

from aw_lookahead._extras import require
from aw_lookahead.errors import ConfigError, ContextTooLongError, ReplyParseError, WorldModelError
from aw_lookahead.prompts import PromptSet, render_messages
from aw_lookahead.redact import redact_messages
from aw_lookahead.trajectory import Action, Trajectory

from ._reply import reply_prediction
from .base import BaseWorldModel, Prediction, Step, Usage

__all__ = ["VLLMOfflineWorldModel"]

Sample = tuple[Trajectory, Action]


class VLLMOfflineWorldModel(BaseWorldModel):
    """The :class:`~aw_lookahead.worldmodel.WorldModel` protocol over ``vllm.LLM``.

    ``model`` is a Hugging Face id or folder; ``llm_kwargs`` go to
    ``vllm.LLM`` (e.g. ``tensor_parallel_size``, ``max_model_len``,
    ``language_model_only=True``, ``trust_remote_code=True``,
    ``enable_prefix_caching=True``). Pass an existing engine with ``llm=``.
    Sampling defaults are the reference model's (temperature 0.6, top_p 0.95,
    top_k 20); ``thinking`` sets the chat template's ``enable_thinking``
    (``None`` leaves the template default). ``strict`` refuses replies
    without an observation tag or marker.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        llm: Any | None = None,
        llm_kwargs: dict[str, Any] | None = None,
        served_name: str | None = None,
        temperature: float = 0.6,
        top_p: float = 0.95,
        top_k: int | None = 20,
        max_tokens: int = 1024,
        thinking: bool | None = None,
        seed: int | None = None,
        prompts: PromptSet | None = None,
        strict: bool = False,
    ) -> None:
        if model is None and llm is None:
            raise ConfigError("pass model=<hf id or folder> or an existing engine with llm=...")
        if max_tokens < 1:
            raise ConfigError(f"max_tokens must be >= 1, got {max_tokens}")
        self._model_path = model
        self._llm = llm
        self.llm_kwargs = dict(llm_kwargs or {})
        self.served_name = served_name or model or "vllm-offline"
        self.temperature = temperature
        self.top_p = top_p
        self.top_k = top_k
        self.max_tokens = max_tokens
        self.thinking = thinking
        self.seed = seed
        self.prompts = prompts
        self.strict = strict
        self._build_lock = threading.Lock()
        self._run_lock = asyncio.Lock()

    @property
    def model_id(self) -> str:
        return (
            f"vllm-offline:{self.served_name}|t={self.temperature}|p={self.top_p}|k={self.top_k}"
            f"|think={self.thinking}|max={self.max_tokens}|seed={self.seed}"
        )

    def sampling_settings(self) -> dict[str, Any]:
        return {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "top_k": self.top_k,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
        }

    # ------------------------------------------------------------------ engine

    def engine(self) -> Any:
        """The ``vllm.LLM`` (built on first call; blocking, may take a while)."""
        with self._build_lock:
            if self._llm is None:
                vllm = require("vllm", "vllm")
                self._llm = vllm.LLM(model=self._model_path, **self.llm_kwargs)
            return self._llm

    def close(self) -> None:
        """Shut the engine down (its engine-core process exits) and drop it.

        Safe to call twice; an engine passed in with ``llm=`` is shut down too.
        A later prediction builds a new engine from ``model``.
        """
        with self._build_lock:
            llm, self._llm = self._llm, None
        core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
        shutdown = getattr(core, "shutdown", None)
        if callable(shutdown):
            shutdown()

    def _sampling_params(self) -> Any:
        vllm = require("vllm", "vllm")
        kwargs: dict[str, Any] = {
            "n": 1,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
        }
        if self.top_k is not None:
            kwargs["top_k"] = self.top_k
        if self.seed is not None:
            kwargs["seed"] = self.seed
        return vllm.SamplingParams(**kwargs)

    def _chat(self, conversations: list[list[dict[str, str]]]) -> tuple[list[Any], float]:
        llm = self.engine()
        extra: dict[str, Any] = {}
        if self.thinking is not None:
            extra["chat_template_kwargs"] = {"enable_thinking": self.thinking}
        started = time.perf_counter()
        redacted = [redact_messages(c) for c in conversations]
        outputs = llm.chat(redacted, self._sampling_params(), use_tqdm=False, **extra)
        return list(outputs), time.perf_counter() - started

    def _max_model_len(self) -> int | None:
        try:
            value = self.engine().llm_engine.model_config.max_model_len
        except AttributeError:
            return None
        return value if isinstance(value, int) else None

    # ------------------------------------------------------------------ mapping

    def _to_prediction(self, output: Any, action: Action, latency: float) -> Prediction:
        if not output.outputs:
            raise ReplyParseError("the engine returned no completion", raw="")
        completion = output.outputs[0]
        content = completion.text or ""
        usage = Usage(
            prompt_tokens=len(output.prompt_token_ids or []),
            completion_tokens=len(completion.token_ids or []),
            cached_tokens=getattr(output, "num_cached_tokens", None),
        )
        return reply_prediction(
            action,
            content,
            None,
            strict=self.strict,
            model=self.served_name,
            usage=usage,
            latency_s=latency,
            finish_reason=completion.finish_reason,
        )

    # ------------------------------------------------------------------ batches

    async def predict_batch(self, samples: Sequence[Sample]) -> list[Prediction | WorldModelError]:
        """Predict every ``(trajectory, action)`` sample in one ``LLM.chat`` call.

        Returns one entry per sample, in order: a :class:`Prediction`
        (``latency_s`` is the whole batch's wall time) or the sample's
        :class:`~aw_lookahead.errors.WorldModelError`.
        """
        if not samples:
            return []
        conversations = [render_messages(t, a, prompts=self.prompts) for t, a in samples]
        async with self._run_lock:
            try:
                outputs, latency = await asyncio.to_thread(self._chat, conversations)
            except ValueError as exc:
                if "longer than" not in str(exc) and "context" not in str(exc).lower():
                    raise
                return await self._one_by_one(samples, conversations)
        return [
            self._settle(out, action, latency)
            for out, (_, action) in zip(outputs, samples, strict=True)
        ]

    async def _one_by_one(
        self, samples: Sequence[Sample], conversations: list[list[dict[str, str]]]
    ) -> list[Prediction | WorldModelError]:
        """After a context error in a batch: find the offending samples, run the rest."""
        limit = await asyncio.to_thread(self._max_model_len)
        results: list[Prediction | WorldModelError] = []
        for (_, action), conv in zip(samples, conversations, strict=True):
            try:
                outputs, latency = await asyncio.to_thread(self._chat, [conv])
            except ValueError as exc:
                results.append(ContextTooLongError(None, limit, detail=f"vLLM said: {exc}. "))
                continue
            results.append(self._settle(outputs[0], action, latency))
        return results

    def _settle(self, output: Any, action: Action, latency: float) -> Prediction | WorldModelError:
        try:
            return self._to_prediction(output, action, latency)
        except WorldModelError as exc:
            return exc

    async def predict_step(self, step: Step) -> list[Prediction | WorldModelError]:
        """The step's candidates as one batch for the in-process engine."""
        return await self.predict_batch([(step.trajectory, a) for a in step.actions])

    async def predict(self, trajectory: Trajectory, action: Action) -> Prediction:
        """Predict the observation that follows ``action`` (a batch of one)."""
        [result] = await self.predict_step(self.prepare_step(trajectory, [action]))
        if isinstance(result, WorldModelError):
            raise result
        return result
