"""The `aw-lookahead mcp` server: in-memory sessions, then each real transport once."""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("mcp")

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from aw_lookahead.mcp import build_server
from aw_lookahead.trajectory import Action, Trajectory
from aw_lookahead.worldmodel import FunctionWorldModel, OpenAIWorldModel
from mcp_support import progress_gated_model, start_http

AW = str(Path(sys.executable).with_name("aw-lookahead"))
MISSING = {"name": "read_text_file", "arguments": {"path": "/work/missing.txt"}}
PRESENT = {"name": "read_text_file", "arguments": {"path": "/work/notes.txt"}}


def rule_model(trajectory: Trajectory, action: Action) -> str:
    """A tiny file-system simulator: only /work/notes.txt exists."""
    if "missing" in str(action):
        return "Error: ENOENT: no such file or directory, open '/work/missing.txt'"
    return "meeting at 10:00"


@pytest.fixture
def server() -> object:
    return build_server(FunctionWorldModel(rule_model))


async def test_tools_are_listed_with_schemas_and_annotations(server: object) -> None:
    async with Client(server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {"simulate", "lookahead"}
    sim = tools["simulate"]
    assert sim.input_schema["required"] == ["action"]
    assert {"history", "domain", "tools", "task"} <= set(sim.input_schema["properties"])
    assert sim.output_schema is not None
    assert {"observation", "outcome", "feasible"} <= set(sim.output_schema["properties"])
    assert sim.annotations is not None
    assert sim.annotations.read_only_hint is True
    assert "Nothing is executed" in (sim.description or "")
    assert tools["lookahead"].input_schema["required"] == ["candidates"]


async def test_simulate_returns_prediction_with_evidence(server: object) -> None:
    history = [{"action": PRESENT, "observation": "meeting at 10:00"}]
    async with Client(server) as client:
        bad = await client.call_tool("simulate", {"action": MISSING, "history": history})
        good = await client.call_tool("simulate", {"action": PRESENT, "domain": "mcp"})
    assert not bad.is_error
    assert bad.structured_content is not None
    assert bad.structured_content["observation"].startswith("Error: ENOENT")
    assert bad.structured_content["outcome"] == "failure"
    assert bad.structured_content["feasible"] is False
    assert bad.structured_content["signals"][0]["matched"].startswith("Error: ENOENT")
    assert good.structured_content is not None
    assert good.structured_content["feasible"] is True
    assert good.structured_content["observation"] == "meeting at 10:00"


async def test_a_cached_answer_says_so(server: object) -> None:
    async with Client(server) as client:
        first = await client.call_tool("simulate", {"action": PRESENT})
        second = await client.call_tool("simulate", {"action": PRESENT})
    assert first.structured_content is not None
    assert second.structured_content is not None
    assert first.structured_content["cached"] is False
    assert second.structured_content["cached"] is True
    assert second.structured_content["tokens"] == 0
    assert second.structured_content["observation"] == first.structured_content["observation"]


async def test_lookahead_ranks_and_prunes(server: object) -> None:
    async with Client(server) as client:
        result = await client.call_tool(
            "lookahead", {"candidates": [MISSING, PRESENT], "task": "read my notes"}
        )
    out = result.structured_content
    assert not result.is_error
    assert out is not None
    assert out["chosen_index"] == 1
    assert out["chosen"]["action"] == PRESENT
    assert [d["index"] for d in out["pruned"]] == [0]
    assert out["pruned"][0]["kind"] == "veto"
    assert "NOT executed" in out["pruned"][0]["explanation"]
    assert len(out["decisions"]) == 2


async def test_bad_arguments_are_tool_errors(server: object) -> None:
    async with Client(server) as client:
        result = await client.call_tool("simulate", {"action": PRESENT, "domain": "nowhere"})
    assert result.is_error


@pytest.mark.parametrize("tool", ["simulate", "lookahead"])
async def test_slow_calls_report_progress(tool: str) -> None:
    wm, on_progress, seen = progress_gated_model()
    args: dict[str, Any] = (
        {"action": PRESENT} if tool == "simulate" else {"candidates": [PRESENT, MISSING]}
    )
    async with Client(build_server(wm)) as client:
        result = await client.call_tool(tool, args, progress_callback=on_progress)
    assert not result.is_error, result
    assert len(seen) >= 2
    assert seen == sorted(set(seen))  # progress grows strictly, as the spec requires


async def test_world_model_down_is_a_clear_tool_error() -> None:
    dead = OpenAIWorldModel("m", base_url="http://127.0.0.1:9/v1", timeout=5, retries=0)
    async with dead, Client(build_server(dead)) as client:
        result = await client.call_tool("simulate", {"action": PRESENT})
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "could not be checked (the world model could not be reached)" in text
    assert "127.0.0.1:9" not in text  # operator detail goes to the log, not to the agent


async def test_simulate_with_the_real_world_model(vllm_server: object) -> None:
    wm = OpenAIWorldModel(
        vllm_server.model,  # type: ignore[attr-defined]
        base_url=vllm_server.base_url,  # type: ignore[attr-defined]
        api_key=vllm_server.api_key,  # type: ignore[attr-defined]
        max_tokens=64,
        timeout=600,  # generous: the engine's deadline (derived from it) is longer still
    )
    async with wm, Client(build_server(wm)) as client:
        result = await client.call_tool("simulate", {"action": PRESENT})
    if result.is_error:  # only a world model slower than 600 s: said so, never a crash
        text = " ".join(getattr(c, "text", "") for c in result.content)
        assert "did not answer within 600" in text, text
        return
    out = result.structured_content
    assert out is not None
    assert isinstance(out["observation"], str)
    assert out["outcome"] in {"success", "failure", "no_op", "risky", "unknown"}


# --------------------------------------------------------------------------- real transports


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


ENV = {**os.environ, "AW_LOOKAHEAD_BASE_URL": "http://127.0.0.1:9/v1", "AW_LOOKAHEAD_MODEL": "m"}


@pytest.mark.integration
async def test_stdio_subprocess() -> None:
    params = StdioServerParameters(command=AW, args=["mcp"], env=ENV)
    async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
        names = {t.name for t in (await client.list_tools()).tools}
    assert names == {"simulate", "lookahead"}


@pytest.fixture
def http_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str | None]]:
    token: str | None = request.param
    port = _free_port()
    args = [AW, "mcp", "--transport", "http", "--port", str(port)]
    if token:
        args += ["--auth-token", token]
    proc = start_http(args, ENV, tmp_path / "server.log")
    try:
        yield f"http://127.0.0.1:{port}/mcp", token
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def post_status(url: str, headers: dict[str, str]) -> int:
    return httpx.post(url, json={}, headers=headers, timeout=10, trust_env=False).status_code


