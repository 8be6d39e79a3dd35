"""Rule verifier: a 0/1 verdict and partial scores for a predicted observation.

Ground-truth content falls into three tiers, and each tier is held to what a
world model can know:

* ``deterministic``: follows from the actions and the history (a file the
  trajectory wrote, an error message, a computed value); must match exactly
  after whitespace normalisation.
* ``runtime``: metadata that changes from run to run (timestamps, PIDs,
  UUIDs, hashes, durations, sizes, temp paths, container ids); masked by
  :mod:`.masking`, so only its format is checked.
* ``environment``: content that existed before the trajectory (``uname``,
  ``/etc``, a listing of a pre-existing folder, a freshly opened web page);
  checked for format and plausibility only (present when expected, similar
  size, no invented errors).

Each domain adds a format check: the shell prompt and command echo for
terminal and SWE, valid JSON matching the tool's schema (declared, else the
one the ground truth implies) for MCP, a tree structure for the GUI domains
(Android, web, OS). The verdict is 1 exactly when the format check and every
tier pass. Partial scores: ``masked_exact`` (1.0 when the masked, normalised
texts are equal) and ``line_f1`` (multiset F1 over masked, normalised lines).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from aw_lookahead.trajectory import Action, Domain, TurnSample, action_text

from .gui import check_tree
from .mcp import check_json
from .scores import line_f1, masked_exact, partial_scores
from .shell import check_shell
from .tiers import TierResult, text_tiers

__all__ = ["RuleResult", "TierResult", "line_f1", "masked_exact", "verify", "verify_sample"]


class RuleResult(BaseModel):
    """The rule verdict for one prediction, with its evidence."""

    verdict: int  # 1 = pass, 0 = fail
    format_ok: bool
    format_issues: list[str] = Field(default_factory=list)
    tiers: dict[str, TierResult] = Field(default_factory=dict)
    masked_exact: float = 0.0
    line_f1: float = 0.0

    def summary(self) -> str:
        """One line for humans and for the judge's anchor."""
        parts = [
            f"rule verdict {'PASS' if self.verdict else 'FAIL'}",
            f"format {'ok' if self.format_ok else 'bad'}",
        ]
        for name, tier in self.tiers.items():
            if tier.total or tier.issues:
                parts.append(f"{name} {tier.matched}/{tier.total}")
        parts.append(f"masked exact {self.masked_exact:.0f}, line F1 {self.line_f1:.2f}")
        issues = self.format_issues + [i for t in self.tiers.values() for i in t.issues]
        if issues:
            parts.append("issues: " + "; ".join(issues[:4]))
        return ", ".join(parts)


def verify_sample(sample: TurnSample, prediction: str) -> RuleResult:
    """:func:`verify` with the domain, action, context and tools taken from ``sample``."""
    history = sample.history
    context = "\n".join(
        [history.initial_state or "", history.task or ""]
        + [action_text(t.action) + "\n" + t.observation for t in history.turns]
    )
    return verify(
        history.domain,
        prediction,
        sample.observation,
        action=sample.action,
        context=context,
        tools=history.tools,
    )


def verify(
    domain: Domain | str,
    prediction: str,
    truth: str,
    *,
    action: Action = "",
    context: str = "",
    tools: list[dict[str, Any]] | None = None,
) -> RuleResult:
    """Check ``prediction`` against ``truth`` for one turn of ``domain``.

    ``context`` is the text of the earlier turns (for deciding what is
    deterministic), ``tools`` the tool definitions (MCP output schemas).
    """
    dom = Domain.parse(domain)
    shell = dom in (Domain.TERMINAL, Domain.SWE)
    fmt: list[str]
    if shell:
        fmt, tiers = check_shell(prediction, truth, action, context)
        no_echo = not tiers["deterministic"].total and not tiers["environment"].total
        if no_echo and dom is Domain.SWE:
            tiers = text_tiers(prediction, truth, context + "\n" + action_text(action))
    elif dom is Domain.MCP:
        fmt, json_tiers = check_json(prediction, truth, action, context, tools)
        if json_tiers is None:
            fmt = []
            tiers = text_tiers(prediction, truth, context + "\n" + action_text(action))
        else:
            tiers = json_tiers
    elif dom in (Domain.ANDROID, Domain.WEB, Domain.OS):
        fmt = check_tree(prediction, truth)
        tiers = text_tiers(prediction, truth, context)
    else:  # search: result pages come from the environment
        fmt = [] if prediction.strip() or not truth.strip() else ["empty prediction"]
        tiers = text_tiers(prediction, truth, context + "\n" + action_text(action))
    ok = not fmt and all(t.ok for t in tiers.values())
    exact, f1 = partial_scores(prediction, truth, shell=shell)
    return RuleResult(
        verdict=int(ok),
        format_ok=not fmt,
        format_issues=fmt,
        tiers=tiers,
        masked_exact=exact,
        line_f1=round(f1, 4),
    )
