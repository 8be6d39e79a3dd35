"""World model behind any OpenAI-compatible chat endpoint (vLLM, SGLang, llama.cpp server).

The provider (base URL, key, an injectable ``AsyncOpenAI``) is apart from the mapping; guarantees:

* ``predict_many`` sends the K requests concurrently with one shared,
  byte-identical history, so vLLM's scheduler batches them and its prefix
  cache computes the history once (see ``Prediction.usage.cached_tokens``).
* Retries (with backoff) only on connection errors, HTTP 429 and 5xx; never
  on timeouts, so a hung server costs at most ``timeout`` seconds.
* A history too long for the server's context is trimmed from the oldest
  turns, always keeping the first (task and initial state); the prediction
  reports how many turns were dropped (the fitting lives in :mod:`._context`).
* Every failure is one of :mod:`aw_lookahead.errors`' ``WorldModelError``s.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from typing import Any, ClassVar

from openai import AsyncOpenAI
from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_attempt,
    stop_after_delay,
    wait_exponential,
)

from aw_lookahead.endpoint import (
    DEFAULT_BASE_URL,
    ENV_MODEL,
    ModelInfo,
    OpenAIProvider,
    UsesProvider,
    request_body,
)
from aw_lookahead.errors import (
    ConfigError,
    ContextTooLongError,
    ModelNotServedError,
    ServerError,
    ServerUnreachableError,
    WorldModelError,
)
from aw_lookahead.prompts import PromptSet, prompts_for_model
from aw_lookahead.trajectory import Action, Trajectory

from ._context import Fit, fit_step, shrink
from ._reply import completions_prediction
from .base import BaseWorldModel, Prediction, Sampling, ServedModel, Step, settle
from .servers import ServerKind, server_kind

__all__ = ["DEFAULT_BASE_URL", "TOP_LOGPROBS", "ModelInfo", "OpenAIWorldModel"]

TOP_LOGPROBS = 10
"""Alternatives kept per output token with ``logprobs=True``: the engine sums the mass of
those that start a failure where the decision is made (:mod:`aw_lookahead.lookahead.confidence`)."""


def _retryable(exc: BaseException) -> bool:
    """Connection failures, HTTP 429 and 5xx are worth another try; a timeout never is."""
    if isinstance(exc, ServerUnreachableError):
        return True
    status = exc.status if isinstance(exc, ServerError) else None
    return status is not None and (status == 429 or status >= 500)


class OpenAIWorldModel(UsesProvider, BaseWorldModel):
    """Predicts observations with a chat model behind an OpenAI-compatible API.

    Arguments default to the environment: ``AW_LOOKAHEAD_BASE_URL`` (else
    ``http://127.0.0.1:8000/v1``), ``AW_LOOKAHEAD_MODEL`` (else the only model
    the server serves) and ``AW_LOOKAHEAD_API_KEY`` (else a placeholder, which
    local servers accept). Sampling defaults are the reference model's:
    temperature 0.6, top_p 0.95, top_k 20. ``thinking`` switches the chat
    template's thinking on or off (``None`` leaves the server default).
    ``strict`` refuses replies without an observation tag or marker.

    ``samples`` asks for that many predictions per action, sent together so
    the server computes their shared prompt once (its prefix cache); the first
    is the prediction, the others its :attr:`~.base.Prediction.samples`, from
    which the engine estimates ``p_failure``. ``seed`` makes sampled
    predictions repeatable (the i-th sample is seeded ``seed + i``, one
    request each); unseeded, the samples come in one request with vLLM's
    ``n``. Do not seed vLLM's CPU build: a seeded request whose prompt is
    prefilled in chunks fails the server ("CPU Generator does not use
    offset"). ``logprobs`` asks for the tokens' log-probabilities and the
    ``TOP_LOGPROBS`` most likely alternatives at each position (kept in
    ``Prediction.metadata["token_logprobs"]`` and ``["token_top_logprobs"]``):
    with ``temperature=0`` they
    give a repeatable ``p_failure`` from one prediction (the engine's
    default estimator for a calibrated model, :mod:`aw_lookahead.lookahead.confidence`).
    ``server`` is the kind of server (:mod:`.servers`: ``"openai"``, ``"llama.cpp"``;
    default ``$AW_LOOKAHEAD_SERVER``, else ``"openai"``): where it learns the context
    length and counts tokens, and how many samples one request may hold.
    """

    has_server: ClassVar[bool] = True
    timeout: float

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: AsyncOpenAI | None = None,
        temperature: float = 0.6,
        top_p: float = 0.95,
        top_k: int | None = 20,
        max_tokens: int = 1024,
        thinking: bool | None = None,
        max_concurrency: int = 16,
        timeout: float = 60.0,
        retries: int = 2,
        prompts: PromptSet | None = None,
        strict: bool = False,
        seed: int | None = None,
        samples: int = 1,
        logprobs: bool = False,
        extra_body: dict[str, Any] | None = None,
        server: str | ServerKind | None = None,
    ) -> None:
        if samples < 1:
            raise ConfigError(f"samples must be >= 1, got {samples}")
        if max_tokens < 1:
            raise ConfigError(f"max_tokens must be >= 1, got {max_tokens}")
        if max_concurrency < 1:
            raise ConfigError(f"max_concurrency must be >= 1, got {max_concurrency}")
        if timeout <= 0:
            raise ConfigError(f"timeout must be > 0 seconds, got {timeout}")
        self.server = server_kind(server)
        self.provider = OpenAIProvider.resolve(
            base_url=base_url, api_key=api_key, client=client, model=model
        )
        self.base_url = self.provider.base_url
        self._model = self.provider.model
        self.temperature = temperature
        self.top_p = top_p
        self.top_k = top_k
        self.max_tokens = max_tokens
        self.thinking = thinking
        self.timeout = timeout
        self.retries = retries
        self._prompts = prompts
        self.strict = strict
        self.seed = seed
        self.samples = samples
        self.logprobs = logprobs
        self.extra_body = dict(extra_body or {})
        self.max_concurrency = max_concurrency
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]
        self._semaphores = weakref.WeakKeyDictionary()
        self._served: ServedModel | None = None

    # ------------------------------------------------------------------ event loops

    @property
    def _client(self) -> AsyncOpenAI:
        # The client of the call in progress (see OpenAIProvider.connect): never one
        # left over from another event loop.
        return self.provider.client

    @property
    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        sem = self._semaphores.get(loop)
        if sem is None:
            sem = self._semaphores[loop] = asyncio.Semaphore(self.max_concurrency)
        return sem

    # ------------------------------------------------------------------ identity

    @property
    def model(self) -> str:
        """The served model name (resolved from the server if not given)."""
        if self._model is None:
            raise ConfigError(
                f"no model name yet: pass model=..., set {ENV_MODEL}, or await "
                "resolve_model() first"
            )
        return self._model

    @property
    def model_name(self) -> str | None:
        """The served model name; ``None`` until given or learnt from the server."""
        return self._model

    @property
    def model_id(self) -> str:
        return (
            f"openai:{self._model or '?'}@{self.base_url}"
            f"|t={self.temperature}|p={self.top_p}|k={self.top_k}|think={self.thinking}"
            f"|max={self.max_tokens}|seed={self.seed}|n={self.samples}|lp={self.logprobs}"
        )

    @property
    def prompts(self) -> PromptSet:
        """The prompts requests are rendered with: the ones given, else the packaged profile
        the served model was trained on (:func:`~aw_lookahead.prompts.prompts_for_model`)."""
        return self._prompts if self._prompts is not None else prompts_for_model(self._model)

    @prompts.setter
    def prompts(self, value: PromptSet | None) -> None:
        self._prompts = value

    def sampling_settings(self) -> dict[str, Any]:
        return {
            "samples": self.samples,
            "logprobs": self.logprobs,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "top_k": self.top_k,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
        }

    # ------------------------------------------------------------------ the served model

    @property
    def served(self) -> ServedModel | None:
        return self._served

    async def list_models(self) -> list[ModelInfo]:
        """The models the server serves (``GET /v1/models``)."""
        async with self.provider.connect():
            return await self.provider.list_models(self.timeout)

    async def resolve_model(self) -> str:
        """Check the model is served and learn what serves it (:attr:`served`: its context
        length, weights, samples per request); pick the only one if unset. Asked once:
        the one place this model learns about its server."""
        if self._served is not None:
            return self._served.name
        models = await self.list_models()  # inside a predict call: reuses its client
        if self._model is None:
            if len(models) != 1:
                names = [m.id for m in models]
                raise ConfigError(
                    f"the server at {self.base_url} serves {len(names)} models {names}; "
                    f"choose one with model=... / --model / {ENV_MODEL}"
                )
            self._model = models[0].id
        match = next((m for m in models if m.id == self._model), None)
        if match is None:
            raise ModelNotServedError(self._model, [m.id for m in models], self.base_url)
        limits = await self.server.limits(
            self._client, self.base_url, match, request_timeout=self.timeout
        )
        self._served = ServedModel(
            name=self._model,
            root=match.root or "",
            weights=match.weights(),
            context_tokens=limits.context_tokens,
            max_samples=limits.max_samples,
        )
        return self._model

    # ------------------------------------------------------------------ predicting, top-down

    async def predict(self, trajectory: Trajectory, action: Action) -> Prediction:
        """Predict the observation that follows ``action`` (a step of one)."""
        [result] = await self.predict_step(self.prepare_step(trajectory, [action]))
        if isinstance(result, WorldModelError):
            raise result
        return result

    async def predict_step(self, step: Step) -> list[Prediction | WorldModelError]:
        """Predict every action of ``step``, settled, in order. The whole flow, here:

        1. learn the served model (:meth:`resolve_model`, once per model);
        2. render: the step's rendering, with the served model's prompts;
        3. fit: the cut of old turns that fits the step's longest request
           (:func:`~._context.fit_step`);
        4. request and 5. parse, each action concurrently (:meth:`_predict_one`).

        Steps 1-3 are shared by the step's actions and done once; a
        ``WorldModelError`` there is every action's result. One client serves the
        whole step (see ``OpenAIProvider.connect``).
        """
        if not step.actions:
            return []
        async with self.provider.connect():
            try:
                await self.resolve_model()
                step = self._rendered_for_served_model(step)
                fit = await fit_step(
                    step,
                    count=self._count_tokens,
                    max_model_len=self._served.context_tokens if self._served else None,
                    max_tokens=self.max_tokens,
                )
            except WorldModelError as exc:
                return [exc for _ in step.actions]
            return await settle(len(step.actions), lambda i: self._predict_one(step, i, fit))

    def _rendered_for_served_model(self, step: Step) -> Step:
        """``step`` rendered with :attr:`prompts`: the same step unless the model's name
        (which picks the packaged prompts) was only learnt from the server."""
        if step.prompts is self.prompts:
            return step
        return Step(
            step.trajectory,
            step.actions,
            prompts=self.prompts,
            sampling=step.sampling,
            states=step.states,
        )

    async def _count_tokens(self, messages: list[dict[str, str]]) -> int | None:
        return await self.server.count_tokens(
            self._client, self.base_url, self.model, messages, request_timeout=self.timeout
        )

    async def _predict_one(self, step: Step, index: int, fit: Fit) -> Prediction:
        """Request the ``index``-th action's prediction(s) and parse the reply. When the
        server still finds the prompt too long, the same trimming order cuts one more
        turn (:func:`~._context.shrink`) and it asks again; nothing left to cut re-raises."""
        action = step.actions[index]
        kw, requests = self._request_kwargs(step.sampling)
        while True:
            messages = step.fit(fit.skip, fit.brief).messages(index)
            started = time.perf_counter()
            try:
                completions = await asyncio.gather(
                    *(self._create(messages, {**kw, **more}) for more in requests)
                )
            except ContextTooLongError:
                smaller = shrink(step.trajectory, fit)
                if smaller is None:
                    raise
                fit = smaller
                continue
            return completions_prediction(
                completions,
                action,
                strict=self.strict,
                model=self.model,
                latency_s=time.perf_counter() - started,
                trimmed_turns=fit.skip,
            )

    def _request_kwargs(
        self, sampling: Sampling | None = None
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The request's settings, and what each request to send adds to them.

        A seeded draw of n predictions is n requests seeded ``seed``,
        ``seed + 1``, ... (their shared prompt still hits vLLM's prefix cache):
        vLLM's CPU build fails on a seeded request with ``n > 1`` ("CPU
        Generator does not use offset") and takes the whole server down.
        Unseeded, it is one request with ``n``, or several when the server
        caps ``n`` (llama.cpp: its slots), sent together.
        """
        body = request_body(self.extra_body, thinking=self.thinking)
        if self.top_k is not None:
            body.setdefault("top_k", self.top_k)
        kw: dict[str, Any] = {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "extra_body": body,
        }
        seed, n, logprobs = self.seed, self.samples, self.logprobs
        if sampling is not None:
            n, logprobs = sampling.n, sampling.logprobs or logprobs
            if sampling.temperature is not None:
                kw["temperature"] = sampling.temperature
            if sampling.seed is not None:
                seed = sampling.seed
            if sampling.max_tokens is not None:
                kw["max_tokens"] = min(self.max_tokens, sampling.max_tokens)
        if logprobs:
            kw["logprobs"] = True
            kw["top_logprobs"] = TOP_LOGPROBS
        if seed is not None:
            return kw, [{"seed": seed + i} for i in range(n)]
        cap = (self._served.max_samples if self._served else None) or n
        return kw, [{"n": min(cap, n - i)} if n > 1 else {} for i in range(0, n, cap)]

    async def _create(self, messages: list[dict[str, str]], kw: dict[str, Any]) -> Any:
        async for attempt in AsyncRetrying(
            retry=retry_if_exception(_retryable),
            stop=stop_after_attempt(self.retries + 1) | stop_after_delay(self.timeout),
            wait=wait_exponential(multiplier=0.25, max=2.0),
            reraise=True,
        ):
            with attempt:
                async with self._semaphore:
                    return await self.provider.chat(
                        messages, model=self.model, timeout_s=self.timeout, **kw
                    )
        raise AssertionError("unreachable")  # pragma: no cover
