"""Embedded model fidelity, raw base vs shipped adapter, in one run on held-out test families.

    python bench/embedded_fidelity.py --terminal DATA_DIR [--mcp DATA_DIR] [--limit 100]
        [--mode merged|lora] [--adapter DIR] [--max-tokens 192] [--concurrency 1] [--json]
    python bench/embedded_fidelity.py --terminal DIR --base-url URL --base-model NAME \\
        --adapter-model NAME          # reuse a server that already serves both

A dataset folder is what ``aw_lookahead.datagen.write_split`` writes; only its
``test.jsonl`` (families never trained on) is read, or ``validation.jsonl``
with ``--split validation`` (to choose between checkpoints; give
``--prompt-profile`` when a candidate ``--adapter`` was trained on another
profile than the shipped one). Without ``--base-url`` the
bench serves the models itself, one run for both: by default (``--mode
merged``) a CPU vLLM server for the raw base, then one for the merged model
that ``serve --local`` runs (each stopped after its turn, so memory holds one);
``--mode lora`` starts one server with the adapter as a LoRA module beside the
base (``--lora-modules``). Quality is the same up to bf16 rounding, but on the
CPU build an unmerged LoRA costs several times the latency (measured: 11.5 s
vs 3.3 s median on 24 short samples), so latency goals are read from
``merged``.

Per domain and model it reports:

* ``rule_pass``: share of predictions the rule verifier accepts
  (``aw_lookahead.evaluation.rules.verifier.verify_sample``);
* ``masked_exact`` and ``line_f1``: the verifier's partial scores, averaged;
* ``outcome_agreement``: the predicted observation and the real one agree on
  failure vs success, where failure means a FAILURE signal of the lookahead
  feasibility rules (``aw_lookahead.lookahead.rules.rule_signals``: shell
  errors, non-zero exits, tracebacks, failing tests, MCP ``isError``, ...);
  also split into failures caught and successes kept;
* ``valid_format`` (MCP): share whose format check passes (JSON matching the
  tool's schema, or plain text where the truth is text);
* ``median_latency_s``: per prediction, as the client saw it (sequential with
  ``--concurrency 1``, the default, so it is the latency one lookahead pays);
* the median latency of a terminal history of about ``--history-tokens``
  prompt tokens (default 1,500), built from test trajectories, 3 runs.

Greedy decoding (temperature 0), so a rerun gives the same predictions.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aw_lookahead.agentworldbench import load_turn_samples
from aw_lookahead.errors import WorldModelError
from aw_lookahead.evaluation.rules.verifier import verify_sample
from aw_lookahead.lookahead.rules import rule_signals
from aw_lookahead.lookahead.types import Outcome
from aw_lookahead.prompts import profile_prompts
from aw_lookahead.trajectory import Action, Domain, Trajectory, TurnSample
from aw_lookahead.worldmodel import OpenAIWorldModel

DOMAINS = ("terminal", "mcp")


def failed(trajectory: Trajectory, action: Action, observation: str) -> bool:
    """True when the lookahead feasibility rules read a failure in ``observation``."""
    return any(s.outcome is Outcome.FAILURE for s in rule_signals(trajectory, action, observation))


@dataclass
class Scores:
    """Accumulated scores of one model on one domain."""

    n: int = 0
    errors: int = 0
    rule_pass: int = 0
    masked_exact: float = 0.0
    line_f1: float = 0.0
    format_ok: int = 0
    agree: int = 0
    real_failures: int = 0
    failures_caught: int = 0
    real_successes: int = 0
    successes_kept: int = 0
    latencies: list[float] = field(default_factory=list)

    def add(self, sample: TurnSample, observation: str, latency_s: float) -> None:
        rule = verify_sample(sample, observation)
        self.n += 1
        self.rule_pass += rule.verdict
        self.masked_exact += rule.masked_exact
        self.line_f1 += rule.line_f1
        self.format_ok += int(rule.format_ok)
        real = failed(sample.history, sample.action, sample.observation)
        predicted = failed(sample.history, sample.action, observation)
        self.agree += int(real == predicted)
        if real:
            self.real_failures += 1
            self.failures_caught += int(predicted)
        else:
            self.real_successes += 1
            self.successes_kept += int(not predicted)
        self.latencies.append(latency_s)

    def summary(self) -> dict[str, Any]:
        def share(part: float, whole: int) -> float | None:
            return round(part / whole, 4) if whole else None

        return {
            "samples": self.n,
            "errors": self.errors,
            "rule_pass": share(self.rule_pass, self.n),
            "masked_exact": share(self.masked_exact, self.n),
            "line_f1": share(self.line_f1, self.n),
            "outcome_agreement": share(self.agree, self.n),
            "failures_caught": share(self.failures_caught, self.real_failures),
            "successes_kept": share(self.successes_kept, self.real_successes),
            "real_failures": self.real_failures,
            "valid_format": share(self.format_ok, self.n),
            "median_latency_s": (
                round(statistics.median(self.latencies), 3) if self.latencies else None
            ),
        }


def split_samples(folder: Path, limit: int | None, split: str) -> list[TurnSample]:
    """Turn samples of ``folder/<split>.jsonl`` (first ``limit``)."""
    path = folder / f"{split}.jsonl"
    if not path.is_file():
        raise SystemExit(
            f"embedded_fidelity: {path} does not exist; pass a folder written by "
            "`aw-lookahead data terminal|mcp` (train/validation/test.jsonl)"
        )
    out: list[TurnSample] = []
    for sample in load_turn_samples(path):
        out.append(sample)
        if limit is not None and len(out) >= limit:
            break
    return out


async def score(wm: OpenAIWorldModel, samples: Sequence[TurnSample], concurrency: int) -> Scores:
    scores = Scores()
    gate = asyncio.Semaphore(concurrency)

    async def one(sample: TurnSample) -> None:
        async with gate:
            t0 = time.perf_counter()
            try:
                pred = await wm.predict(sample.history, sample.action)
            except WorldModelError as exc:
                print(f"  {wm.model}: {sample.sample_id}: {exc}", file=sys.stderr)
                scores.errors += 1
                return
            scores.add(sample, pred.observation, time.perf_counter() - t0)

    await asyncio.gather(*(one(s) for s in samples))
    return scores


def long_history(
    samples: Sequence[TurnSample], chars: int, offset: int = 0
) -> tuple[Trajectory, Action]:
    """A terminal history of about ``chars`` characters from the samples' real turns.

    Distinct trajectories are concatenated (cycling when the set is small,
    starting at the ``offset``-th), so the prompt is real recorded terminal
    text, only longer; different offsets give different prompts from the
    first turn on, so the server's prefix cache cannot serve one from another.
    """
    distinct: dict[str, Trajectory] = {}
    for s in samples:
        t = s.trajectory
        distinct.setdefault(f"{t.task}|{json.dumps(t.turns[0].action)}", t)
    turns: list[Any] = []
    size = 0
    order = list(distinct.values())
    order = order[offset % len(order) :] + order[: offset % len(order)]
    for t in itertools.islice(itertools.cycle(order), 10_000):
        for turn in t.turns:
            turns.append(turn)
            size += len(json.dumps(turn.action)) + len(turn.observation)
        if size >= chars:
            break
    *history, last = turns
    traj = Trajectory(domain=Domain.TERMINAL, task="Work in the terminal.", turns=history)
    return traj, last.action


async def history_latency(
    wm: OpenAIWorldModel, samples: Sequence[TurnSample], target_tokens: int
) -> dict[str, Any]:
    """Median latency of 3 cold histories of about ``target_tokens`` prompt tokens, and of
    the agent's next step on each (``loop_latency_s``).

    The length is calibrated on one history, then three others (different
    from their first turn, so nothing is served from the prefix cache) are
    timed: first without their newest turn's observation (cold), then whole,
    with the next action, as an agent's loop sends it right after (its prefix
    is the cold check's, which the server may have cached).
    """
    chars = target_tokens * 3
    for _ in range(4):
        traj, action = long_history(samples, chars)
        pred = await wm.predict(traj, action)
        tokens = pred.usage.prompt_tokens
        if tokens == 0 or abs(tokens - target_tokens) <= target_tokens * 0.1:
            break
        chars = int(chars * target_tokens / tokens)
    times, sizes, loop_times, cached = [], [], [], []
    for offset in (1, 2, 3):
        traj, action = long_history(samples, chars, offset)
        *before, newest = traj.turns
        t0 = time.perf_counter()
        pred = await wm.predict(traj.model_copy(update={"turns": before}), newest.action)
        times.append(time.perf_counter() - t0)
        sizes.append(pred.usage.prompt_tokens)
        t0 = time.perf_counter()
        pred = await wm.predict(traj, action)
        loop_times.append(time.perf_counter() - t0)
        cached.append(pred.usage.cached_tokens or 0)
    return {
        "prompt_tokens": int(statistics.median(sizes)),
        "history_turns": len(traj.turns),
        "median_latency_s": round(statistics.median(times), 3),
        "loop_latency_s": round(statistics.median(loop_times), 3),
        "loop_cached_tokens": int(statistics.median(cached)),
    }


async def run_model(
    args: argparse.Namespace,
    label: str,
    model: str,
    base_url: str,
    samples: dict[str, list[TurnSample]],
    result: dict[str, Any],
) -> None:
    """Score one served model on every domain, plus the long-history latency."""
    result["models"][label] = {"name": model, "base_url": base_url}
    wm = OpenAIWorldModel(
        model,
        base_url=base_url,
        max_tokens=args.max_tokens,
        temperature=0.0,
        top_k=None,
        timeout=600.0,
        max_concurrency=args.concurrency,
        prompts=None if args.prompt_profile == "auto" else profile_prompts(args.prompt_profile),
    )
    async with wm:
        for domain, items in samples.items():
            print(f"{label}: {len(items)} {domain} samples ...", file=sys.stderr, flush=True)
            scores = await score(wm, items, args.concurrency)
            result["domains"].setdefault(domain, {})[label] = scores.summary()
        if "terminal" in samples and args.history_tokens > 0:
            result.setdefault("long_history", {})[label] = await history_latency(
                wm, samples["terminal"], args.history_tokens
            )


def print_table(result: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    keys = ("samples", "rule_pass", "masked_exact", "line_f1", "outcome_agreement",
            "failures_caught", "successes_kept", "valid_format", "median_latency_s")  # fmt: skip
    table = Table(title="embedded model fidelity on held-out test families")
    table.add_column("domain")
    table.add_column("metric")
    table.add_column("base", justify="right")
    table.add_column("adapter", justify="right")
    for domain, models in result["domains"].items():
        for key in keys:
            if key == "valid_format" and domain != "mcp":
                continue
            cells = []
            for label in ("base", "adapter"):
                value = models.get(label, {}).get(key)
                pct = key not in ("samples", "median_latency_s")
                cells.append("n/a" if value is None else f"{value:.1%}" if pct else f"{value:g}")
            table.add_row(domain, key, *cells)
    for label, info in (result.get("long_history") or {}).items():
        table.add_row(
            "terminal",
            f"latency @ {info['prompt_tokens']} prompt tokens ({label})",
            *(f"{info['median_latency_s']:g} s" if label == col else "" for col in
              ("base", "adapter")),
        )  # fmt: skip
    Console().print(table)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--terminal", type=Path, help="terminal dataset folder (reads test.jsonl)")
    p.add_argument("--mcp", type=Path, help="MCP dataset folder (reads test.jsonl)")
    p.add_argument("--limit", type=int, default=100, help="samples per domain")
    p.add_argument("--adapter", type=Path, help="adapter folder (default: the shipped one)")
    p.add_argument(
        "--mode",
        choices=("merged", "lora"),
        default="merged",
        help="merged: the base, then the merged model (what `serve --local` runs), one server "
        "after the other; lora: one server, the adapter unmerged beside the base (LoRA "
        "latency on the CPU build is several times the merged model's)",
    )
    p.add_argument("--base-url", help="reuse a running server instead of starting one")
    p.add_argument("--base-model", help="served name of the raw base (with --base-url)")
    p.add_argument("--adapter-model", help="served name of the adapter (with --base-url)")
    p.add_argument(
        "--split",
        choices=("test", "validation"),
        default="test",
        help="test: families never trained on (the model card's numbers); validation: the "
        "families that choose between checkpoints (default %(default)s)",
    )
    p.add_argument(
        "--prompt-profile",
        choices=("auto", "standard", "short"),
        default="auto",
        help="system prompts sent (auto: the shipped adapter's profile); give the profile a "
        "candidate --adapter was trained with",
    )
    p.add_argument(
        "--no-base",
        action="store_true",
        help="score only the adapter (merged mode, or the --adapter-model of --base-url)",
    )
    p.add_argument("--max-tokens", type=int, default=192)
    p.add_argument("--concurrency", type=int, default=1)
    p.add_argument("--history-tokens", type=int, default=1500, help="0 skips the long history")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    args = p.parse_args(argv)
    if args.terminal is None and args.mcp is None:
        p.error("pass --terminal DIR and/or --mcp DIR")

    from aw_lookahead.embedded import (
        EMBEDDED_ADAPTER_NAME,
        EMBEDDED_MODEL_NAME,
        embedded_adapter,
        prepare_embedded_model,
    )
    from aw_lookahead.serving import LocalServer

    data = {d: getattr(args, d) for d in DOMAINS if getattr(args, d) is not None}
    samples = {d: split_samples(folder, args.limit, args.split) for d, folder in data.items()}
    result: dict[str, Any] = {
        "split": args.split,
        "prompt_profile": args.prompt_profile,
        "mode": "server" if args.base_url else args.mode,
        "limit": args.limit,
        "max_tokens": args.max_tokens,
        "concurrency": args.concurrency,
        "models": {},
        "domains": {},
    }
    if args.base_url:
        served = [("adapter", args.adapter_model)]
        if not args.no_base:
            served.insert(0, ("base", args.base_model))
        if not all(name for _, name in served):
            p.error("--base-url needs --adapter-model, and --base-model unless --no-base")
        for label, name in served:
            asyncio.run(run_model(args, label, name, args.base_url, samples, result))
    elif args.mode == "lora":
        adapter = embedded_adapter(args.adapter)
        result["adapter_placeholder"] = adapter.placeholder
        rank = json.loads((adapter.path / "adapter_config.json").read_text())["r"]
        print("starting one CPU vLLM server: base + adapter as LoRA ...", file=sys.stderr)
        with LocalServer(
            prepare_embedded_model(base_only=True),
            served_name=EMBEDDED_MODEL_NAME,
            lora_modules={EMBEDDED_ADAPTER_NAME: adapter.path},
            max_lora_rank=max(16, int(rank)),
            max_loras=1,
        ) as server:
            for label, name in (("base", EMBEDDED_MODEL_NAME), ("adapter", EMBEDDED_ADAPTER_NAME)):
                asyncio.run(run_model(args, label, name, server.base_url, samples, result))
    else:
        adapter = embedded_adapter(args.adapter)
        result["adapter_placeholder"] = adapter.placeholder
        for label in ("adapter",) if args.no_base else ("base", "adapter"):
            folder = (
                prepare_embedded_model(base_only=True)
                if label == "base"
                else prepare_embedded_model(adapter=args.adapter)
            )
            print(f"starting a CPU vLLM server for {folder.name} ...", file=sys.stderr)
            with LocalServer(folder, served_name=EMBEDDED_MODEL_NAME) as server:
                asyncio.run(
                    run_model(args, label, EMBEDDED_MODEL_NAME, server.base_url, samples, result)
                )
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_table(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
