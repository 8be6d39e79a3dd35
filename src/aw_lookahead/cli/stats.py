"""``aw-lookahead stats``: a vLLM server's serving metrics (prefix-cache hit rate, queue, TTFT).

Reads ``/metrics`` of the server behind ``--base-url`` (default
``$AW_LOOKAHEAD_BASE_URL``, else the client's default). Counters are the
server's lifetime totals; benchmarks diff two snapshots instead
(:meth:`aw_lookahead.serving.metrics.ServingMetrics.since`).
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "stats",
        help="show a vLLM server's prefix-cache hit rate, queue and TTFT",
        description="Read the Prometheus /metrics of a vLLM server and summarise them.",
    )
    p.add_argument("--base-url", help="OpenAI base URL (default: $AW_LOOKAHEAD_BASE_URL)")
    p.add_argument(
        "--api-key", help="key, if /metrics is protected (default: $AW_LOOKAHEAD_API_KEY)"
    )
    p.add_argument("--model", help="only this model_name label (default: all models summed)")
    p.add_argument("--timeout", type=float, default=10.0)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _fmt(value: float | None, pattern: str) -> str:
    return "n/a" if value is None else pattern.format(value)


def run(args: argparse.Namespace) -> int:
    from aw_lookahead.endpoint import DEFAULT_BASE_URL, ENV_API_KEY, ENV_BASE_URL
    from aw_lookahead.serving.metrics import fetch_metrics_sync

    base_url = args.base_url or os.environ.get(ENV_BASE_URL) or DEFAULT_BASE_URL
    api_key = args.api_key or os.environ.get(ENV_API_KEY)
    m = fetch_metrics_sync(base_url, api_key=api_key, model=args.model, timeout=args.timeout)
    if args.json:
        print(json.dumps({"base_url": base_url, **m.as_dict()}))
        return 0
    rows = [
        ("prefix-cache hit rate", _fmt(m.prefix_cache_hit_rate, "{:.1%}")),
        (
            "prefix-cache hits / queries (tokens)",
            f"{_fmt(m.prefix_cache_hits, '{:.0f}')} / {_fmt(m.prefix_cache_queries, '{:.0f}')}",
        ),
        (
            "requests running / waiting",
            f"{_fmt(m.requests_running, '{:.0f}')} / {_fmt(m.requests_waiting, '{:.0f}')}",
        ),
        ("KV cache usage", _fmt(m.kv_cache_usage, "{:.1%}")),
        ("mean time to first token", _fmt(m.mean_ttft_s, "{:.3f} s")),
        (
            "prompt / generated tokens",
            f"{_fmt(m.prompt_tokens, '{:.0f}')} / {_fmt(m.generation_tokens, '{:.0f}')}",
        ),
    ]
    width = max(len(k) for k, _ in rows)
    print(f"vLLM metrics at {base_url}")
    for key, value in rows:
        print(f"  {key:<{width}}  {value}")
    return 0
