"""A dense rule led by secret names read with one ``split``: no match object each.

:func:`split_values` runs one ``split`` of the rule's pattern, rewritten so
that its groups hold, per match, the text before the value
(:func:`~aw_lookahead._split_forms.with_heads`) and the value, the text after it
being one fixed text (:func:`~aw_lookahead._pattern_forms.value_tails`, read from
the parse tree);
where values come from several groups (bare and quoted mixed), the whole match
and every value group are captured instead (:func:`_by_wholes`), each value's
tail that of its group. Which value gets which stand-in is decided by the
caller (:class:`~aw_lookahead._rule_application.RuleApplication`), once per
distinct value. Where a later rule's values are all placeholders already, the
text is kept without a split (:func:`_all_kept`).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Collection
from itertools import chain, compress, islice, repeat

from . import _bulk_redaction
from ._folded_split import Last, letters_first, split_folded
from ._pattern_forms import _CASE_APART, WORD_CHARS, value_tails
from ._secret_rule import Rule
from ._split_forms import HEAD, VALUE, WHOLE, known_head, split_form, value_split_form

__all__ = ["split_values"]

_EVERY = 64
"""A lead-word rule is read by ``split`` when its words occur once per this many characters."""
_PROBE = 512
"""The first matches read to tell whether a dense rule's values are many distinct ones."""
_SAMPLE = 16384
"""How much of a text tells whether a word-led rule is dense in it."""


