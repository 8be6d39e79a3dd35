"""The outcome line of a target: where a turn's result shows first.

A world-model target mostly repeats what the context already says (the
observation marker, the echoed ``$ command``) or copies file text; whether
the action failed is decided in one place, the first line of its output
(``cat: x: No such file ...``, ``Error: ...`` or the first line of the real
content). The gate reads ``p_failure`` at that line's first token
(:func:`~aw_lookahead.prompts.output_start`), so the trainer can give that
line more weight (``TrainConfig.lead_weight``). Guarantees: the span starts
inside the target's content and runs through the line's end: its newline, or,
on the content's last line, one character past the content, where the
template's end-of-turn token starts. So "no output at all" (an empty
observation, or only the echoed command) is weighted as the end-of-turn token.
"""

from __future__ import annotations

from collections.abc import Sequence

from aw_lookahead.prompts import output_start, parse_reply

__all__ = ["lead_token_spans", "outcome_chars"]


def outcome_chars(content: str) -> tuple[int, int] | None:
    """Character span of ``content``'s outcome line (see the module docstring); None when the
    parsed observation cannot be found in ``content``."""
    observation = parse_reply(content).observation
    if observation:
        at = content.rfind(observation)
        if at < 0:
            return None
        begin = at + output_start(observation)
    else:
        begin = len(content)
    newline = content.find("\n", begin)
    return begin, len(content) + 1 if newline < 0 else newline + 1


def lead_token_spans(
    text: str,
    contents: Sequence[tuple[int, str]],
    offsets: Sequence[tuple[int, int]],
    labels: Sequence[int],
    ignore: int,
) -> tuple[tuple[int, int], ...]:
    """Token spans ``[start, end)`` of the outcome lines of ``contents``.

    ``contents`` pairs each target's character start in ``text`` with its
    content; ``offsets`` are the tokens' character offsets; only labelled
    tokens (``labels[k] != ignore``) count.
    """
    ranges: list[tuple[int, int]] = []
    for start, content in contents:
        at = text.find(content, start) if content else -1
        found = outcome_chars(content) if at >= 0 else None
        if found is not None:
            ranges.append((at + found[0], at + found[1]))
    spans: list[tuple[int, int]] = []
    for k, (s, _e) in enumerate(offsets[: len(labels)]):
        if labels[k] == ignore or not any(a <= s < b for a, b in ranges):
            continue
        if spans and spans[-1][1] == k:
            spans[-1] = (spans[-1][0], k + 1)
        else:
            spans.append((k, k + 1))
    return tuple(spans)
