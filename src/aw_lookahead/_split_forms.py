"""The forms of a rule's pattern that one ``split`` reads a dense text with.

:func:`split_form` rewrites a rule's pattern, without changing where it matches,
so that ``split`` hands back per match just the texts the caller needs: the
text before the value (:func:`with_heads`), the value groups, or the whole
match. The rewrites read the pattern's parentheses (:func:`_parens`) and give
up (None) where a pattern is written otherwise than that simple scan can tell.
:func:`value_split_form` puts in a rule's own form of its alternative values
(bare and quoted), one group holding the value whichever alternative took it.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

__all__ = [
    "HEAD",
    "VALUE",
    "WHOLE",
    "ValueForm",
    "known_head",
    "optional_as_branch",
    "split_form",
    "value_split_form",
    "with_heads",
]


@functools.lru_cache(maxsize=64)
def split_form(
    source: str,
    flags: int,
    lead: tuple[str, ...],
    words: tuple[str, ...],
    capture: tuple[str, ...],
    head_of: str = "",
    whole: bool = False,
    kept: str = "",
) -> re.Pattern[str] | None:
    """``source`` (``(?i)(?:w1|w2|…)rest``, led by the words ``lead``; as it is without
    ``lead``) led by ``words`` only (the lead words that can occur), its named groups other
    than ``capture`` made non-capturing (each costs ``split`` a list item per match),
    without ``(?i)`` when ``flags`` has no IGNORECASE (for text already in lower case);
    with ``head_of``, the text before that group in a match captured too
    (:func:`with_heads`), but for the word when it is known (:func:`known_head`); with
    ``whole``, the whole match captured first (group ``aw_whole``); with ``kept``, no
    captured group taking a value that starts with it (in this case). None when that
    cannot be made."""
    rest = source[len("(?i)(?:" + "|".join(lead) + ")") :] if lead else source
    for name in re.compile(source).groupindex:
        if name not in capture:
            rest = rest.replace(f"(?P<{name}>", "(?:")
        elif kept:
            rest = rest.replace(f"(?P<{name}>", f"(?!(?-i:{re.escape(kept)}))(?P<{name}>")
    body = "(?:" + "|".join(words) + ")" + rest if lead else rest
    if head_of:
        headed = with_heads(body, head_of, len(body) - len(rest) if known_head(words, flags) else 0)
        if headed is None:
            return None
        body = headed
    if whole:
        if WHOLE in source:
            return None
        body = f"(?P<{WHOLE}>{body})"
    return re.compile(("(?i)" if flags & re.IGNORECASE else "") + optional_as_branch(body))


WHOLE = "aw_whole"
"""The name of the group that holds the whole match in a split (``whole``)."""
HEAD = "aw_head"
"""The names of the groups :func:`with_heads` adds: ``aw_head0``, ``aw_head1``, …"""


def known_head(words: tuple[str, ...], flags: int) -> bool:
    """Whether every match starts with one known text: one literal word, case-sensitive.
    (Each text a capture holds costs ``split`` a string per match.)"""
    return len(words) == 1 and not flags & re.IGNORECASE and re.escape(words[0]) == words[0]


def with_heads(source: str, name: str, skip: int = 0) -> str | None:
    """``source`` (no global flags) with the text before group ``name`` in a match captured
    by groups ``aw_head0``, ``aw_head1``, … (in order: their texts joined are that text),
    but for its first ``skip`` characters (whole items at the top level).

    At each level from the top down to the group, the items of the alternative that
    holds the way down, before it, are wrapped in one group (which changes no match).
    None when the pattern is read otherwise than this simple scan of its parentheses
    can tell (verbose mode, comments, a look-around or conditional on the way)."""
    if "(?x" in source or "(?#" in source or HEAD in source:
        return None
    closes, bars = _parens(source)
    target = source.find(f"(?P<{name}>")
    if target not in closes:
        return None  # not found, or not where a group opens
    path = [o for o in sorted(closes) if o < target < closes[o]] + [target]
    inserts: list[tuple[int, str]] = []
    for level, (container, child) in enumerate(zip([-1, *path], path, strict=False)):
        start = _content_start(source, container) if container >= 0 else skip
        if start is None:
            return None
        start = max([start, *(b + 1 for b, inside in bars if inside == container and b < child)])
        inserts += [(start, f"(?P<{HEAD}{level}>"), (child, ")")]
    for at, piece in sorted(inserts, key=lambda item: (item[0], item[1] == ")"), reverse=True):
        source = source[:at] + piece + source[at:]
    return source


def _content_start(source: str, group: int) -> int | None:
    """Where the items of the group opening at ``group`` start (-1: the whole pattern);
    None for a look-around, conditional or back-reference group."""
    if group < 0:
        return 0
    if source[group + 1] != "?":
        return group + 1
    head = re.match(r"\(\?(?::|>|P<\w+>|[aiLmsux-]+:)", source[group:])
    return None if head is None else group + head.end()


VALUE = "aw_value"
"""The group that holds the value in a :func:`value_split_form`."""


class ValueForm(NamedTuple):
    """A rule's own form of the alternative values its pattern ends in (bare, quoted), for
    a dense split (:func:`value_split_form`), and what stands before every value."""

    end: str
    """The end of the rule's pattern, as written there: the alternatives, each holding one
    of the value groups."""
    openers: str
    """The same alternatives up to the value (what opens it: a quote), tried in the same
    order, with a group for each that the value's form below tells apart."""
    value: str
    """The value in one group (:data:`VALUE`), whichever alternative took it, and what
    follows it (a closing quote) looked ahead at: the match ends with the value."""
    signs: tuple[str, ...] = ()
    """Lower-case texts one of which stands in every match right before the value, but for
    whitespace and one opening quote (``"``, ``'``, either after a backslash, ``%22``,
    ``%27``); empty when the rule has none."""