def _dense(lower: str, words: Collection[str]) -> bool:
    """Whether ``words`` occur once per ``_EVERY`` characters or more in eight stripes of
    ``lower`` spread over it, ``_SAMPLE`` characters in all: a text where they are many is
    told at little cost from one where they are few."""
    step = max(len(lower) // 8, 1)
    width = min(_SAMPLE // 8, step)
    starts = range(0, len(lower), step)
    found = sum(lower.count(word, at, at + width) for at in starts for word in words)
    return found * _EVERY >= len(starts) * width


_Split = tuple[list[str], list[list[str]], list[str], str | list[str]]


def split_values(
    rule: Rule,
    text: str,
    lower: str,
    has: Callable[[str], bool],
    kept: str = "",
    last: Last | None = None,
) -> _Split | None:
    """:func:`_split`, for a rule with a word-start check too when every match it finds
    follows a gap ending in no ASCII letter, digit or underscore (or starts the text):
    then each passes the check, and the matches are those :meth:`Rule.matches` keeps.
    ``last`` tells where a word last is, when known (see
    :func:`~aw_lookahead._folded_split.split_folded`)."""
    if rule.word_start and rule.lead:
        return None
    split = _split(rule, text, lower, has, kept, last)
    if split is not None and split[2] and rule.word_start and not _words_start(split[0]):
        return None
    return split


def _words_start(gaps: list[str]) -> bool:
    """Whether each match after ``gaps[i]`` (``i`` < the last) follows no word character:
    ``gaps[0]`` is empty (the text's start) or ends in none, later gaps are not empty
    (a match right after another is left to :meth:`Rule.matches`) and end in none."""
    if gaps[0] and gaps[0][-1] in WORD_CHARS:
        return False
    inner = gaps[1:-1]
    if inner and inner[0] == inner[-1] and inner.count(inner[0]) == len(inner):
        return inner[0] != "" and inner[0][-1] not in WORD_CHARS  # one gap (a line's end)
    if "" in inner:
        return False
    return WORD_CHARS.isdisjoint(map(operator.itemgetter(-1), inner))


def _split(
    rule: Rule,
    text: str,
    lower: str,
    has: Callable[[str], bool],
    kept: str = "",
    last: Last | None = None,
) -> _Split | None:
    """A dense lead-word rule's matches in ``text`` (or a dense rule's, see :func:`_unled`)
    read with one ``split`` (texts, no match object each): the stretches between matches,
    the part of each match before its value
    (in pieces: one list per piece), the values, and the text after each value (one fixed
    text for all, or, when values come from several groups, one per match, each its
    group's fixed text). None when the rule's words occur less than once per ``_EVERY``
    characters (:func:`_dense`), its first matches hold few distinct values (then deciding
    goes match by match), or its values cannot be read this way (a value check, a
    value group with no fixed tail, an empty value): then :meth:`Rule.matches`. Where
    every value starts with ``kept`` (:func:`_all_kept`), no match is read: the text is
    one stretch (each match would be kept as it is).

    The matches are the pattern's on ``text``, what :meth:`Rule.matches` gives, in a text
    where each character lower-cases to one that case-insensitive matching takes it for
    (none of ``_CASE_APART``; other texts are left to :meth:`Rule.matches`): so its
    alternation of lead words keeps only those in ``lower``, and a text already in lower
    case is read without ``(?i)``, as :attr:`Rule.scan` is (the pattern is written in
    lower case)."""
    if not rule.groups or rule.accept is not None:
        return None
    source, flags = rule.regex.pattern, rule.regex.flags
    tails = value_tails(source, flags, rule.groups)
    if not rule.lead:
        scan = _unled(rule, lower, has)
        if scan is None:
            return None
        on, words, scan_flags = text, tuple[str, ...](), rule.regex.flags
        starts = words
    else:
        literals = [literal for literal, _ in rule.branches]
        roots = list(filter(has, rule.roots))
        if rule.roots and not lower.isascii() and not _dense(lower, roots):
            return None  # every match starts with a root, which Rule.matches looks up anyway
        present = [has(literal) for literal in literals]
        if not _dense(lower, set(compress(literals, present))):
            return None
        if len(lower) != len(text) or any(c in text for c in _CASE_APART):
            return None  # where a word may match but its anchor not be in ``lower``
        words = tuple(compress(rule.lead, present))
        starts = tuple(compress(literals, present))
        if text == lower:
            flags &= ~re.IGNORECASE
        scan_flags = flags & ~re.IGNORECASE
        scan = split_form(source, scan_flags, rule.lead, words, rule.groups)
        on = lower  # the same spans as in ``text``
    assert scan is not None
    probe = list(islice(scan.finditer(on), _PROBE))
    firsts = [next(filter(None, map(_read(text), map(m.span, rule.groups))), "") for m in probe]
    if kept and _all_kept(rule, (on, text, lower), words, scan_flags, kept, probe, firsts):
        return [text], [], [], ""
    if len(set(firsts)) < _bulk_redaction._DECIDE_ALL or "" in firsts:
        return None
    name = next(g for g in rule.groups if probe[0].group(g))  # its value is not empty
    if name not in tails:
        return None
    if any(not m.group(name) for m in probe):
        return _by_wholes(rule, text, words, flags, tails, (starts, last))
    capture = rule.groups[: rule.groups.index(name) + 1]
    pattern = split_form(source, flags, rule.lead, words, capture, name)
    if pattern is None:
        return None
    named: list[str] = []
    parts = split_folded(pattern, text, words, starts, last, named)
    step = pattern.groups + 1
    many = len(parts) // step
    index = pattern.groupindex
    for group in capture[:-1]:
        earlier = parts[index[group] :: step]
        if earlier.count(None) + earlier.count("") != many:
            return _by_wholes(rule, text, words, flags, tails, (starts, last))
    values = parts[index[name] :: step]
    if not all(values):  # one pass where every value is there (the usual case)
        if "" in values:
            return None
        return _by_wholes(rule, text, words, flags, tails, (starts, last))
    levels = sum(head.startswith(HEAD) for head in index)
    heads = [parts[index[f"{HEAD}{level}"] :: step] for level in range(levels)]
    if known_head(words, flags):
        heads.insert(0, [words[0]] * many)
    elif named:
        heads.insert(0, named)  # each match's word, where its head lacks it
    return parts[0::step], heads, values, tails[name]


def _all_kept(
    rule: Rule,
    texts: tuple[str, str, str],
    words: tuple[str, ...],
    flags: int,
    kept: str,
    probe: list[re.Match[str]],
    firsts: list[str],
) -> bool:
    """Whether the value of every match in ``on`` (``texts``: it, ``text`` and ``lower``;
    ``on`` is one of them) starts with ``kept``, given that the values of the first
    (``probe``, ``firsts``) do: they are all the matches, or the pattern with a value not
    starting with it (:func:`~aw_lookahead._split_forms.split_form`) is found nowhere after
    them. (Where the pattern matches with such a value, that form matches there or before.)
    In ``lower``, ``kept`` is looked for in lower case when each of its places there is one
    in ``text``. Before that search, the signs that stand before every value
    (:attr:`ValueForm.signs <aw_lookahead._split_forms.ValueForm.signs>`) are counted:
    where each is followed right away by ``kept`` (:func:`_signs_kept`), so is every
    value, and the search is not needed."""
    if not firsts or not all(map(operator.methodcaller("startswith", kept), firsts)):
        return False
    if len(probe) < _PROBE:
        return True
    on, text, lower = texts
    mark = kept
    if on is not text:
        mark = kept.lower()
        if text.count(kept) != lower.count(mark):
            return False
    signs = rule.value_form.signs if rule.value_form is not None else ()
    if _signs_kept(on, signs, mark, probe[-1].end()):
        return True
    form = split_form(rule.regex.pattern, flags, rule.lead, words, rule.groups, kept=mark)
    return form is not None and form.search(on, probe[-1].end()) is None


def _signs_kept(on: str, signs: tuple[str, ...], mark: str, start: int) -> bool:
    """Whether every place of each of ``signs`` in ``on`` from ``start`` on is followed
    right away by ``mark``, told by counting: ``sign + mark`` holds ``sign`` only at its
    start and ``sign`` cannot overlap itself, so each place of ``sign + mark`` is one of
    ``sign`` and the counts agree only when all are. Then in a match from ``start`` on,
    its value, which follows one of ``signs`` but for whitespace and one opening quote,
    starts with ``mark`` when that starts with neither (the sign's place is followed by
    ``mark``, so the whitespace and quote are empty)."""
    if not signs or not mark or mark[0].isspace() or mark[0] in "\"'\\%":
        return False
    for sign in signs:
        whole = sign + mark
        if not sign or whole.find(sign, 1) >= 0:
            return False
        if any(sign[k:] == sign[: len(sign) - k] for k in range(1, len(sign))):
            return False
        if on.find(sign[0], start) >= 0 and on.count(sign, start) != on.count(whole, start):
            return False  # (a sign whose first character is absent is not counted)
    return True


def _unled(rule: Rule, lower: str, has: Callable[[str], bool]) -> re.Pattern[str] | None:
    """For a rule not led by words, its pattern with only value groups capturing, when it
    can be split: not anchored (found by the regex engine's own scan, as ``split`` finds
    it), no flag for the whole pattern, context-free hints (each match holds one) that
    occur once per ``_EVERY`` characters or more; else None."""
    source = rule.regex.pattern
    if rule.anchored or rule.near or not rule.hints or source.startswith("(?"):
        return None
    if rule.regex.flags & re.IGNORECASE or not _dense(lower, list(filter(has, rule.hints))):
        return None
    return split_form(source, rule.regex.flags, (), (), rule.groups)


def _read(text: str) -> Callable[[tuple[int, int]], str]:
    """The text of a span of ``text`` (empty for a group that did not take part)."""
    return lambda span: text[span[0] : span[1]]


def _by_wholes(
    rule: Rule,
    text: str,
    words: tuple[str, ...],
    flags: int,
    tails: dict[str, str],
    known: tuple[tuple[str, ...], Last | None] = ((), None),
) -> _Split | None:
    """:func:`split_values` where values come from several groups (bare and quoted mixed):
    one ``split`` capturing each whole match and every value group; the value of a match
    is the one group that took part in it (None when not exactly one did, when it is
    empty, or when it has no fixed tail), the text before it the whole match less the
    value and its group's tail.

    Where every match starts with one of ``words`` (with a letter) and the rule has a
    :attr:`~aw_lookahead._secret_rule.Rule.value_form`, that form is split instead: one
    group holds the value, whichever alternative took it, one the text before it, and
    what follows the value (its closing quote) stays in the stretch after the match,
    where no match can start. ``known``: the text each match led by each of ``words``
    starts with, and where one last is, when known (see :func:`split_folded`)."""
    source = rule.regex.pattern
    if rule.value_form and letters_first(words):
        form = value_split_form(source, flags, rule.lead, words, rule.value_form)
        if form is not None:
            named: list[str] = []
            parts = split_folded(form, text, words, *known, named)
            step, index = form.groups + 1, form.groupindex
            values = parts[index[VALUE] :: step]
            if all(values):  # none absent (None), none empty
                heads = [*([named] if named else []), parts[index[f"{HEAD}0"] :: step]]
                return parts[0::step], heads, values, ""
    if not set(rule.groups) <= set(tails):
        return None
    pattern = split_form(source, flags, rule.lead, words, rule.groups, whole=True)
    if pattern is None:
        return None
    parts = pattern.split(text)
    step = pattern.groups + 1
    index = pattern.groupindex
    wholes = parts[index[WHOLE] :: step]
    many = len(wholes)
    columns = [parts[index[g] :: step] for g in rule.groups]
    absent = set(map(tuple.count, zip(*columns, strict=True), repeat(None)))
    if absent != {len(columns) - 1}:
        return None  # some match has no value group, or more than one
    values = list(filter(None, chain.from_iterable(zip(*columns, strict=True))))
    if len(values) != many:
        return None  # an empty value (left out here)
    cut = list(map(str.rpartition, wholes, values))
    ends = list(map(operator.itemgetter(2), cut))
    # The last occurrence of a value in its match is the value unless it overlaps the
    # tail; then that tail would be shorter than its group's, and so their sum.
    taken = [many - column.count(None) for column in columns]
    fixed = sum(len(tails[g]) * times for g, times in zip(rule.groups, taken, strict=True))
    if sum(map(len, ends)) != fixed:
        return None
    return parts[0::step], [list(map(operator.itemgetter(0), cut))], values, ends
