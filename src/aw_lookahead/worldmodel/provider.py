"""Deprecated path, kept for one release.

Everything here moved to :mod:`aw_lookahead.endpoint`, the chat-endpoint layer
that the world model, the judges and the CLI share.
"""

from __future__ import annotations

from typing import Any

from aw_lookahead._deprecated import moved_attribute


def __getattr__(name: str) -> Any:
    return moved_attribute(__name__, name)
