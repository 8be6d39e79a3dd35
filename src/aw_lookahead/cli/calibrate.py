"""``aw-lookahead eval calibrate``: fit a model's veto threshold for a false-veto budget."""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
from typing import Any

from aw_lookahead._progress import line_progress
from aw_lookahead.errors import UsageError

from ._common import add_prompts_option, add_server_options, output_file, world_model_from_args

DEFAULT_SAMPLES = 4
DEFAULT_TEMPERATURE = 1.0
DEFAULT_MAX_TOKENS = 64


def register_calibrate(sub: Any) -> None:
    """Add ``calibrate`` to the ``eval`` verbs."""
    p = sub.add_parser(
        "calibrate",
        help="fit the gate's veto threshold for a false-veto budget on held-out actions",
        description="Run a world model on actions whose real outcome is known (trajectories "
        "in our JSONL schema, e.g. a validation split), estimate p_failure for each as the "
        "gate does, and write a calibration file (model, threshold, budget, the catch-rate "
        "vs false-veto-rate curve) with a reliability diagram PNG beside it. Lookahead "
        "picks the file up for that model.",
    )
    p.add_argument(
        "--data", required=True, action="append", help="trajectory JSONL file (repeatable)"
    )
    p.add_argument(
        "--budget",
        type=float,
        default=0.05,
        help="largest share of good actions the gate may veto (default %(default)s)",
    )
    p.add_argument(
        "--out",
        default=None,
        help="calibration file (default: the user's calibration folder, where Lookahead "
        "looks it up: ~/.cache/aw-lookahead/calibration/<model>.json)",
    )
    add_server_options(p)
    add_prompts_option(p)
    p.add_argument(
        "--estimator",
        choices=("logprobs", "samples"),
        default="logprobs",
        help="how p_failure is read: logprobs (default): one greedy prediction and the "
        "probability mass on tokens that start a failure where the output begins, "
        "repeatable; samples: the share of --samples predictions that fail (at "
        "--temperature; seeded only with --seed, which "
        "vLLM's CPU build does not survive)",
    )
    p.add_argument(
        "--samples",
        type=int,
        default=DEFAULT_SAMPLES,
        help="predictions per action with --estimator samples (default %(default)s)",
    )
    p.add_argument(
        "--temperature",
        type=float,
        default=None,
        help=f"sampling temperature (default 0 for logprobs, {DEFAULT_TEMPERATURE} for samples)",
    )
    p.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS)
    p.add_argument("--seed", type=int, default=None, help="sampling seed (default: none)")
    p.add_argument(
        "--sample-seed", type=int, default=0, help="which actions --limit picks (default 0)"
    )
    p.add_argument("--limit", type=int, default=None, help="a seeded spread of N actions")
    p.add_argument("--concurrency", type=int, default=4, help="actions in flight")
    p.add_argument(
        "--model-name",
        default=None,
        help="the model name the file is for (default: the served name; for a LoRA "
        "served beside its base, the name the gate will use)",
    )
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=calibrate_main, timeout=300.0)


def _command(args: argparse.Namespace) -> str:
    parts = ["aw-lookahead", "eval", "calibrate"]
    for path in args.data:
        parts += ["--data", path]
    parts += ["--budget", f"{args.budget:g}", "--estimator", args.estimator]
    if args.estimator == "samples":
        parts += ["--samples", str(args.samples)]
    if args.temperature is not None:
        parts += ["--temperature", f"{args.temperature:g}"]
    parts += ["--max-tokens", str(args.max_tokens)]
    if args.seed is not None:
        parts += ["--seed", str(args.seed)]
    if args.limit is not None:
        parts += ["--limit", str(args.limit), "--sample-seed", str(args.sample_seed)]
    if args.model_name:
        parts += ["--model-name", args.model_name]
    return shlex.join(parts)


def calibrate_main(args: argparse.Namespace) -> int:
    from aw_lookahead.evaluation.calibration import (
        calibrate,
        load_calibration_samples,
        write_calibration,
    )
    from aw_lookahead.lookahead.calibration import user_calibration_path

    if not 0.0 <= args.budget <= 1.0:
        raise UsageError(f"--budget must be in [0, 1], got {args.budget}")
    if args.samples < 1:
        raise UsageError(f"--samples must be >= 1, got {args.samples}")
    samples, destructive = load_calibration_samples(
        args.data, limit=args.limit, seed=args.sample_seed
    )
    by_tokens = args.estimator == "logprobs"
    temperature = args.temperature
    if temperature is None:
        temperature = 0.0 if by_tokens else DEFAULT_TEMPERATURE
    if not samples:
        raise UsageError(f"--data {' '.join(args.data)}: no action to calibrate on")
    wm = world_model_from_args(
        args,
        samples=1 if by_tokens else args.samples,
        logprobs=by_tokens,
        temperature=temperature,
        max_tokens=args.max_tokens,
        seed=args.seed,
        top_k=None,
        top_p=1.0,
    )

    progress = line_progress("calibrate", "actions checked")

    async def go() -> Any:
        served = await wm.resolve_model()
        name = args.model_name or served
        return name, await calibrate(
            wm,
            samples,
            budget=args.budget,
            model=name,
            concurrency=args.concurrency,
            data=list(args.data),
            destructive=destructive,
            command=_command(args),
            progress=progress,
        )

    name, (calibration, rows) = asyncio.run(go())
    out = output_file(args.out or user_calibration_path(name), "--out")
    written = write_calibration(calibration, out, rows)
    summary = {
        "model": calibration.model,
        "threshold": calibration.threshold,
        "budget": calibration.budget,
        "catch_rate": calibration.catch_rate,
        "false_veto_rate": calibration.false_veto_rate,
        "failing": calibration.failing,
        "good": calibration.good,
        "skipped": calibration.skipped,
        "destructive": calibration.destructive,
        "files": {k: str(v) for k, v in written.items()},
        "domains": {
            name: fit.model_dump(exclude={"curve"}) for name, fit in calibration.domains.items()
        },
    }
    if args.json:
        print(json.dumps(summary))
        return 0
    print(
        f"{calibration.model}: threshold {_chosen(calibration.threshold)} for a false-veto "
        f"budget of {calibration.budget:g}: catches {calibration.catch_rate:.0%} of "
        f"{calibration.failing} failing actions, vetoes {calibration.false_veto_rate:.0%} "
        f"of {calibration.good} good ones; wrote {out}"
    )
    for name, fit in calibration.domains.items():
        print(
            f"  {name} actions alone: threshold {_chosen(fit.threshold)}: catches "
            f"{fit.catch_rate:.0%} of {fit.failing} failing, vetoes {fit.false_veto_rate:.0%} "
            f"of {fit.good} good (the gate uses it for {name} actions)"
        )
    return 0


def _chosen(threshold: float | None) -> str:
    if threshold is None:
        return "none (no threshold meets the budget: predictions never veto)"
    return f"{threshold:.2f}"
