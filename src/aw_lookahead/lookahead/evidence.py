"""Deprecated path, kept for one release.

Everything here moved to :mod:`aw_lookahead.lookahead.types`, beside the
:class:`~aw_lookahead.lookahead.Decision` whose signals it reads.
"""

from __future__ import annotations

from typing import Any

from aw_lookahead._deprecated import moved_attribute


def __getattr__(name: str) -> Any:
    return moved_attribute(__name__, name)
