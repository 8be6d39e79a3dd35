"""Shadow logs are training data: the real proxy's shadow log trains SmolLM2-135M for 2 steps.

All parts are real: the ``aw-lookahead proxy --mode shadow`` CLI over stdio,
the npm filesystem MCP server behind it, the vLLM world model, and a LoRA run
of the embedded base model on the CPU.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from aw_lookahead.lookahead.shadow import read_shadow_pairs
from aw_lookahead.training.classify import TurnClass

pytestmark = [
    pytest.mark.integration,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::UserWarning"),
]


def _record_through_the_proxy(fs_server: Path, root: Path, log: Path, vllm_server: Any) -> None:
    from mcp import Client, StdioServerParameters

    aw = str(Path(sys.executable).with_name("aw-lookahead"))
    cmd = [aw, "proxy", "--mode", "shadow", "--shadow-log", str(log)]
    cmd += ["--base-url", vllm_server.base_url, "--model", vllm_server.model]
    cmd += ["--api-key", vllm_server.api_key, "--max-tokens", "32", "--timeout", "600"]
    cmd += ["--", str(fs_server), str(root)]
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=dict(os.environ))

    async def session() -> None:
        async with Client(params, mode="legacy") as client:
            calls: list[tuple[str, dict[str, Any]]] = [
                ("write_file", {"path": str(root / "notes.txt"), "content": "alpha\nbeta\n"}),
                ("read_text_file", {"path": str(root / "notes.txt")}),
                ("list_directory", {"path": str(root)}),
            ]
            for name, args in calls:
                assert not (await client.call_tool(name, args)).is_error, name

    anyio.run(session)


def test_proxy_shadow_log_trains_two_steps(
    mcp_fs_server: Path, vllm_server: Any, embedded_model_path: Path, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    log = tmp_path / "shadow.jsonl"
    _record_through_the_proxy(mcp_fs_server, root, log, vllm_server)

    # A pair is written when both halves are in, so the file is in completion order.
    pairs = sorted(read_shadow_pairs(log), key=lambda p: p.started_at)
    assert [p.tool for p in pairs] == ["write_file", "read_text_file", "list_directory"]
    assert all(p.source == "mcp" for p in pairs)
    assert pairs[1].real == "alpha\nbeta\n" == pairs[1].sample.observation

    out = tmp_path / "run"
    keep_all = [a for cls in TurnClass for a in ("--keep", f"{cls.value}=1")]
    argv = ["train", "--model", str(embedded_model_path), "--data", str(log), "--out", str(out)]
    argv += ["--targets", "each", "--max-len", "1024", "--max-steps", "2", "--lora-r", "4"]
    argv += ["--lora-alpha", "8", "--no-progress", "--no-gradient-checkpointing", *keep_all]
    code = "import sys; from aw_lookahead.cli import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run(
        [sys.executable, "-c", code, *argv],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # One sample per shadowed call; one whose prompt cannot fit --max-len is dropped, as always.
    counts = re.search(r"samples (\d+),.* dropped (\d+)", done.stdout)
    assert counts is not None, done.stdout
    assert int(counts[1]) >= 1
    assert int(counts[1]) + int(counts[2]) == 3
    reported = re.search(r"step 2/2, loss (\S+) -> (\S+),", done.stdout)
    assert reported is not None, done.stdout
    first, last = float(reported[1]), float(reported[2])
    assert math.isfinite(first)
    assert math.isfinite(last)
    assert first > 0
    lines = (out / "metrics.jsonl").read_text().splitlines()
    losses = [json.loads(line)["loss"] for line in lines if line.strip()]
    assert len(losses) == 2
    assert all(math.isfinite(x) and x > 0 for x in losses)
    assert (out / "adapter" / "adapter_model.safetensors").is_file()
