"""vLLM /metrics parsing, and the prefix-cache hit rate of a real predict_many run."""

from __future__ import annotations

import json
import uuid

import pytest

from aw_lookahead.cli import main
from aw_lookahead.errors import ServerUnreachableError
from aw_lookahead.serving.local import find_free_port
from aw_lookahead.serving.metrics import (
    ServingMetrics,
    fetch_metrics,
    metrics_url,
    parse_metrics,
)
from aw_lookahead.trajectory import Trajectory, Turn
from aw_lookahead.worldmodel import OpenAIWorldModel

# The shape vLLM 0.32 (CPU build) exposes, trimmed; a second model and engine
# check that label sets are summed or filtered.
EXPOSITION = """\
# HELP vllm:prefix_cache_queries Prefix cache queries, in terms of number of queried tokens.
# TYPE vllm:prefix_cache_queries counter
vllm:prefix_cache_queries_total{engine="0",model_name="a"} 1000.0
vllm:prefix_cache_queries_created{engine="0",model_name="a"} 1.79e+09
vllm:prefix_cache_hits_total{engine="0",model_name="a"} 600.0
vllm:prefix_cache_queries_total{engine="1",model_name="b"} 1000.0
vllm:prefix_cache_hits_total{engine="1",model_name="b"} 200.0
vllm:num_requests_running{engine="0",model_name="a"} 3.0
vllm:num_requests_waiting{engine="0",model_name="a"} 1.0
vllm:kv_cache_usage_perc{engine="0",model_name="a"} 0.25
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.1",model_name="a"} 1.0
vllm:time_to_first_token_seconds_count{engine="0",model_name="a"} 4.0
vllm:time_to_first_token_seconds_sum{engine="0",model_name="a"} 2.0
process_cpu_seconds_total 12.5
"""


def test_parse_sums_label_sets_and_filters_by_model() -> None:
    both = parse_metrics(EXPOSITION)
    assert both.prefix_cache_queries == 2000.0
    assert both.prefix_cache_hits == 800.0
    assert both.prefix_cache_hit_rate == pytest.approx(0.4)
    only_a = parse_metrics(EXPOSITION, model="a")
    assert only_a.prefix_cache_hit_rate == pytest.approx(0.6)
    assert (only_a.requests_running, only_a.requests_waiting) == (3.0, 1.0)
    assert only_a.kv_cache_usage == 0.25
    assert only_a.mean_ttft_s == pytest.approx(0.5)


def test_names_without_total_suffix_are_read_too() -> None:
    text = "vllm:prefix_cache_queries 10\nvllm:prefix_cache_hits 4\n"
    assert parse_metrics(text).prefix_cache_hit_rate == pytest.approx(0.4)


def test_missing_metrics_stay_none() -> None:
    m = parse_metrics("# nothing from vLLM here\nup 1\n")
    assert m == ServingMetrics()
    assert m.prefix_cache_hit_rate is None
    assert m.mean_ttft_s is None


def test_since_diffs_counters_and_keeps_gauges() -> None:
    before = ServingMetrics(prefix_cache_queries=100, prefix_cache_hits=10, requests_running=5)
    after = ServingMetrics(prefix_cache_queries=300, prefix_cache_hits=160, requests_running=1)
    run = after.since(before)
    assert (run.prefix_cache_queries, run.prefix_cache_hits) == (200, 150)
    assert run.prefix_cache_hit_rate == pytest.approx(0.75)
    assert run.requests_running == 1
    restarted = ServingMetrics(prefix_cache_queries=50, prefix_cache_hits=5).since(before)
    assert restarted.prefix_cache_queries == 50


def test_metrics_url() -> None:
    assert metrics_url("http://h:1/v1/") == "http://h:1/metrics"
    assert metrics_url("http://h:1") == "http://h:1/metrics"


async def test_unreachable_server_is_a_clear_error() -> None:
    url = f"http://127.0.0.1:{find_free_port()}/v1"
    with pytest.raises(ServerUnreachableError, match="aw-lookahead serve --local"):
        await fetch_metrics(url, timeout=2.0)


def shared_history(turns: int = 6) -> Trajectory:
    """A terminal history of ~600 tokens that no other test sends (a fresh nonce first)."""
    nonce = uuid.uuid4().hex
    listing = "\n".join(f"-rw-r--r-- 1 dev dev {100 + i * 37} notes_{i}.txt" for i in range(12))
    return Trajectory(
        domain="terminal",
        task=f"Tidy the notes folder (run {nonce}).",
        turns=[
            Turn(action=[{"keystrokes": f"ls -l notes/part{i}\n", "duration": 0.5}],
                 observation=f"$ ls -l notes/part{i}\n{listing}\n$ ")
            for i in range(turns)
        ],
    )  # fmt: skip


async def test_stats_shows_prefix_cache_hits_after_predict_many(
    vllm_server, capsys: pytest.CaptureFixture[str]
) -> None:
    before = await fetch_metrics(vllm_server.base_url, model=vllm_server.model)
    actions = [f"cat notes/notes_{i}.txt" for i in range(4)]
    async with OpenAIWorldModel(
        vllm_server.model,
        base_url=vllm_server.base_url,
        api_key=vllm_server.api_key,
        max_tokens=8,
        temperature=0.0,
        top_k=None,
        timeout=600,
    ) as wm:  # fmt: skip  (a busy machine may take minutes: not the point)
        trajectory = shared_history()
        await wm.predict_many(trajectory, actions[:1])  # fills the cache with the history
        predictions = await wm.predict_many(trajectory, actions)
    after = await fetch_metrics(vllm_server.base_url, model=vllm_server.model)
    run = after.since(before)
    assert run.prefix_cache_hits
    assert run.prefix_cache_hits > 0
    assert run.prefix_cache_hit_rate
    assert run.prefix_cache_hit_rate > 0
    assert all((p.usage.cached_tokens or 0) > 0 for p in predictions)

    assert main(["stats", "--base-url", vllm_server.base_url, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["prefix_cache_hit_rate"] > 0
    assert main(["stats", "--base-url", vllm_server.base_url]) == 0
    assert "prefix-cache hit rate" in capsys.readouterr().out


def test_gpu_serving_bench_small_runs_on_the_cpu_server(vllm_server, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The GPU benchmark stays working: a reduced --small run prints its table."""
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "bench" / "gpu_serving.py"
    out = tmp_path / "cells.json"
    done = subprocess.run(
        [sys.executable, str(script), "--small", "--base-url", vllm_server.base_url,
         "--model", vllm_server.model, "--api-key", vllm_server.api_key,
         "--k", "1,2", "--history", "1536", "--thinking", "off", "--steps", "1",
         "--json", str(out)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "| history target tok | prompt tok |" in done.stdout
    cells = json.loads(out.read_text())["cells"]
    assert [c["k"] for c in cells] == [1, 2]
    assert cells[1]["ratio_vs_k1"] > 0
    assert cells[1]["hit_rate"] > 0
