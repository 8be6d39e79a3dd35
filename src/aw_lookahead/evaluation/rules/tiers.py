"""Tier results, the plausibility check and the generic text tiers.

The layer under :mod:`.verifier` and the domain rules (:mod:`.shell`,
:mod:`.mcp`): it imports only :mod:`.masking`, so the domain rules build tier
results without importing the verifier that calls them. :func:`text_tiers`
is what the verifier falls back to for every domain without its own tiers.
"""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel, Field

from .masking import mask, normalize_ws

__all__ = ["TierResult", "masked_lines", "plausibility", "text_tiers"]


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


def text_tiers(prediction: str, truth: str, context: str) -> dict[str, TierResult]:
    """Generic tiers: masked lines are runtime, lines seen in the context deterministic,
    the rest environment (format and plausibility only)."""
    pred_lines = Counter(masked_lines(prediction))
    ctx = normalize_ws(mask(context))
    det, env, run = TierResult(), TierResult(), TierResult()
    for raw in normalize_ws(truth).split("\n"):
        if not raw:
            continue
        line = normalize_ws(mask(raw))
        tier = run if line != raw else (det if line in ctx else env)
        tier.total += 1
        if pred_lines[line] > 0:
            pred_lines[line] -= 1
            tier.matched += 1
        elif tier is env:
            tier.matched += 1
        else:
            tier.issues.append(f"missing line {line[:60]!r}")
    env.issues.extend(plausibility(prediction, truth))
    return {"deterministic": det, "runtime": run, "environment": env}
