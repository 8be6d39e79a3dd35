"""Run in a child by tests/test_serving_inproc_engine.py (vLLM is imported here, never in
pytest's process). Prints one JSON object of observations on stdout.

``python tests/inproc_engine_support.py plugin``: what ``register()`` does to vLLM's client
factory with and without the environment variable.

``python tests/inproc_engine_support.py faults``: the in-process client around a core that
fails where a fault is injected (a fake core: the faults cannot be provoked in vLLM's).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from types import SimpleNamespace
from typing import Any


def plugin() -> dict[str, Any]:
    from vllm.v1.engine.core_client import EngineCoreClient

    from aw_lookahead.serving import _inproc_engine as inproc

    before = EngineCoreClient.make_async_mp_client
    os.environ.pop(inproc.ENABLE_ENV, None)
    inproc.register()
    off = EngineCoreClient.make_async_mp_client is before
    os.environ[inproc.ENABLE_ENV] = "1"
    inproc.register()
    patched = EngineCoreClient.make_async_mp_client
    inproc.register()
    return {
        "unchanged_without_env": off,
        "patched_with_env": patched is not before and getattr(patched, "_aw_inproc", False),
        "idempotent": EngineCoreClient.make_async_mp_client is patched,
    }


class _Scheduler:
    def __init__(self) -> None:
        self.requests: list[str] = []

    def has_requests(self) -> bool:
        return bool(self.requests)


class FakeCore:
    """Accepts requests; its step fails once a request named ``crash`` is scheduled."""

    def __init__(self, *_: Any) -> None:
        self.scheduler = _Scheduler()
        self.batch_queue = None
        self.thread = threading.current_thread().name
        self.shut_down = False

    def preprocess_add_request(self, request: Any) -> tuple[Any, int]:
        if request.request_id == "bad":
            raise ValueError("cannot preprocess")
        return request, 0

    def add_request(self, request: Any, wave: int) -> None:
        self.scheduler.requests.append(request.request_id)

    def abort_requests(self, ids: list[str]) -> None:
        self.scheduler.requests = [r for r in self.scheduler.requests if r not in ids]

    def step_fn(self) -> tuple[dict[int, Any], bool]:
        from vllm.v1.engine import EngineCoreOutput, EngineCoreOutputs, FinishReason

        if "crash" in self.scheduler.requests:
            raise RuntimeError("injected step failure")
        done = self.scheduler.requests
        self.scheduler.requests = []
        outputs = [EngineCoreOutput(r, [7], finish_reason=FinishReason.LENGTH) for r in done]
        return {0: EngineCoreOutputs(outputs=outputs, finished_requests=set(done))}, True

    def post_step(self, model_executed: bool) -> None:
        pass

    def list_loras(self) -> set[int]:
        return {3}

    def reset_prefix_cache(self, *_: Any) -> bool:
        raise KeyError("injected utility failure")

    def shutdown(self) -> None:
        self.shut_down = True


async def faults() -> dict[str, Any]:
    from vllm.v1.engine.exceptions import EngineDeadError

    from aw_lookahead.serving._inproc_engine import THREAD_NAME, make_inproc_client

    config = SimpleNamespace(parallel_config=SimpleNamespace(data_parallel_rank=0))
    built: list[FakeCore] = []

    def factory(*args: Any) -> FakeCore:
        built.append(FakeCore(*args))
        return built[-1]

    client = make_inproc_client(config, None, False, core_factory=factory)
    seen: dict[str, Any] = {"core_thread": built[0].thread, "thread_name": THREAD_NAME}
    await client.add_request_async(SimpleNamespace(request_id="ok"))
    out = await asyncio.wait_for(client.get_output_async(), 60)
    seen["ok"] = [(o.request_id, o.new_token_ids, str(o.finish_reason)) for o in out.outputs]
    await client.add_request_async(SimpleNamespace(request_id="bad"))
    out = await asyncio.wait_for(client.get_output_async(), 60)
    seen["bad"] = [(o.request_id, str(o.finish_reason)) for o in out.outputs]
    seen["loras"] = sorted(await client.list_loras_async())
    try:
        await client.reset_prefix_cache_async()
        seen["utility_error"] = None
    except KeyError as exc:
        seen["utility_error"] = str(exc)
    seen["alive_after_utility_error"] = not client.resources.engine_dead
    await client.add_request_async(SimpleNamespace(request_id="crash"))
    try:
        await asyncio.wait_for(client.get_output_async(), 60)
        seen["crash"] = None
    except EngineDeadError as exc:
        seen["crash"] = str(exc.__cause__)
    seen["dead"] = client.resources.engine_dead
    try:
        await asyncio.wait_for(client.get_output_async(), 60)
        seen["second_read"] = None
    except EngineDeadError:
        seen["second_read"] = "EngineDeadError"
    for name, call in (
        ("add_after_death", client.add_request_async(SimpleNamespace(request_id="late"))),
        ("utility_after_death", client.list_loras_async()),
    ):
        try:
            await asyncio.wait_for(call, 60)
            seen[name] = None
        except EngineDeadError:
            seen[name] = "EngineDeadError"
    client.shutdown(timeout=10)
    seen["core_shut_down"] = built[0].shut_down
    return seen


if __name__ == "__main__":
    what = sys.argv[1]
    result = plugin() if what == "plugin" else asyncio.run(faults())
    print(json.dumps(result))
