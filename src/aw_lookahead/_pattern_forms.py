"""What a :class:`~aw_lookahead._secret_rule.Rule` derives from its pattern, once per process.

A rule's regex is written for clarity; scanning a megabyte with it as written
can be slow. From the pattern's text this module makes the faster forms the
rule uses where they give the same matches: the pattern without capturing
groups (``findall`` then gives match texts without a match object each), one
literal-led pattern per leading word of a case-insensitive alternation, and
for a pattern that is one ASCII class repeated, a ``bytes.translate`` table.
It also holds the checks that tell whether repeated match texts can be
replaced with ``str.replace`` (:func:`after_word`, :func:`apart`), and what
follows each value group in every match (:func:`value_tails`, read from the
parse tree).
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable
from typing import Any

from ._ascii_ends import one_byte

__all__ = [
    "WORD_CHARS",
    "WORD_START",
    "after_word",
    "aligned_copies",
    "aligned_lower",
    "anchor_roots",
    "apart",
    "bare_all",
    "branches_of",
    "capital_matches",
    "literal_starts",
    "runs_of",
    "starts_word",
    "value_tails",
]

try:
    _parser: Any = importlib.import_module("re._parser")
except ImportError:  # pragma: no cover - a Python without it: no value tails, no split
    _parser = None


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


@functools.cache
def value_tails(source: str, flags: int, groups: tuple[str, ...]) -> dict[str, str]:
    """For each value group of a pattern that is followed, in every match, by one fixed
    text up to the end of the match (``"`` after ``"(?P<dq>…)"``, nothing after a value
    that ends the pattern), that text. A group inside a repeat that can run more than
    once, or inside a look-around, or followed by anything but uncased literals and
    zero-width checks, has none. Read from the pattern's parse tree (``re._parser``);
    nothing when that cannot be read."""
    if _parser is None:
        return {}
    try:
        tree = _parser.parse(source, flags)
        index = re.compile(source, flags).groupindex
        tails = {name: _after(list(tree), index[name]) for name in groups}
    except (AttributeError, TypeError, ValueError, KeyError, re.error):
        return {}
    return {name: tail for name, tail in tails.items() if isinstance(tail, str)}


_ABSENT = object()


def _after(items: list[tuple[Any, Any]], group: int) -> object:
    """The fixed text after ``group`` to the end of ``items``; None when not fixed, ``_ABSENT``
    when the group is not in them."""
    for at, (op, av) in enumerate(items):
        inner: object = _ABSENT
        if op is _parser.SUBPATTERN:
            inner = "" if av[0] == group else _after(list(av[3]), group)
        elif op is _parser.BRANCH:
            for branch in av[1]:
                inner = _after(list(branch), group)
                if inner is not _ABSENT:
                    break
        elif op is _parser.ATOMIC_GROUP:
            inner = _after(list(av), group)
        elif op in (_parser.MAX_REPEAT, _parser.MIN_REPEAT, _parser.POSSESSIVE_REPEAT):
            inner = _after(list(av[2]), group)
            if inner is not _ABSENT and av[1] > 1:
                return None
        elif (
            op in (_parser.ASSERT, _parser.ASSERT_NOT) and _after(list(av[1]), group) is not _ABSENT
        ):
            return None
        if inner is _ABSENT:
            continue
        rest = _fixed(items[at + 1 :])
        return None if inner is None or rest is None else f"{inner}{rest}"
    return _ABSENT


_MOST_STARTS = 16
""":func:`literal_starts` tells at most this many texts."""


@functools.cache
def literal_starts(source: str, flags: int) -> tuple[str, ...]:
    """Texts, in lower case, one of which every match of a case-sensitive pattern starts
    with: its leading literals, through groups, alternations and classes of a few
    characters (``sk-ant-``; ``ghp_``, ``gho_``, …, ``github_pat_``). Empty when they cannot
    be told from the parse tree, or some would be shorter than two characters, not ASCII, or
    more than ``_MOST_STARTS``; and for a case-insensitive pattern. Where each character of
    a text lower-cases to one, every match starts where one of them is in its lower case."""
    if _parser is None or flags & re.IGNORECASE:
        return ()
    try:
        heads, _ = _heads(list(_parser.parse(source, flags)))
    except (AttributeError, TypeError, ValueError, re.error):
        return ()
    if any(len(h) < 2 or not h.isascii() for h in heads):
        return ()
    return tuple(sorted({h.lower() for h in heads}))


def _heads(items: list[tuple[Any, Any]]) -> tuple[list[str], bool]:
    """The texts a match of ``items`` starts with (at most ``_MOST_STARTS``), and whether
    they are all it can match (then what follows ``items`` extends them)."""
    heads = [""]
    for op, av in items:
        if op is _parser.LITERAL:
            more, whole = [chr(av)], True
        elif op is _parser.IN and all(o is _parser.LITERAL for o, _ in av) and len(av) <= 8:
            more, whole = [chr(c) for _, c in av], True
        elif op is _parser.SUBPATTERN and not av[1] and not av[2]:
            more, whole = _heads(list(av[3]))
        elif op is _parser.BRANCH:
            each = [_heads(list(branch)) for branch in av[1]]
            more = [h for hs, _ in each for h in hs]
            whole = all(w for _, w in each)
        else:
            return heads, False
        longer = [h + m for h in heads for m in more]
        if len(longer) > _MOST_STARTS:
            return heads, False
        heads = longer
        if not whole:
            return heads, False
    return heads, True


def _fixed(items: list[tuple[Any, Any]]) -> str | None:
    """The text ``items`` always match: uncased literals, zero-width checks; else None."""
    text = []
    for op, av in items:
        if op is _parser.LITERAL and chr(av).lower() == chr(av) == chr(av).upper():
            text.append(chr(av))
        elif op not in (_parser.AT, _parser.ASSERT, _parser.ASSERT_NOT):
            return None
    return "".join(text)


# A word start: not after an ASCII letter, digit or underscore, or right after an escaped
# newline or tab inside a JSON string ("\\nmysql") or a JSON \\u escape, which is how
# JSON with ensure_ascii writes any other letter ("\\u00e9AKIA..."); any other letter may
# precede it.
_START = r"(?:(?<![A-Za-z0-9_])|(?<=\\[nrt])|(?<=\\u[0-9A-Fa-f]{4}))"
WORD_START = re.compile(_START)
"""Matches at a position where a token may start (see ``Rule.word_start``)."""
WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_HEX = frozenset("0123456789ABCDEFabcdef")


def starts_word(text: str, at: int) -> bool:
    """Whether :data:`WORD_START` matches ``text`` at ``at``, without a regex call."""
    if at == 0 or text[at - 1] not in WORD_CHARS:
        return True
    if at >= 2 and text[at - 2] == "\\" and text[at - 1] in "nrt":
        return True
    return at >= 6 and text[at - 6 : at - 4] == "\\u" and _HEX.issuperset(text[at - 4 : at])


_CASE_APART = frozenset("\u0131\u017f\u1c82\u1fbe\u0345\u03a3\u03c3\u03f0")
"""Characters that case-insensitive matching takes for a character of an anchor although
they do not lower-case to it (dotless i, long s, sigmas, …; written as escapes, so that
this file holds none of them; tests/test_redact_fast_path.py finds them from the anchors
of the built-in rules)."""


def _scannable(text: str) -> bool:
    """Whether :attr:`Rule.scan` over the lower case of wide ``text`` finds what the rule's
    pattern finds in ``text`` (given: it lower-cases character by character)."""
    return bool(text) and not any(c in text for c in _CASE_APART)


def aligned_lower(text: str) -> str | None:
    """``text`` lower-cased one character for one, where its lower case is longer: each
    capital dotted I (which lower-cases to ``i`` and a combining dot) becomes ``i``, what
    case-insensitive matching takes it for. Every place where an anchored rule's pattern
    matches ``text`` starts an anchor there. None when ``text`` holds a character of
    :data:`_CASE_APART` or a length still differs (then the whole pattern runs)."""
    if any(c in text for c in _CASE_APART):
        return None
    same = text.replace("\u0130", "i").lower()
    return same if len(same) == len(text) else None


def _copies(text: str) -> tuple[str, bytes] | None:
    """:func:`aligned_lower` of ``text`` and its one-byte copy (each wider character a ``?``)."""
    same = aligned_lower(text)
    return None if same is None else (same, one_byte(same))


def aligned_copies(text: str) -> Callable[[], tuple[str, bytes] | None]:
    """:func:`_copies` of ``text``, made on the first call and kept."""
    kept: list[tuple[str, bytes] | None] = []

    def copies() -> tuple[str, bytes] | None:
        if not kept:
            kept.append(_copies(text))
        return kept[0]

    return copies


_CAPITAL = re.compile("[A-Z]")
_CAPITALS = bytes(ord("X") if 65 <= c <= 90 else ord(".") for c in range(256))
_LOOK = 4096
"""A text whose last this many characters hold an ASCII capital is scanned as it is."""
_MOST_CAPITALS = 4096
"""Past this many ASCII capitals, a pattern that starts with one is scanned for."""


@functools.lru_cache(maxsize=256)
def capital_first(source: str, flags: int) -> bool:
    """Whether every match of the pattern starts with an ASCII capital: its parse tree starts
    with the class ``[A-Z]`` alone, and it is not case-insensitive."""
    if _parser is None:
        return False
    try:
        parsed = _parser.parse(source, flags)
        items, flags = list(parsed), parsed.state.flags
    except (AttributeError, TypeError, ValueError, re.error):
        return False
    first = (_parser.IN, [(_parser.RANGE, (65, 90))])
    return not flags & re.IGNORECASE and bool(items) and items[0] == first


def capital_matches(
    regex: re.Pattern[str],
    text: str,
    at: Callable[[str, list[int]], list[re.Match[str]]],
    most: int,
) -> list[re.Match[str]] | None:
    """What ``regex.finditer(text)`` gives, for a pattern whose every match starts with an
    ASCII capital (:func:`capital_first`) in a large text whose capitals are few and none in
    its last ``_LOOK`` characters (prose, then a dump in lower case): ``at`` (``Rule._at``)
    tries the regex at each capital in order, none inside a match found, instead of a scan
    of every character of the text. None where that does not hold, or for ``most`` matches
    or more."""
    if len(text) < 2 * _LOOK or _CAPITAL.search(text, len(text) - _LOOK):
        return None
    if not capital_first(regex.pattern, regex.flags):
        return None
    marks = one_byte(text).translate(_CAPITALS)
    if marks.count(b"X") > _MOST_CAPITALS:
        return None
    found = at(text, [m.start() for m in re.finditer(b"X", marks)])
    return found if len(found) < most else None
