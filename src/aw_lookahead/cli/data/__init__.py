"""``aw-lookahead data``: generate training data from real environments.

Each environment is a sub-verb in its own module (``data/<env>.py``) exposing
``register(subparsers)``; this module only groups them.
"""

from __future__ import annotations

from typing import Any

from . import mcp, terminal


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "data",
        help="generate training data by running template tasks in real environments",
        description="Generate trajectories from template task families run in real "
        "environments, split train/validation/test by family.",
    )
    sub = parser.add_subparsers(dest="data_verb", metavar="ENV", required=True)
    terminal.register(sub)
    mcp.register(sub)
