"""Did-you-mean: the existing names nearest to one that is missing."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["similar_names"]


def _distance(a: str, b: str) -> int:
    """Edit distance counting a swap of two neighbours as one edit (optimal string alignment)."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i]
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            best = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                best = min(best, prev2[j - 2] + 1)
            row.append(best)
        prev2, prev = prev, row
    return prev[-1]


def similar_names(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` of ``candidates`` that ``name`` was probably meant to be, nearest first.

    A candidate counts when it is within a few edits (a typo, a swapped pair,
    another suffix: ``app.cfg`` -> ``app.conf``) or differs only in case.
    """
    if not name:
        return []
    folded = name.casefold()
    scored: list[tuple[int, float, str]] = []
    limit = max(2, len(name) // 3)
    for cand in set(candidates):
        if cand == name or abs(len(cand) - len(name)) > limit + 2:
            continue
        if cand.casefold() == folded:
            scored.append((0, 1.0, cand))
            continue
        ratio = difflib.SequenceMatcher(None, name, cand).ratio()
        if ratio < 0.6:
            continue
        dist = _distance(name, cand)
        if dist <= limit or ratio >= 0.75:
            scored.append((dist, -ratio, cand))
    scored.sort()
    return [cand for _, _, cand in scored[:n]]