@functools.lru_cache(maxsize=64)
def value_split_form(
    source: str,
    flags: int,
    lead: tuple[str, ...],
    words: tuple[str, ...],
    value_form: ValueForm,
) -> re.Pattern[str] | None:
    """``source`` (as for :func:`split_form`: led by ``words`` only, without ``(?i)`` when
    ``flags`` has no IGNORECASE), which ends in ``value_form.end``, rewritten as
    ``(?P<aw_head0>…openers)value``: the text before the value in group ``aw_head0`` and
    the value in group :data:`VALUE`, whichever alternative took it. None when the pattern
    does not end so, or has a group of its own before that end (or flags of its own)."""
    end, openers, value, _ = value_form
    if not end or not source.endswith(end):
        return None
    rest = source[len("(?i)(?:" + "|".join(lead) + ")") :] if lead else source
    before = rest[: len(rest) - len(end)]
    if "(?P" in before or re.match(r"\(\?[aiLmsux]+\)", before):
        return None
    body = ("(?:" + "|".join(words) + ")" if lead else "") + before
    form = re.compile(
        ("(?i)" if flags & re.IGNORECASE else "")
        + optional_as_branch(f"(?P<{HEAD}0>{body}{openers}){value}")
    )
    return form if VALUE in form.groupindex else None


def optional_as_branch(source: str) -> str:
    """``source`` with each greedy optional non-capturing group ``(?:x)?`` written
    ``(?:x|)``: the same matches, tried in the same order (``x`` first, then nothing), and
    the same groups, but a branch where ``re`` ran a repeat (its state saved at each try):
    ``README.md`` before a MiB of ``password=…``, three such groups a match, 20.3 → 16.1
    ms for the split. Lazy (``??``) and possessive (``?+``) ones are left as they are."""
    closes, _ = _parens(source)
    ends = sorted(
        close
        for opening, close in closes.items()
        if source.startswith("(?:", opening)
        and source[close + 1 : close + 2] == "?"
        and source[close + 2 : close + 3] not in ("?", "+")
    )
    if not ends:
        return source
    pieces, done = [], 0
    for close in ends:
        pieces += [source[done:close], "|)"]
        done = close + 2
    return "".join(pieces) + source[done:]


def _parens(source: str) -> tuple[dict[int, int], list[tuple[int, int]]]:
    """Where each group of ``source`` opens and closes, and each ``|`` with the group it is
    in (-1: the whole pattern), skipping escapes and character classes."""
    closes: dict[int, int] = {}
    bars: list[tuple[int, int]] = []
    stack = [-1]
    i = 0
    while i < len(source):
        char = source[i]
        if char == "\\":
            i += 1
        elif char == "[":
            i += 2 if source.startswith("[^", i) else 1
            i += source[i] == "]"
            while source[i] != "]":
                i += 2 if source[i] == "\\" else 1
        elif char == "(":
            stack.append(i)
        elif char == ")":
            closes[stack.pop()] = i
        elif char == "|":
            bars.append((i, stack[-1]))
        i += 1
    return closes, bars
