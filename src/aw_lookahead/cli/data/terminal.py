"""``aw-lookahead data terminal``: run template tasks in real bash sandboxes, split by family."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from ._shared import (
    add_output_options,
    add_run_options,
    print_manifest,
    progress,
    refuse_existing_data,
)


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
    add_run_options(parser, n_help="number of tasks to run", workers_help="sandboxes run at once")
    parser.add_argument(
        "--timeout", type=float, default=10.0, help="seconds per command (default %(default)s)"
    )
    add_output_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from aw_lookahead.datagen.terminal import generate_terminal

    refuse_existing_data(args)
    manifest = asyncio.run(
        generate_terminal(
            args.n,
            seed=args.seed,
            out=args.out,
            workers=args.workers,
            timeout=args.timeout,
            progress=progress("terminal", "tasks"),
        )
    )
    if args.json:
        print_manifest(manifest)
        return 0
    counts = ", ".join(f"{s} {manifest.counts[s]}" for s in manifest.counts)
    families = ", ".join(f"{s} {len(f)}" for s, f in manifest.splits.items())
    print(f"wrote {sum(manifest.counts.values())} trajectories to {args.out} ({counts})")
    print(f"families: {families}; mistake share {manifest.extra.get('mistake_share')}")
    return 0
