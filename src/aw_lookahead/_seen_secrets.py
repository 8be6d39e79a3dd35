"""The secrets a :class:`~aw_lookahead.redact.Redactor` has replaced so far.

Once a rule has recognised a secret by its shape or its name, the value
itself is known: :class:`KnownSecrets` replaces it wherever it appears again,
bare (``echo $API_TOKEN`` printing it) or in another message. Only values
that cannot be ordinary text are remembered (8 characters or more, not a
plain ASCII word), and only the most recent ones, so the replacement pattern
stays small.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from ahocorasick_rs import AhoCorasick, MatchKind

__all__ = ["KnownSecrets"]

_MIN_LEN = 8
"""Shorter values are not replaced wherever they appear (they would hit ordinary words)."""
_MAX_LEN = 4096
_MAX_COUNT = 256
"""The most recent secrets remembered; older ones are still replaced where a rule finds them."""


class KnownSecrets:
    """Secrets with their placeholders, replaced wherever they appear; thread-safe.

    ``generation`` grows by one with every secret learned, so a caller can
    tell whether a pass over some text taught it anything
    (:meth:`learned_since`).
    """

    def __init__(self, placeholder_prefix: str) -> None:
        self._prefix = placeholder_prefix
        # secret -> (placeholder, generation it was learned in)
        self._entries: OrderedDict[str, tuple[str, int]] = OrderedDict()
        self._pattern: re.Pattern[str] | None = None
        self._automaton: tuple[AhoCorasick, list[str]] | bool | None = None
        """The automaton of the secrets and their order; False where one has a surrogate."""
        self._lock = threading.Lock()
        self.generation = 0

    def learn(self, pairs: Iterable[tuple[str, str]]) -> bool:
        """Remember each ``(secret, placeholder)``; True when any was new and kept.

        A whole batch (the secrets one text held) takes the lock once.
        """
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
                if len(self._entries) > _MAX_COUNT:
                    self._entries.popitem(last=False)
                learned = True
            if learned:
                self._pattern = self._automaton = None
        return learned

    def learned_since(self, generation: int) -> list[tuple[str, str]]:
        """The ``(secret, placeholder)`` pairs learned after ``generation``."""
        with self._lock:
            return [(s, p) for s, (p, g) in self._entries.items() if g > generation]

    def sub(self, text: str) -> str:
        """``text`` with every known secret replaced, the longest first."""
        with self._lock:
            if not self._entries:
                return text
            entries = dict(self._entries)
            pattern, automaton = None, None
            if len(text) < _FIND_CHARS or len(entries) > _AUTOMATON_MOST:
                if self._pattern is None:
                    self._pattern = re.compile(_longest_first(self._entries))
                pattern = self._pattern
            elif len(entries) > _FIND_MOST:
                if self._automaton is None:
                    self._automaton = _leftmost_longest(list(entries))
                automaton = self._automaton
        if pattern is None:
            if isinstance(automaton, tuple):
                return _by_automaton(text, *automaton, entries)
            return _by_find(text, entries)
        return pattern.sub(lambda m: entries[m.group(0)][0], text)


_FIND_CHARS = 4096
_FIND_MOST = 4
"""In a text from ``_FIND_CHARS`` characters on, known secrets are found by an Aho–Corasick
automaton (one pass for all of them) instead of the trie pattern, which the regex engine
tries at every position whose character starts a secret; up to ``_FIND_MOST`` of them, each
by ``str.find`` (a fast substring search: 0.1 to 1.2 ms a MiB against 0.6 to 4.4 for the
automaton over text dense with placeholders)."""
_AUTOMATON_MOST = 64
"""Past this many, the trie pattern again: many secrets are learned from text dense with
secrets, where the trie was measured faster (1.7 against 1.9 ms over a MiB of placeholders
for 256 secrets, 39.6 against 40.3 ms for the whole of it)."""


def _leftmost_longest(secrets: list[str]) -> tuple[AhoCorasick, list[str]] | bool:
    """The automaton finding, from the left, the longest of ``secrets`` at each position,
    and ``secrets``; False when one holds a lone surrogate (the automaton reads UTF-8 and
    would silently miss the others)."""
    if not all(map(_utf8, secrets)):
        return False
    return AhoCorasick(secrets, matchkind=MatchKind.LeftmostLongest), secrets


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _by_find(text: str, entries: dict[str, tuple[str, int]]) -> str:
    """What :meth:`KnownSecrets.sub` gives, from every occurrence of each secret: from the
    left, the longest secret occurring at a position is replaced, and the search goes on
    after it (the matches of the longest-first pattern, as ``re.sub`` takes them)."""
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
            pieces += (text[done:at], entries[secret][0])
            done = at - minus
    pieces.append(text[done:])
    return "".join(pieces)


def _by_automaton(
    text: str, automaton: AhoCorasick, secrets: list[str], entries: dict[str, tuple[str, int]]
) -> str:
    """What :func:`_by_find` gives, from the leftmost-longest matches of ``automaton`` (of
    ``secrets``, in order): one pass over the text for all of them; :func:`_by_find` when
    the text holds a lone surrogate (the automaton reads UTF-8)."""
    try:
        found = automaton.find_matches_as_indexes(text)
    except UnicodeEncodeError:
        return _by_find(text, entries)
    if not found:
        return text
    pieces: list[str] = []
    done = 0
    for index, at, end in found:
        pieces += (text[done:at], entries[secrets[index]][0])
        done = end
    pieces.append(text[done:])
    return "".join(pieces)


def _longest_first(words: Iterable[str]) -> str:
    """A pattern matching the longest of ``words`` that starts at a position, as the
    alternation of all of them longest first does, written as a trie (``ab(?:c|d(?:e)?)``):
    where the alternation tries every word at each position, the trie tries one branch per
    character. Words nested more than :data:`_MAX_NESTING` deep (each a prefix of the next)
    get the plain alternation, which the regex parser reads without recursion."""
    ordered = sorted(words, key=len, reverse=True)
    root: dict[str, Any] = {}
    for word in ordered:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}
    trie, depth = _trie(root)
    return trie if depth <= _MAX_NESTING else "|".join(map(re.escape, ordered))


_MAX_NESTING = 64


def _trie(node: dict[str, Any]) -> tuple[str, int]:
    """The pattern of a trie node and how many groups deep it nests."""
    branches, depth = [], 0
    for first, child in sorted(node.items()):
        if not first:
            continue
        run, rest = [first], child
        while len(rest) == 1 and "" not in rest:
            ((char, rest),) = rest.items()
            run.append(char)
        inner, below = _trie(rest)
        branches.append(re.escape("".join(run)) + inner)
        depth = max(depth, below)
        if depth > _MAX_NESTING:
            break
    if not branches:
        return "", 0
    if len(branches) == 1:
        body = branches[0]
    else:
        body, depth = "(?:" + "|".join(branches) + ")", depth + 1
    return (f"(?:{body})?", depth + 1) if "" in node else (body, depth)
