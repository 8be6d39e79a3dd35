"""One model, two roles: one vLLM server answers the agent's request and the lookahead prediction.

The unified paradigm serves the base plus its warm-up adapter once. The same
served name is the agent's chat model (LangChain ``ChatOpenAI`` with tools)
and the world model (:class:`~aw_lookahead.worldmodel.OpenAIWorldModel`).

The adapter is a freshly initialised LoRA (what a warm-up run writes before
any step; it leaves the outputs unchanged), loaded into the running server
at run time, so no training runs here. vLLM turns replies into tool calls
only with ``--tool-call-parser`` (docs/training.md); the shared test server
runs without one, so the policy request carries the tool with
``tool_choice="none"`` and the command the agent would run is the one the
world model is asked about.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from lora_support import served_lora

pytestmark = [
    pytest.mark.integration,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
]


@pytest.fixture(scope="module")
def warmup_adapter(tmp_path_factory: pytest.TempPathFactory, embedded_model_path: Path) -> Path:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    peft = pytest.importorskip("peft")
    from aw_lookahead.training.config import DEFAULT_LORA_TARGETS

    torch.set_num_threads(1)
    base = transformers.AutoModelForCausalLM.from_pretrained(str(embedded_model_path))
    lora = peft.LoraConfig(
        task_type="CAUSAL_LM", r=8, lora_alpha=16, target_modules=list(DEFAULT_LORA_TARGETS)
    )
    out = tmp_path_factory.mktemp("warmup") / "adapter"
    peft.get_peft_model(base, lora).save_pretrained(str(out))
    return out


@pytest.fixture
def served_adapter(vllm_server: Any, warmup_adapter: Path) -> Iterator[str]:
    """The adapter loaded into the one running server under a fresh name."""
    with served_lora(vllm_server, warmup_adapter, "warmup") as name:
        yield name


@pytest.mark.timeout(1800)
async def test_one_served_model_is_policy_and_world_model(
    vllm_server: Any, served_adapter: str
) -> None:
    from langchain_core.messages import AIMessage
    from langchain_core.tools import StructuredTool
    from langchain_openai import ChatOpenAI

    from aw_lookahead.trajectory import Trajectory
    from aw_lookahead.worldmodel import OpenAIWorldModel

    def shell(command: str) -> str:
        """Run a bash command and return what the terminal shows."""
        raise AssertionError("the test only asks the policy; nothing runs")

    tool = StructuredTool.from_function(func=shell, name="shell")
    # Minutes, not the defaults: on a loaded 2-core machine one answer took over 180 s.
    async with httpx.AsyncClient(trust_env=False, timeout=600) as http:
        policy = ChatOpenAI(
            model=served_adapter,
            base_url=vllm_server.base_url,
            api_key=vllm_server.api_key,
            temperature=0.0,
            max_tokens=32,
            http_async_client=http,
        ).bind_tools([tool], tool_choice="none")
        reply = await policy.ainvoke("Which command lists the files in the current folder?")
    assert isinstance(reply, AIMessage)
    assert str(reply.content).strip()
    assert reply.response_metadata["model_name"] == served_adapter

    history = Trajectory(
        domain="terminal",
        system_prompt="You simulate a Linux terminal. Reply with the exact output of each command.",
        turns=[{"action": "echo hi", "observation": "$ echo hi\nhi\n"}],
    )
    async with OpenAIWorldModel(
        model=served_adapter,
        base_url=vllm_server.base_url,
        api_key=vllm_server.api_key,
        max_tokens=48,
        temperature=0.0,
        top_k=None,
        timeout=600,
    ) as world:
        served = {m.id for m in await world.list_models()}
        prediction = await world.predict(history, "ls")
    assert served_adapter in served
    assert prediction.model == served_adapter
    assert prediction.raw.strip()
