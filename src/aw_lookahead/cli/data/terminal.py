"""``aw-lookahead data terminal``: run template tasks in real bash sandboxes, split by family."""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from ._outputs import add_output_options, refuse_existing_data


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _seed(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def register(subparsers: Any) -> None:
    """Add the ``terminal`` sub-verb."""
    parser = subparsers.add_parser(
        "terminal",
        help="record terminal trajectories from template task families",
        description="Draw N tasks from the terminal template families (files, text tools, "
        "pipes, shell state, Python, git, make, unittest, archives, permissions; about a "
        "third of the steps are deliberate mistakes), run each in a fresh bash sandbox, and "
        "write train/validation/test.jsonl split by family plus manifest.json and "
        "agentworldbench/test.jsonl to OUT. The same seed gives byte-identical files.",
    )
    parser.add_argument("--n", type=_count, required=True, help="number of tasks to run")
    parser.add_argument("--seed", type=_seed, default=0, help="seed (default %(default)s)")
    parser.add_argument(
        "--workers", type=_count, default=2, help="sandboxes run at once (default %(default)s)"
    )
    parser.add_argument(
        "--timeout", type=float, default=10.0, help="seconds per command (default %(default)s)"
    )
    add_output_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from aw_lookahead.datagen.terminal import generate_terminal, stderr_progress

    refuse_existing_data(args)
    manifest = asyncio.run(
        generate_terminal(
            args.n,
            seed=args.seed,
            out=args.out,
            workers=args.workers,
            timeout=args.timeout,
            progress=stderr_progress("data terminal"),
        )
    )
    if args.json:
        print(json.dumps(manifest.model_dump(), sort_keys=True))
        return 0
    counts = ", ".join(f"{s} {manifest.counts[s]}" for s in manifest.counts)
    families = ", ".join(f"{s} {len(f)}" for s, f in manifest.splits.items())
    print(f"wrote {sum(manifest.counts.values())} trajectories to {args.out} ({counts})")
    print(f"families: {families}; mistake share {manifest.extra.get('mistake_share')}")
    return 0
