"""Memory of the embedded vLLM server: the CPU build's defaults against the embedded options.

Usage (CPU, the embedded model; each variant starts and stops its own server)::

    .venv/bin/python bench/server_memory.py
    .venv/bin/python bench/server_memory.py --json

For each variant the server is started, sent one warm-up and then six K=4
requests on ~1,500-token prompts (each with a different first word, so no
prompt is served from the prefix cache; the KV cache and the sampler are in
use), and the proportional set size (PSS: shared pages counted once across the
server's processes) of its whole process group is read from
``/proc/*/smaps_rollup``, in MiB and in GB (10^9 bytes, the unit of the 1.5 GB
goal), right after the requests and again after 15 s idle (the embedded server
trims its heap every 10 s, so a reading right after requests depends on when
the last trim ran). Beside it: the median time of the six requests and the CPU seconds
(user and system) and minor page faults the server's processes spent per
request, which move less with the machine's load than wall time.
*baseline* is ``LocalServer``'s plain defaults (the CPU build then reserves
4 GiB of KV cache and runs API server, engine and worker as separate
processes); *embedded* is :func:`~aw_lookahead.serving.embedded_server_options`,
what ``serve --local --runtime vllm`` and the tests' vLLM server use; *spin-wait* is the
same without ``OMP_WAIT_POLICY=PASSIVE`` (OpenMP's threads then spin while
they wait: the embedded options before 2026-12-04), and *fixed-malloc* the
same with fixed 128 KiB malloc trim and mmap thresholds (less memory, more
page faults per request), and *no-trim* the same without the periodic
``malloc_trim`` (the embedded options before 2026-12-05), and *two-process* the same with
vLLM's engine core in its own process instead of a thread of the API server (the embedded
options before 2026-12-06).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def _members(pgid: int) -> Iterator[tuple[str, list[str]]]:
    """Each live process of group ``pgid``: its pid and the fields of its ``stat`` after the
    command name (state first)."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path("/proc", name, "stat").read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if stat[2] == str(pgid):
            yield name, stat


def group_memory(pgid: int) -> tuple[int, int, int]:
    """(processes, PSS MiB, RSS MiB) of process group ``pgid``."""
    procs = pss = rss = 0
    for name, _ in _members(pgid):
        try:
            fields = {}
            for line in Path("/proc", name, "smaps_rollup").read_text().splitlines()[1:]:
                key, _, rest = line.partition(":")
                parts = rest.split()
                if parts and parts[0].isdigit():
                    fields[key] = int(parts[0])
        except OSError:
            continue
        procs += 1
        pss += fields.get("Pss", 0)
        rss += fields.get("Rss", 0)
    return procs, pss // 1024, rss // 1024


_REQUESTS = 6
_IDLE_S = 15.0
"""Seconds idle before the second reading: longer than the embedded heap-trim period."""


def _group_cpu(pgid: int) -> tuple[float, float, int]:
    """(user s, system s, minor faults) of process group ``pgid``'s live processes."""
    tick = os.sysconf("SC_CLK_TCK")
    stats = [stat for _, stat in _members(pgid)]
    user = sum(int(stat[11]) for stat in stats) / tick
    system = sum(int(stat[12]) for stat in stats) / tick
    return user, system, sum(int(stat[7]) for stat in stats)


def _measure(folder: Path, options: dict[str, Any]) -> dict[str, Any]:
    import httpx

    from aw_lookahead.embedded import EMBEDDED_MODEL_NAME
    from aw_lookahead.serving import LocalServer, ready_timeout

    server = LocalServer(folder, served_name=EMBEDDED_MODEL_NAME, **options)
    began = time.perf_counter()
    with server:
        ready_s = time.perf_counter() - began
        url = f"{server.base_url}/chat/completions"
        assert server.pid is not None

        def ask(first: str) -> float:
            body = {
                "model": EMBEDDED_MODEL_NAME,
                "messages": [{"role": "user", "content": first + " word" * 1500}],
                "max_tokens": 16,
                "n": 4,
            }
            sent = time.perf_counter()
            httpx.post(url, json=body, timeout=ready_timeout(600)).raise_for_status()
            return time.perf_counter() - sent

        ask("warm")
        before = _group_cpu(server.pid)
        latencies = [ask(f"run{i}") for i in range(_REQUESTS)]
        after = _group_cpu(server.pid)
        procs, pss, rss = group_memory(server.pid)
        time.sleep(_IDLE_S)
        idle_pss = group_memory(server.pid)[1]
    return {
        "processes": procs,
        "pss_mib": pss,
        "idle_pss_mib": idle_pss,
        "pss_gb": round(pss * 2**20 / 1e9, 3),
        "rss_mib": rss,
        "ready_s": round(ready_s, 1),
        "median_request_s": round(statistics.median(latencies), 2),
        "user_s_per_request": round((after[0] - before[0]) / _REQUESTS, 2),
        "system_s_per_request": round((after[1] - before[1]) / _REQUESTS, 2),
        "minor_faults_per_request": (after[2] - before[2]) // _REQUESTS,
    }


_FIXED_MALLOC = {"MALLOC_TRIM_THRESHOLD_": "131072", "MALLOC_MMAP_THRESHOLD_": "131072"}


def _without(env: dict[str, str], name: str) -> dict[str, str]:
    return {k: v for k, v in env.items() if k != name}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--only",
        action="append",
        metavar="VARIANT",
        help="measure only this variant (repeatable; default: all, in the order below)",
    )
    args = p.parse_args(argv)

    from aw_lookahead.embedded import prepare_embedded_model
    from aw_lookahead.serving import embedded_server_options
    from aw_lookahead.serving._inproc_engine import ENABLE_ENV
    from aw_lookahead.serving._malloc_trim import PERIOD_ENV

    folder = prepare_embedded_model()
    embedded = embedded_server_options(folder)
    variants = {
        "baseline": {"max_model_len": 4096},
        "spin-wait": {**embedded, "env": _without(embedded["env"], "OMP_WAIT_POLICY")},
        "fixed-malloc": {**embedded, "env": {**embedded["env"], **_FIXED_MALLOC}},
        "no-trim": {**embedded, "env": _without(embedded["env"], PERIOD_ENV)},
        "two-process": {**embedded, "env": _without(embedded["env"], ENABLE_ENV)},
        "embedded": embedded,
    }
    unknown = sorted(set(args.only or ()) - set(variants))
    if unknown:
        p.error(f"unknown variant(s) {', '.join(unknown)}; choose from {', '.join(variants)}")
    results = {}
    for name, options in variants.items():
        if args.only and name not in args.only:
            continue
        results[name] = _measure(folder, options)
        one, five, _ = os.getloadavg()
        results[name]["load"] = f"{one:.1f}/{five:.1f}"
        if not args.json:
            r = results[name]
            print(
                f"{name:<14} {r['processes']} processes, PSS {r['pss_mib']} MiB "
                f"({r['pss_mib'] / 1024:.2f} GiB, {r['pss_gb']:.2f} GB; "
                f"{r['idle_pss_mib']} MiB after {_IDLE_S:.0f} s idle), RSS sum {r['rss_mib']} "
                f"MiB, ready in {r['ready_s']} s, median K=4 request {r['median_request_s']} s, "
                f"per request {r['user_s_per_request']} s user + "
                f"{r['system_s_per_request']} s system CPU, "
                f"{r['minor_faults_per_request']} minor faults (load {r['load']})",
                flush=True,
            )
    if args.json:
        json.dump(results, sys.stdout, indent=2)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
