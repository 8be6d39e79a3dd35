"""A prediction cache file never answers for other weights served under the same name.

Against a real loopback HTTP server that answers ``/v1/models`` (its ``root``
changeable between sessions, as after a restart with another adapter) and chat
completions (counted).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from aw_lookahead.endpoint import ModelInfo
from aw_lookahead.errors import ServerUnreachableError
from aw_lookahead.lookahead import Lookahead, PredictionCache
from aw_lookahead.trajectory import Action, Trajectory
from aw_lookahead.worldmodel import FunctionWorldModel, OpenAIWorldModel

TRAJ = Trajectory(domain="terminal", task="tidy the repo")
ACTION = "touch notes.txt"


class _Served(BaseHTTPRequestHandler):
    """``/v1/models``: one model ``m`` with the server's ``root`` (left out when ``None``);
    chat: one fixed observation. Counts both."""

    def _send(self, data: dict[str, Any]) -> None:
        body = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.server.listings += 1  # type: ignore[attr-defined]
        card: dict[str, Any] = {"id": "m", "object": "model", "max_model_len": 4096}
        root = self.server.root  # type: ignore[attr-defined]
        if root is not None:
            card["root"] = root
        self._send({"object": "list", "data": [card]})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.chats += 1  # type: ignore[attr-defined]
        message = {
            "role": "assistant",
            "content": "<predicted_observation>done</predicted_observation>",
        }
        self._send(
            {
                "id": "c",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        )

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[Any]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Served)
    server.root, server.listings, server.chats = "/weights/a", 0, 0  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


async def _session(server: Any, path: Path, action: Action = ACTION) -> bool:
    """One process's life: a fresh world model and cache on ``path``; was ``action`` cached?"""
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    async with OpenAIWorldModel("m", base_url=url, timeout=10, retries=0) as wm:
        [decision] = await Lookahead(wm, cache=PredictionCache(path=path)).gate(TRAJ, [action])
    assert decision.prediction is not None
    return decision.cached


async def test_a_cache_file_does_not_answer_for_other_weights_under_the_same_name(
    server: Any, tmp_path: Path
) -> None:
    path = tmp_path / "preds.db"
    assert not await _session(server, path)
    assert await _session(server, path)  # same weights: shared across restarts
    server.root = "/weights/b"  # restarted with another adapter under the same name
    assert not await _session(server, path)
    server.root = "/weights/a"
    assert await _session(server, path)
    assert server.chats == 2


async def test_a_folder_rewritten_at_the_same_path_is_other_weights(
    server: Any, tmp_path: Path
) -> None:
    folder = tmp_path / "smollm2-135m-instruct-aw"
    folder.mkdir()
    weights = folder / "model.safetensors"
    weights.write_bytes(b"old")
    server.root = str(folder)
    path = tmp_path / "preds.db"
    assert not await _session(server, path)
    assert await _session(server, path)
    weights.write_bytes(b"merged again")  # serve --local with another adapter: same folder
    assert not await _session(server, path)
    assert server.chats == 2


async def test_weights_are_asked_once_per_world_model(server: Any, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    async with OpenAIWorldModel("m", base_url=url, timeout=10, retries=0) as wm:
        lk = Lookahead(wm, cache=PredictionCache(path=tmp_path / "preds.db"))
        for action in ("touch a", "touch b", "touch c"):
            await lk.gate(TRAJ, [action])
    assert server.listings == 1
    assert server.chats == 3


async def test_a_server_without_weights_keeps_the_plain_key_and_warns_once(
    server: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server.root = None  # not vLLM: /v1/models names no weights
    path = tmp_path / "preds.db"
    with caplog.at_level(logging.WARNING, logger="aw_lookahead"):
        assert not await _session(server, path)
        assert await _session(server, path)
    warned = [r for r in caplog.records if "does not say which weights" in r.getMessage()]
    assert len(warned) == 2  # once per session (cache object), not per step


class _Unreachable(FunctionWorldModel):
    """A served model whose server cannot say what it serves (it predicts all the same)."""

    has_server = True

    def __init__(self) -> None:
        super().__init__(lambda t, a: "ok", model_id="served")
        self.asked = 0

    async def resolve_model(self) -> str:
        self.asked += 1
        raise ServerUnreachableError("http://127.0.0.1:9/v1")


async def test_unknown_weights_keep_the_step_off_the_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "preds.db"
    wm = _Unreachable()
    lk = Lookahead(wm, cache=PredictionCache(path=path), threshold=0.5)
    with caplog.at_level(logging.WARNING, logger="aw_lookahead"):
        await lk.gate(TRAJ, [ACTION])
        [again] = await lk.gate(TRAJ, [ACTION])
    assert again.cached  # this process's memory still answers
    assert wm.calls == 1
    assert wm.asked == 2
    assert len(PredictionCache(path=path)) == 0  # nothing reached the file
    assert len([r for r in caplog.records if "could not learn" in r.getMessage()]) == 1


async def test_an_in_memory_cache_never_asks_for_the_weights() -> None:
    wm = _Unreachable()
    lk = Lookahead(wm, threshold=0.5)
    await lk.gate(TRAJ, [ACTION])
    [again] = await lk.gate(TRAJ, [ACTION])
    assert again.cached
    assert wm.asked == 0


def test_model_info_weights_name_root_parent_length_and_folder(tmp_path: Path) -> None:
    assert ModelInfo("m").weights() == ""
    lora = ModelInfo("m", root="/runs/sft/adapter", parent="base")
    assert lora.weights() != ModelInfo("m", root="/runs/sft/adapter", parent="other").weights()
    assert (
        lora.weights()
        != ModelInfo("m", root="/runs/sft/adapter", parent="base", max_model_len=8).weights()
    )
    (tmp_path / "adapter_model.safetensors").write_bytes(b"a")
    before = ModelInfo("m", root=str(tmp_path)).weights()
    assert before == ModelInfo("m", root=str(tmp_path)).weights()
    os.utime(tmp_path / "adapter_model.safetensors", ns=(0, 0))
    assert ModelInfo("m", root=str(tmp_path)).weights() != before
