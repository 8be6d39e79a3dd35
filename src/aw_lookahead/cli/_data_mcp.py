"""``aw-lookahead data mcp``: placeholder, filled in by the mcp generator."""

from __future__ import annotations

from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``mcp`` sub-verb (not yet available)."""
