"""``aw-lookahead data terminal``: placeholder, filled in by the terminal generator."""

from __future__ import annotations

from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``terminal`` sub-verb (not yet available)."""
