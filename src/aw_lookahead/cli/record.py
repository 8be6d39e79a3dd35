"""``aw-lookahead record terminal``: ground-truth AgentWorldBench samples from a real shell."""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "record",
        help="record ground-truth samples from a real environment",
        description="Run scripted actions in a real environment and write AgentWorldBench "
        "samples (one per turn).",
    )
    sub = parser.add_subparsers(dest="record_verb", metavar="ENV", required=True)
    term = sub.add_parser(
        "terminal",
        help="run a command script in a fresh bash sandbox",
        description="Script format: '# task: <instruction>' starts a trajectory; each "
        "following non-comment line is one command. Each trajectory runs in a fresh "
        "sandbox (private temp dir, per-command time limit, no network).",
    )
    term.add_argument("--script", required=True, help="record script (text file)")
    term.add_argument("--out", required=True, help="output AgentWorldBench JSONL file")
    term.add_argument("--timeout", type=float, default=10.0, help="seconds per command")
    term.add_argument("--network", action="store_true", help="allow network access")
    term.add_argument("--append", action="store_true", help="append to an existing --out")
    term.add_argument("--force", action="store_true", help="replace an existing --out")
    term.add_argument("--json", action="store_true", help="print a JSON summary")
    term.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from aw_lookahead.datagen.recording import record_script

    from ._common import output_file, refuse_to_replace

    output_file(args.out, "--out")
    if not (args.append or args.force):
        refuse_to_replace([args.out], "--out", append=True)
    trajectories, written = asyncio.run(
        record_script(
            args.script, args.out, timeout=args.timeout, network=args.network, append=args.append
        )
    )
    isolated = all(t.metadata.get("network_isolated") for t in trajectories)
    summary = {
        "out": str(args.out),
        "trajectories": len(trajectories),
        "samples": written,
        "network_isolated": isolated,
    }
    if args.json:
        print(json.dumps(summary))
    else:
        note = "" if isolated or args.network else " (network isolation unavailable here)"
        print(f"wrote {written} samples from {len(trajectories)} trajectories to {args.out}{note}")
    return 0
