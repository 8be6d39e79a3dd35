"""aw-lookahead: predictive lookahead for tool-using agents."""

from __future__ import annotations

__version__ = "0.1.0"
