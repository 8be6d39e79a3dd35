"""What the ``data`` verbs share, so the environments differ only in what they drive.

The run options (``--n``, ``--seed``, ``--workers``, read the same way with the
same one-line usage errors), the output options with the rule that data already
there is never replaced without ``--force``, the progress lines on stderr, and
the manifest printed as JSON.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from aw_lookahead._progress import ProgressCallback, line_progress
from aw_lookahead.cli._common import print_json, refuse_to_replace
from aw_lookahead.datagen.split import SPLITS

__all__ = [
    "add_output_options",
    "add_run_options",
    "print_manifest",
    "progress",
    "refuse_existing_data",
]


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


def add_run_options(parser: Any, *, n_help: str, workers_help: str) -> None:
    """``--n`` (required, at least 1), ``--seed`` (default 0) and ``--workers`` (default 2)."""
    parser.add_argument("--n", type=_count, required=True, help=n_help)
    parser.add_argument("--seed", type=_seed, default=0, help="seed (default %(default)s)")
    parser.add_argument(
        "--workers", type=_count, default=2, help=f"{workers_help} (default %(default)s)"
    )


def add_output_options(parser: Any) -> None:
    """``--out``, ``--force`` and ``--json``, the same on every ``data`` verb."""
    parser.add_argument("--out", required=True, help="output folder (created if missing)")
    parser.add_argument("--force", action="store_true", help="replace data already in --out")
    parser.add_argument("--json", action="store_true", help="print the manifest as JSON")


def refuse_existing_data(args: argparse.Namespace) -> None:
    """A one-line UsageError when ``--out`` already holds a split or manifest (no ``--force``)."""
    if not args.force:
        out = Path(args.out)
        refuse_to_replace([out / "manifest.json", *(out / f"{s}.jsonl" for s in SPLITS)], "--out")


def progress(verb: str, unit: str) -> ProgressCallback:
    """About twenty ``data VERB: done/total UNIT`` lines on stderr over a run."""
    return line_progress(f"data {verb}", unit)


def print_manifest(manifest: Any) -> None:
    """The manifest (a pydantic model) as JSON on stdout, for ``--json``."""
    print_json(manifest.model_dump(mode="json"))
