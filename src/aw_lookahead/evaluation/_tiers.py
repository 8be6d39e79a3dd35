"""Tier results and the plausibility check, shared by the verifier and its domain rules.

The layer under :mod:`.verifier`, :mod:`._shell` and :mod:`._json`: it
imports only :mod:`.masking`, so the domain rules can build tier results
without importing the verifier that calls them.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from .masking import mask, normalize_ws

__all__ = ["TierResult", "masked_lines", "plausibility"]


class TierResult(BaseModel):
    """How one tier fared: ``total`` ground-truth units, ``matched`` of them accepted."""

    total: int = 0
    matched: int = 0
    issues: list[str] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.matched == self.total and not self.issues


def masked_lines(text: str) -> list[str]:
    """The non-empty lines of ``text``, masked and whitespace-normalised."""
    return [line for line in normalize_ws(mask(text)).split("\n") if line]


def plausibility(prediction: str, truth: str) -> list[str]:
    """Format/plausibility checks for content the world model cannot know exactly."""
    issues: list[str] = []
    p, t = masked_lines(prediction), masked_lines(truth)
    if t and not p:
        issues.append("empty where output was expected")
    elif len(t) >= 2 and not (len(t) / 3 - 1 <= len(p) <= len(t) * 3 + 1):
        issues.append(f"{len(p)} lines where about {len(t)} were expected")
    return issues