@pytest.mark.integration
@pytest.mark.parametrize("http_server", [None, "s3cret-0123456789abcdef"], indirect=True)
async def test_streamable_http_subprocess(http_server: tuple[str, str | None]) -> None:
    url, token = http_server
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if token:
        assert post_status(url, {}) == 401
        assert post_status(url, {"Authorization": "Bearer nope"}) == 401
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
    ):
        names = {t.name for t in (await client.list_tools()).tools}
        result = await client.call_tool("simulate", {"action": PRESENT})
    assert names == {"simulate", "lookahead"}
    assert result.is_error  # nothing serves at 127.0.0.1:9: a tool error, not a dead server


def test_the_tools_domain_names_are_the_trajectory_domains() -> None:
    """The tools' JSON schema spells the domains as a Literal; it must name every Domain."""
    from typing import get_args

    from aw_lookahead.mcp._models import DomainName
    from aw_lookahead.trajectory import Domain

    assert sorted(get_args(DomainName)) == sorted(d.value for d in Domain)


async def test_with_an_environment_a_missing_file_is_vetoed_by_observation(
    tmp_path: Path,
) -> None:
    (tmp_path / "cedar.txt").write_text("cedar\n")
    server = build_server(FunctionWorldModel(rule_model), environment=tmp_path)
    async with Client(server) as client:
        missing = await client.call_tool(
            "simulate", {"action": "cat cdear.txt", "domain": "terminal"}
        )
        present = await client.call_tool(
            "simulate", {"action": "cat cedar.txt", "domain": "terminal"}
        )
    assert missing.structured_content is not None
    assert missing.structured_content["feasible"] is False
    assert "did you mean `cedar.txt`?" in missing.structured_content["reason"]
    assert present.structured_content is not None
    assert present.structured_content["feasible"] is True
