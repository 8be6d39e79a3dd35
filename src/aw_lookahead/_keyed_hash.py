"""HMAC-SHA256 of many messages under one key, with C-level iteration.

A text dense with distinct secrets needs a keyed placeholder for each of up
to :data:`~aw_lookahead._placeholders.DISTINCT_CAP` of them. Through
:mod:`hmac`, each costs several Python calls (an ``HMAC`` object copied,
updated, read); here the two keyed SHA-256 states of RFC 2104 are set up
once and every message goes through ``map`` over their copies, which gives
the same digests as ``hmac.digest(key, message, "sha256")``.
"""

from __future__ import annotations

import hashlib
import operator
from collections import deque
from collections.abc import Iterable
from itertools import repeat

__all__ = ["KeyedSha256"]

_BLOCK = 64
"""SHA-256's block size in bytes: a longer key is hashed first, a shorter one padded."""
_COPY = operator.methodcaller("copy")


class KeyedSha256:
    """``hmac.digest(key, message, "sha256")`` for many messages at once."""

    def __init__(self, key: bytes) -> None:
        if len(key) > _BLOCK:
            key = hashlib.sha256(key).digest()
        key = key.ljust(_BLOCK, b"\0")
        self._inner = hashlib.sha256(bytes(b ^ 0x36 for b in key))
        self._outer = hashlib.sha256(bytes(b ^ 0x5C for b in key))
        hash_type = type(self._inner)
        self._update = hash_type.update
        self._digest = hash_type.digest

    def digests(self, messages: Iterable[bytes]) -> list[bytes]:
        """The keyed digest of each of ``messages``, in order."""
        items = list(messages)
        inner = list(map(_COPY, repeat(self._inner, len(items))))
        deque(map(self._update, inner, items), maxlen=0)
        outer = list(map(_COPY, repeat(self._outer, len(items))))
        deque(map(self._update, outer, map(self._digest, inner)), maxlen=0)
        return list(map(self._digest, outer))
