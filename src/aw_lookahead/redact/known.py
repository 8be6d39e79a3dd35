"""The secrets a :class:`~aw_lookahead.redact.Redactor` has replaced so far.

Once a rule has recognised a secret by its shape or its name, the value
itself is known: :class:`KnownSecrets` replaces it wherever it appears again,
bare (``echo $API_TOKEN`` printing it) or in another message. Only values
that cannot be ordinary text are remembered (8 characters or more, not a
plain ASCII word), and only the most recent :data:`MAX_COUNT`, so replacing
them stays linear in the text (one ``str.find`` pass per secret).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable

__all__ = ["MAX_COUNT", "KnownSecrets"]

_MIN_LEN = 8
"""Shorter values are not replaced wherever they appear (they would hit ordinary words)."""
_MAX_LEN = 4096
MAX_COUNT = 256
"""The most recent secrets remembered; older ones are still replaced where a rule finds them."""


class KnownSecrets:
    """Secrets with their placeholders, replaced wherever they appear; thread-safe.

    ``generation`` grows by one with every secret learned, so a caller can
    tell whether a pass over some text taught it anything (:meth:`learned_since`).
    """

    def __init__(self, placeholder_prefix: str) -> None:
        self._prefix = placeholder_prefix
        # secret -> (placeholder, generation it was learned in)
        self._entries: OrderedDict[str, tuple[str, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.generation = 0

    def learn(self, pairs: Iterable[tuple[str, str]]) -> bool:
        """Remember each ``(secret, placeholder)``; True when any was new and kept."""
        kept = [
            (secret, stand_in)
            for secret, stand_in in pairs
            if _MIN_LEN <= len(secret) <= _MAX_LEN
            and not secret.startswith(self._prefix)
            and not (secret.isalpha() and secret.isascii())
        ]
        learned = False
        with self._lock:
            for secret, stand_in in kept:
                if secret in self._entries:
                    continue
                self.generation += 1
                self._entries[secret] = (stand_in, self.generation)
                if len(self._entries) > MAX_COUNT:
                    self._entries.popitem(last=False)
                learned = True
        return learned

    def learned_since(self, generation: int) -> list[tuple[str, str]]:
        """The ``(secret, placeholder)`` pairs learned after ``generation``."""
        with self._lock:
            return [(s, p) for s, (p, g) in self._entries.items() if g > generation]

    def sub(self, text: str) -> str:
        """``text`` with every known secret replaced: from the left, the longest secret
        occurring at a position, and the search goes on after it."""
        with self._lock:
            entries = {secret: stand_in for secret, (stand_in, _) in self._entries.items()}
        found: list[tuple[int, int, str]] = []
        for secret in entries:
            at = text.find(secret)
            while at >= 0:
                found.append((at, -len(secret), secret))
                at = text.find(secret, at + 1)
        if not found:
            return text
        found.sort()
        pieces: list[str] = []
        done = 0
        for at, minus, secret in found:
            if at >= done:
                pieces += (text[done:at], entries[secret])
                done = at - minus
        pieces.append(text[done:])
        return "".join(pieces)
