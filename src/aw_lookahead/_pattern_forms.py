"""What a :class:`~aw_lookahead._secret_rule.Rule` derives from its pattern, once per process.

A rule's regex is written for clarity; scanning a megabyte with it as written
can be slow. From the pattern's text this module makes the faster forms the
rule uses where they give the same matches: the pattern without capturing
groups (``findall`` then gives match texts without a match object each), one
literal-led pattern per leading word of a case-insensitive alternation, and
for a pattern that is one ASCII class repeated, a ``bytes.translate`` table.
It also holds the checks that tell whether repeated match texts can be
replaced with ``str.replace`` (:func:`after_word`, :func:`apart`).
"""

from __future__ import annotations

import functools
import re

__all__ = ["after_word", "anchor_roots", "apart", "bare_all", "branches_of", "runs_of"]


@functools.cache
def branches_of(
    kind: str, source: str, lead: tuple[str, ...]
) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """:attr:`Rule.branches` of a pattern ``(?i)(?:w1|w2|…)rest`` led by the words ``lead``."""
    head = "(?i)(?:" + "|".join(lead) + ")"
    if not source.startswith(head):
        raise ValueError(f"{kind}: the pattern does not start with its lead words")
    rest = source[len(head) :]
    return tuple((_literal_start(w), re.compile(w + rest)) for w in lead)


def bare_all(
    regex: re.Pattern[str], scan: re.Pattern[str] | None, lead: tuple[str, ...]
) -> tuple[re.Pattern[str] | None, ...]:
    """:attr:`Rule.bare`: the pattern, its scan and its branches without capturing groups."""
    key = (regex.pattern, regex.flags, scan is not None, lead)
    done = _BARE.get(key)
    if done is None:
        branches = branches_of("", regex.pattern, lead) if lead else ()
        patterns = (regex, scan, *(b for _, b in branches))
        bare = tuple(_bare(p) if p is not None else None for p in patterns)
        fit = all(b is not None for b, p in zip(bare, patterns, strict=True) if p is not None)
        done = _BARE[key] = bare if fit else ()
    return done


_BARE: dict[tuple[str, int, bool, tuple[str, ...]], tuple[re.Pattern[str] | None, ...]] = {}


@functools.cache
def runs_of(source: str, flags: int) -> tuple[bytes, int] | None:
    """:attr:`Rule.runs` of a pattern, or None when it is not one class repeated."""
    shape = re.fullmatch(r"\[([^\]\\]+)\]\{(\d+),\}\+", source)
    if shape is None or flags & ~re.UNICODE:
        return None
    one = re.compile(f"[{shape.group(1)}]")
    if one.fullmatch("?") or any(one.fullmatch(chr(c)) for c in range(128, 256)):
        return None
    table = bytes(ord("a") if one.fullmatch(chr(c)) else ord(" ") for c in range(256))
    return table, int(shape.group(2))


def _bare(pattern: re.Pattern[str]) -> re.Pattern[str] | None:
    """``pattern`` with its named groups made non-capturing; None if it still captures."""
    return _bare_source(pattern.pattern, pattern.flags)


@functools.cache
def _bare_source(source: str, flags: int) -> re.Pattern[str] | None:
    if "(?P=" in source or "(?(" in source:
        return None
    bare = re.compile(re.sub(r"\(\?P<\w+>", "(?:", source), flags)
    return bare if bare.groups == 0 else None


def after_word(text: str, whole: str) -> bool:
    """Whether some occurrence of ``whole`` in ``text`` follows a word character."""
    literal = re.escape(whole)
    return re.search(rf"{literal}(?<=[A-Za-z0-9_]{literal})", text) is not None


def apart(wholes: list[str]) -> bool:
    """Whether no occurrence of one of ``wholes`` can overlap another occurrence of any."""
    for a in wholes:
        for b in wholes:
            if a != b and a in b:
                return False
            if any(a.endswith(b[:k]) for k in range(1, min(len(a), len(b)))):
                return False
    return True


def _literal_start(word: str) -> str:
    """What ``word`` (a regex) starts with literally: ``api`` of ``api[_-]?key``,
    ``credential`` of ``credentials?``."""
    literal = re.match(r"[^\\\[\](){}.*+?|^$]*", word)
    assert literal is not None
    start = literal.group()
    return start[:-1] if word[len(start) : len(start) + 1] in ("?", "*", "{") else start


@functools.cache
def anchor_roots(anchors: tuple[str, ...]) -> tuple[str, ...]:
    """Words to look for where ``anchors`` may start: every anchor starts with one of them.
    ASCII anchors that share a start of four characters or more are looked for by it."""
    roots: list[str] = []
    for word in sorted(set(anchors)):
        if roots and word.isascii() and roots[-1].isascii():
            last = roots[-1]
            size = next((i for i, c in enumerate(last[: len(word)]) if word[i] != c), None)
            common = last[: len(word)] if size is None else last[:size]
            if len(common) >= 4:
                roots[-1] = common
                continue
        roots.append(word)
    return tuple(roots)
