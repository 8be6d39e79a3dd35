"""Recover the predicted observation from a world-model reply. Never raises.

Order of evidence:

1. A separate reasoning field (vLLM ``--reasoning-parser``) is the reasoning;
   the content is the answer.
2. Thinking is dropped from the content: ``<think>...</think>`` blocks (nested
   ones too), text before a stray ``</think>`` (templates that open the think
   block in the prompt), and an unclosed ``<think>`` to the end.
3. The LAST ``<predicted_observation>...</predicted_observation>`` block wins;
   an unclosed last block (a truncated reply) is taken to the end.
4. Otherwise the text after the last ``**Environment Observation:**``.
5. Otherwise the remaining text, stripped (``method="raw"``).

If thinking swallowed everything (an unclosed ``<think>``), a complete tag
block inside the dropped text is used as a last resort
(``method="tag_in_thinking"``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from .contract import OBSERVATION_MARKER, strip_observation_marker

ParseMethod = Literal["tag", "tag_unclosed", "marker", "raw", "tag_in_thinking", "empty"]

_THINK_TOKEN = re.compile(r"<(/?)think>", re.IGNORECASE)
_OPEN = "<predicted_observation>"
_CLOSE = "</predicted_observation>"
_BLOCK = re.compile(r"<predicted_observation>(.*?)</predicted_observation>", re.DOTALL)


def output_start(observation: str) -> int:
    """Where a predicted observation's output begins: after a terminal's echoed ``$ command``
    line, else at its start. The gate reads ``p_failure`` there and the trainer can weight the
    line that starts there, so both mean the same position."""
    if observation.startswith("$ "):
        newline = observation.find("\n")
        return len(observation) if newline < 0 else newline + 1
    return 0


@dataclass(frozen=True)
class ParsedReply:
    """What the parser recovered. ``observation`` is ``""`` only when nothing was found."""

    observation: str
    reasoning: str | None
    method: ParseMethod
    unclosed: bool = False


def split_thinking(text: str) -> tuple[str, str]:
    """Return ``(answer, thinking)``: the text outside think blocks, and the text inside."""
    answer: list[str] = []
    thinking: list[str] = []
    depth = 0
    pos = 0
    for m in _THINK_TOKEN.finditer(text):
        chunk = text[pos : m.start()]
        (thinking if depth > 0 else answer).append(chunk)
        if m.group(1):  # closing tag
            if depth > 0:
                depth -= 1
            else:
                # A stray close: everything so far was thinking opened by the template.
                thinking.extend(answer)
                answer.clear()
        else:
            depth += 1
        pos = m.end()
    (thinking if depth > 0 else answer).append(text[pos:])
    return "".join(answer), "".join(thinking)


def _clean(obs: str) -> str:
    return strip_observation_marker(obs.strip("\n")).strip("\n")


def _from_answer(answer: str) -> tuple[str, ParseMethod, bool] | None:
    blocks = _BLOCK.findall(answer)
    last_open = answer.rfind(_OPEN)
    last_close = answer.rfind(_CLOSE)
    if last_open != -1 and last_open > last_close:
        return _clean(answer[last_open + len(_OPEN) :]), "tag_unclosed", True
    if blocks:
        return _clean(blocks[-1]), "tag", False
    marker = answer.rfind(OBSERVATION_MARKER)
    if marker != -1:
        return _clean(answer[marker + len(OBSERVATION_MARKER) :]), "marker", False
    return None


def parse_reply(content: str | None, reasoning: str | None = None) -> ParsedReply:
    """Parse a reply's content (and the server's separate reasoning field, if any)."""
    text = content or ""
    answer, thinking = split_thinking(text)
    thoughts = [t.strip() for t in (reasoning, thinking) if t and t.strip()]
    reasoning_text = "\n\n".join(thoughts) or None

    found = _from_answer(answer)
    if found is not None:
        obs, method, unclosed = found
        return ParsedReply(obs, reasoning_text, method, unclosed)
    stripped = answer.strip()
    if stripped:
        return ParsedReply(stripped, reasoning_text, "raw")
    blocks = _BLOCK.findall(thinking)
    if blocks:
        return ParsedReply(_clean(blocks[-1]), reasoning_text, "tag_in_thinking")
    return ParsedReply("", reasoning_text, "empty")
