"""Text-overlap measures shared by the evaluator (line F1) and shadow mode (token divergence)."""

from __future__ import annotations

from collections import Counter

__all__ = ["multiset_f1"]


def multiset_f1(predicted: Counter[str], truth: Counter[str]) -> float:
    """F1 of two multisets (lines, tokens): 1.0 when both are empty, 0.0 with nothing shared."""
    if not predicted and not truth:
        return 1.0
    overlap = sum((predicted & truth).values())
    if overlap == 0:
        return 0.0
    precision = overlap / sum(predicted.values())
    recall = overlap / sum(truth.values())
    return 2 * precision * recall / (precision + recall)
