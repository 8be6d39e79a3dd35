"""A real third-party client: the TypeScript SDK's ``Client`` (tests/node/mcp_ts_client.cjs).

It drives ``aw-lookahead mcp`` and ``aw-lookahead proxy`` over stdio and streamable
HTTP, validating structured output against each tool's output schema the way
that SDK does. The world model is the real server, except in the progress test,
where a deliberately slow OpenAI-compatible endpoint injects the fault "the
model takes longer than the client's request timeout".
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tests" / "node" / "mcp_ts_client.cjs"
AW = str(Path(sys.executable).with_name("aw-lookahead"))
META = "io.github.aw-lookahead/decision"


def run_ts(node_path: Path, scenario: dict[str, Any]) -> dict[str, Any]:
    node = shutil.which("node")
    assert node is not None
    env = {**os.environ, "NODE_PATH": str(node_path)}
    done = subprocess.run(
        [node, str(SCRIPT), json.dumps(scenario)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def stdio(args: list[str]) -> dict[str, Any]:
    return {"type": "stdio", "command": AW, "args": args, "env": dict(os.environ)}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def http_proxy(tmp_path: Path) -> Iterator[Any]:
    """Start ``aw-lookahead <args> --transport http`` on a free port; yields a starter."""
    procs: list[subprocess.Popen[bytes]] = []

    def start(args: list[str]) -> str:
        port = free_port()
        log = tmp_path / f"http-{port}.log"
        cmd = [AW, *args[:1], "--transport", "http", "--port", str(port), *args[1:]]
        with log.open("wb") as fh:
            proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT)
        procs.append(proc)
        deadline = time.monotonic() + 120
        while "serving http://" not in log.read_text(errors="replace"):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(log.read_text(errors="replace")[-3000:])
            time.sleep(0.05)
        return f"http://127.0.0.1:{port}/mcp"

    yield start
    for proc in procs:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture
def target(transport: str, http_proxy: Any) -> Any:
    """How the TS client reaches ``aw-lookahead <args>`` over the parametrized transport."""

    def make(args: list[str]) -> dict[str, Any]:
        return stdio(args) if transport == "stdio" else {"type": "http", "url": http_proxy(args)}

    return make


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An empty folder the filesystem server is rooted at."""
    path = tmp_path / "root"
    path.mkdir()
    return path


def text(result: dict[str, Any]) -> str:
    return "\n".join(c.get("text", "") for c in result["content"])


@pytest.mark.timeout(1800)  # seven real predictions: past 600 s on a busy 2-core machine
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_gate_after_five_reads_and_dryrun(
    transport: str, root: Path, mcp_ts_sdk: Path, mcp_fs_server: Path, vllm_server: Any, target: Any
) -> None:
    for i in range(3):
        (root / f"f{i}.txt").write_text(f"line {i}\n" * 20)
    model = ["--base-url", vllm_server.base_url, "--max-tokens", "64", "--timeout", "300"]
    reads = [
        {"tool": "list_directory", "args": {"path": str(root)}},
        *[{"tool": "read_text_file", "args": {"path": str(root / f"f{i}.txt")}} for i in range(3)],
        {"tool": "get_file_info", "args": {"path": str(root / "f0.txt")}},
    ]
    write = {"tool": "write_file", "args": {"path": str(root / "w.txt"), "content": "w"}}
    results = {}
    for mode in ("gate", "dryrun"):
        args = ["proxy", "--mode", mode, *model, "--", str(mcp_fs_server), str(root)]
        results[mode] = run_ts(mcp_ts_sdk, {"transport": target(args), "calls": [*reads, write]})
        if mode == "gate":
            gate_wrote = (root / "w.txt").exists()
            (root / "w.txt").unlink(missing_ok=True)
    gate = results["gate"]
    assert gate["serverInfo"]["version"]
    assert gate["capabilities"]["tools"]["listChanged"] is True  # the filesystem server's
    assert all(r["ok"] and not r["result"].get("isError") for r in gate["results"][:5])
    last = gate["results"][5]
    assert last["ok"], last
    decision = last["result"]["_meta"][META]
    assert decision["kind"] in {"execute", "veto"}, decision  # simulated, not context-vetoed
    assert 0 < decision["prompt_tokens"] <= 4096 - 64
    assert gate_wrote == (decision["kind"] == "execute") == (not last["result"].get("isError"))
    dry = results["dryrun"]
    assert all(r["ok"] for r in dry["results"]), dry["results"]  # structured output validated
    assert not (root / "w.txt").exists()  # dryrun never executes


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("answer", ["accept", "decline"])
def test_preview_with_elicitation(
    transport: str,
    answer: str,
    root: Path,
    mcp_ts_sdk: Path,
    mcp_fs_server: Path,
    vllm_server: Any,
    target: Any,
) -> None:
    args = ["proxy", "--mode", "preview", "--base-url", vllm_server.base_url]
    args += ["--max-tokens", "64", "--timeout", "300", "--", str(mcp_fs_server), str(root)]
    write = {"tool": "write_file", "args": {"path": str(root / "p.txt"), "content": "p"}}
    out = run_ts(mcp_ts_sdk, {"transport": target(args), "elicit": answer, "calls": [write]})
    schema = next(t for t in out["tools"] if t["name"] == "write_file")["inputSchema"]
    assert "_aw_confirm" in schema["properties"]
    [result] = out["results"]
    assert result["ok"], result
    assert len(out["elicited"]) == 1
    assert "Predicted result" in out["elicited"][0]
    assert (root / "p.txt").exists() == (answer == "accept")
    assert bool(result["result"].get("isError")) == (answer == "decline")


class _SlowModel(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint whose completions wait until /release is requested."""

    release = threading.Event()

    def log_message(self, *args: Any) -> None:
        pass

    def _json(self, obj: dict[str, Any]) -> None:
        body = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path.startswith("/release"):
            type(self).release.set()
            self._json({"released": True})
        else:
            self._json({"object": "list", "data": [{"id": "slow", "object": "model"}]})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        type(self).release.wait(timeout=300)
        answer = "<predicted_observation>ok</predicted_observation>"
        message = {"role": "assistant", "content": answer}
        self._json(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "slow",
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        )


@pytest.fixture
def slow_model() -> Iterator[str]:
    _SlowModel.release = threading.Event()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SlowModel)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    _SlowModel.release.set()
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_progress_keeps_a_short_request_timeout_alive(
    transport: str, mcp_ts_sdk: Path, slow_model: str, target: Any
) -> None:
    """A 5 s request timeout; the model answers only after the client saw 4 progress
    notifications (about 8 s): the call completes because each notification resets it."""
    args = ["mcp", "--base-url", f"{slow_model}/v1", "--timeout", "300"]
    call = {
        "tool": "lookahead",
        "args": {"candidates": ["ls", "pwd"], "domain": "terminal"},
        "timeoutMs": 5000,
        "release": {"url": f"{slow_model}/release", "after": 4},
    }
    out = run_ts(mcp_ts_sdk, {"transport": target(args), "calls": [call]})
    [result] = out["results"]
    assert result["ok"], result
    assert result["progress"] >= 4
    assert result["result"]["structuredContent"]["chosen_index"] is not None
