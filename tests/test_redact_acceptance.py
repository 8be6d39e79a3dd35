"""Planted secrets never leave the process nor reach a file we write (real server, real parts).

Every world-model request goes through a logging HTTP relay on loopback that
forwards to the real server and keeps each request body. Fresh random secrets
are planted in a trajectory, in tool arguments and in tool results; then
simulate, the LangGraph middleware with the recorder, the MCP proxy in shadow
mode, the disk cache, ``eval run`` and ``record terminal`` run for real.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import string
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from aw_lookahead.cli import main
from aw_lookahead.lookahead import Lookahead
from aw_lookahead.lookahead.cache import PredictionCache
from aw_lookahead.trajectory import Trajectory
from aw_lookahead.worldmodel import OpenAIWorldModel
from secret_corpus_support import corpus

pytestmark = pytest.mark.integration


def _random(alphabet: str, n: int) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(n))


_ALNUM = string.ascii_letters + string.digits
OPENAI = "sk-proj-" + _random(_ALNUM, 48)
AWS_ID = "AKIA" + _random(string.ascii_uppercase + string.digits, 16)
AWS_SECRET = "Xq7" + _random(_ALNUM + "/+", 36) + "9"
GITHUB = "ghp_" + _random(_ALNUM, 36)
PASSWORD = "pw-" + _random(_ALNUM, 14)
# The shape corpus, in three parts: the trajectory, the MCP proxy's writes, the eval records
# (all of it at once would not fit the embedded server's context).
SHAPES = corpus()
IN_TRAJECTORY, IN_PROXY, IN_EVAL = SHAPES[0::3], SHAPES[1::3], SHAPES[2::3]
PLANTED = (OPENAI, AWS_ID, AWS_SECRET, GITHUB, PASSWORD, *(s for _, _, s in SHAPES))


@dataclass
class Relay:
    """A logging reverse proxy: every request body it forwarded, in order."""

    url: str
    bodies: list[bytes] = field(default_factory=list)


@pytest.fixture
def relay(vllm_server: Any) -> Iterator[Relay]:
    upstream = vllm_server.base_url.removesuffix("/v1")
    client = httpx.Client(timeout=600.0, trust_env=False)
    seen: list[bytes] = []

    class Handler(BaseHTTPRequestHandler):
        def _forward(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            seen.append(body)
            headers = {
                k: v
                for k, v in self.headers.items()
                if k.lower() not in ("host", "content-length", "connection", "accept-encoding")
            }
            reply = client.request(
                self.command, upstream + self.path, content=body, headers=headers
            )
            self.send_response(reply.status_code)
            for key, value in reply.headers.items():
                if key.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(reply.content)))
            self.end_headers()
            self.wfile.write(reply.content)

        do_GET = do_POST = _forward

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Relay(f"http://127.0.0.1:{server.server_address[1]}/v1", seen)
    finally:
        server.shutdown()
        server.server_close()
        client.close()


def _world_model(relay: Relay, vllm_server: Any) -> OpenAIWorldModel:
    return OpenAIWorldModel(
        vllm_server.model,
        base_url=relay.url,
        api_key=vllm_server.api_key,
        max_tokens=16,
        timeout=300,
        seed=3,
    )


def _trajectory_line() -> str:
    return json.dumps(
        {
            "domain": "terminal",
            "task": f"rotate the AWS pair {AWS_ID} / {AWS_SECRET}",
            "turns": [
                {"action": f"export OPENAI_API_KEY={OPENAI}", "observation": ""},
                {"action": "cat ~/.git-credentials", "observation": f"https://u:{GITHUB}@x.org"},
                {"action": "cat notes.txt", "observation": _lines(IN_TRAJECTORY)},
            ],
        }
    )


def _lines(shapes: list[tuple[str, str, str]]) -> str:
    return "\n".join(line for _, line, _ in shapes)


def _written_files(root: Path, inputs: set[Path]) -> list[Path]:
    return [p for p in sorted(root.rglob("*")) if p.is_file() and p not in inputs]


def test_no_planted_secret_reaches_the_server_or_disk(
    relay: Relay, vllm_server: Any, mcp_fs_server: Path, tmp_path: Path
) -> None:
    pytest.importorskip("langchain")
    pytest.importorskip("mcp")
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    out = tmp_path / "out"
    out.mkdir()

    # 1. simulate, with a trajectory file full of secrets and a secret in the action.
    traj_file = inputs / "traj.jsonl"
    traj_file.write_text(_trajectory_line() + "\n")
    argv = ["simulate", f"PASSWORD={PASSWORD} ./deploy.sh", "--trajectory", str(traj_file)]
    argv += ["--base-url", relay.url, "--model", vllm_server.model, "--max-tokens", "16"]
    argv += ["--timeout", "600"]  # a busy machine can miss the 60 s default
    assert main([*argv, "--json"]) == 0
    after_simulate = len(relay.bodies)
    assert after_simulate > 0

    # 2. the disk cache under the engine.
    traj = Trajectory.model_validate_json(_trajectory_line())
    cache_path = out / "cache" / "predictions.db"

    async def gate() -> None:
        async with _world_model(relay, vllm_server) as wm:
            engine = Lookahead(wm, cache=PredictionCache(path=cache_path))
            await engine.gate(traj, [f"echo {GITHUB}", f"mysql --password={PASSWORD}"])

    asyncio.run(gate())
    assert cache_path.exists()

    # 3. the LangGraph middleware with the recorder, a real shell and the real model.
    _run_middleware(relay, vllm_server, out / "recording.jsonl")

    # 4. the MCP proxy in shadow mode over the real filesystem server.
    shadow = out / "shadow.jsonl"
    asyncio.run(_run_proxy(relay, vllm_server, mcp_fs_server, tmp_path, shadow))
    # Leaving the proxy waited for its shadow logging, so the log is complete here.
    assert len(shadow.read_text().splitlines()) == 3

    # 5. eval run on AgentWorldBench records with secrets in prompt and truth.
    data = inputs / "awb.jsonl"
    record = {
        "task": "terminal",
        "id": "s1",
        "system_str": "You simulate a Linux terminal.",
        "prompt": [
            f"### Turn 1\n**Action:**\nexport AWS_SECRET_ACCESS_KEY={AWS_SECRET}",
            f"### Turn 2\n**Action:**\ncurl -u admin:{PASSWORD} https://x.org",
        ],
        "response": [
            f"{AWS_ID} rotated; new key {OPENAI}\n{_lines(IN_EVAL)}",
            f"password: {PASSWORD} accepted",
        ],
        "current_prompt": f"### Turn 2\n**Action:**\ncurl -u admin:{PASSWORD} https://x.org",
        "turn_idx": 2,
        "total_turns": 2,
    }
    data.write_text(json.dumps(record) + "\n")
    eval_out = out / "eval"
    argv = ["eval", "run", "--data", str(data), "--out", str(eval_out), "--base-url", relay.url]
    argv += ["--model", vllm_server.model, "--max-tokens", "16", "--no-progress"]
    assert main(argv) == 0

    # 6. record terminal: real commands whose output prints the secrets.
    script = inputs / "script.txt"
    script.write_text(f"# task: show keys\necho {GITHUB}\necho AWS_SECRET={AWS_SECRET}\n")
    recorded = out / "recorded.jsonl"
    assert main(["record", "terminal", "--script", str(script), "--out", str(recorded)]) == 0

    # Every request body, every file written: no planted secret; files are private.
    assert len(relay.bodies) > after_simulate + 3
    bodies = b"\n".join(relay.bodies).decode()
    assert "[REDACTED_" in bodies
    written = _written_files(tmp_path, set(inputs.iterdir()))
    names = {p.name for p in written}
    assert {"predictions.jsonl", "recording.jsonl", "shadow.jsonl", "recorded.jsonl"} <= names
    names_of = {secret: name for name, _, secret in SHAPES}
    for secret in PLANTED:
        at = bodies.find(secret)
        where = bodies[max(0, at - 120) : at + len(secret) + 40]
        assert at < 0, f"{names_of.get(secret, secret[:6])} reached the server: ...{where}..."
    for path in written:
        if path.is_relative_to(tmp_path / "fs"):
            continue  # the MCP server's own files: the real effect of the tool call
        text = path.read_bytes().decode(errors="replace")
        for secret in PLANTED:
            assert secret not in text, f"{names_of.get(secret, secret[:6])} written to {path}"
        assert path.stat().st_mode & 0o077 == 0, f"{path} is readable by others"


def _run_middleware(relay: Relay, vllm_server: Any, path: Path) -> None:
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage
    from langgraph.checkpoint.memory import InMemorySaver

    from aw_lookahead.langgraph import LookaheadMiddleware, TrajectoryRecorder
    from aw_lookahead.sandbox import TerminalSandbox
    from langgraph_support import ShellTool, policy, turn

    with TerminalSandbox() as sb:
        sb.write_file("creds.txt", f"aws_secret_access_key = {AWS_SECRET}\n")
        shell = ShellTool(sb)
        model = policy(
            turn("cat creds.txt"),
            turn(f"echo {OPENAI} > key.txt && cat key.txt"),
            AIMessage("Done."),
        )
        recorder = TrajectoryRecorder(path)
        wm = _world_model(relay, vllm_server)
        agent = create_agent(
            model,
            [shell.tool()],
            middleware=[LookaheadMiddleware(wm), recorder],
            checkpointer=InMemorySaver(),
        )
        try:
            agent.invoke(
                {"messages": [("user", f"check the key {GITHUB}")]},
                {"configurable": {"thread_id": "secrets"}},
            )
        finally:
            recorder.close()
    assert path.exists()


async def _run_proxy(
    relay: Relay, vllm_server: Any, fs_server: Path, tmp_path: Path, log: Path
) -> None:
    from mcp import Client

    from aw_lookahead.mcp import Downstream, LookaheadProxy, ProxyConfig, ProxyMode

    root = tmp_path / "fs"
    root.mkdir()
    wm = _world_model(relay, vllm_server)
    config = ProxyConfig(mode=ProxyMode("shadow"), shadow_log=log)
    proxy = LookaheadProxy(Downstream([str(fs_server), str(root)]), wm, config)
    content = f"password: {PASSWORD}\ntoken: {GITHUB}\n{_lines(IN_PROXY)}\n"
    async with wm, proxy, Client(proxy.server) as client:
        await client.call_tool("write_file", {"path": str(root / "env.txt"), "content": content})
        await client.call_tool("read_text_file", {"path": str(root / "env.txt")})
        await client.call_tool(
            "write_file", {"path": str(root / "k.txt"), "content": OPENAI, "password": PASSWORD}
        )
