"""``aw-lookahead data mcp``: trajectories recorded from real MCP servers."""

from __future__ import annotations

import argparse
from typing import Any

from ._shared import (
    add_output_options,
    add_run_options,
    print_manifest,
    progress,
    refuse_existing_data,
)


def register(subparsers: Any) -> None:
    """Add the ``mcp`` sub-verb."""
    parser = subparsers.add_parser(
        "mcp",
        help="record trajectories from real MCP servers (filesystem, git, memory)",
        description="Drive real MCP servers over stdio with template task families (valid "
        "calls and deliberate mistakes), record each call's real result, and write "
        "train/validation/test JSONL split by family plus manifest.json.",
    )
    add_run_options(
        parser, n_help="trajectories to record", workers_help="trajectories recorded at once"
    )
    parser.add_argument(
        "--servers",
        default="filesystem,git,memory",
        help="comma-separated servers to drive (default: filesystem,git,memory)",
    )
    parser.add_argument(
        "--workdir",
        default=None,
        help="folder for the per-trajectory directories; paths in the data start here "
        "(default: <tmp>/aw-lookahead-mcp)",
    )
    parser.add_argument(
        "--node-prefix",
        default=None,
        help="npm prefix holding the Node servers, installed there if missing "
        "(env AW_LOOKAHEAD_NODE_PREFIX; default ./.cache/node)",
    )
    add_output_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import anyio

    from aw_lookahead.datagen.mcp import generate_mcp

    refuse_existing_data(args)
    manifest = anyio.run(
        lambda: generate_mcp(
            args.n,
            args.seed,
            args.out,
            servers=[s.strip() for s in args.servers.split(",") if s.strip()],
            workdir=args.workdir,
            node_prefix=args.node_prefix,
            workers=args.workers,
            progress=progress("mcp", "trajectories"),
        )
    )
    if args.json:
        print_manifest(manifest)
        return 0
    counts = ", ".join(f"{s} {manifest.counts[s]}" for s in manifest.counts)
    extra = manifest.extra
    print(
        f"wrote {sum(manifest.counts.values())} trajectories to {args.out} ({counts}); "
        f"{extra.get('calls')} calls, error share {extra.get('error_share')}"
    )
    failed = extra.get("failed") or []
    if isinstance(failed, list) and failed:
        print(f"{len(failed)} trajectories failed and were left out; first: {failed[0]}")
    return 0
