"""GUI rules (Android, web, desktop OS): the prediction must keep the tree structure.

Markup trees (XML view hierarchies, HTML) must parse and stay about as
balanced as the ground truth; indented trees (accessibility trees) must not
skip indentation levels and must keep element ids when the ground truth has
them.
"""

from __future__ import annotations

import itertools
import re
from html.parser import HTMLParser

__all__ = ["check_tree"]

_VOID = frozenset(
    "area base br col embed hr img input link meta param source track wbr".split()  # noqa: SIM905
)
_ELEMENT_ID = re.compile(r"\[\d+\]|\bid=|\bresource-id=|\bbounds=")


class _Balance(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags = 0
        self.stray = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags += 1
        if tag not in _VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.stack:
            while self.stack and self.stack.pop() != tag:
                pass
        else:
            self.stray += 1


def _balance(text: str) -> tuple[int, int]:
    parser = _Balance()
    parser.feed(text)
    parser.close()
    return parser.tags, len(parser.stack) + parser.stray


def _indents(text: str) -> list[int]:
    return [
        len(line) - len(line.lstrip()) for line in text.expandtabs(4).split("\n") if line.strip()
    ]


def check_tree(prediction: str, truth: str) -> list[str]:
    """Format issues of a GUI state prediction (empty when the structure is fine)."""
    if not prediction.strip():
        return ["empty prediction"] if truth.strip() else []
    if truth.lstrip().startswith("<"):
        tags, broken = _balance(prediction)
        _, gold_broken = _balance(truth)
        if tags == 0:
            return ["no markup elements where the ground truth is a markup tree"]
        if broken > gold_broken + 2:
            return [f"markup tree is unbalanced ({broken} unclosed or stray tags)"]
        return []
    issues = []
    gold = _indents(truth)
    steps = [b - a for a, b in itertools.pairwise(gold) if b > a]
    step = max(steps, default=4)
    pred = _indents(prediction)
    jumps = sum(1 for a, b in itertools.pairwise(pred) if b - a > step)
    if jumps:
        issues.append(f"indentation skips levels {jumps} times (not a tree)")
    if _ELEMENT_ID.search(truth) and not _ELEMENT_ID.search(prediction):
        issues.append("no element ids where the ground truth tree has them")
    return issues
