"""What the ``data`` verbs share: the output folder options and the rule that data already
there is never replaced without ``--force``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from aw_lookahead.cli._common import refuse_to_replace
from aw_lookahead.datagen.split import SPLITS

__all__ = ["add_output_options", "refuse_existing_data"]


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
