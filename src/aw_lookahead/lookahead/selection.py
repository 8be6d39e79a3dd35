"""How :meth:`Lookahead.select <aw_lookahead.lookahead.Lookahead.select>` orders what it
decided and says why: the survivors ranked, the pruned after them, one chosen.

The rule: survivors (not vetoed) are ordered by
``score``, highest first, ties by candidate order. ``score`` is the judges'
progress when any judge gives one (an :class:`LLMJudge`); otherwise a
deterministic heuristic: 0.75 for a predicted success, 0.5 unknown, 0.1 no-op,
0 failure/risky, minus 0.05 per warning signal and plus 0.05 per success
signal, clipped to [0, 1]. Unsimulated survivors (unchecked, allowed by ``on_error``) rank last.

Plain functions of the step's decisions, apart from :mod:`.engine` so that the
scheduling and the ranking rule read separately.
"""

from __future__ import annotations

from .types import Decision, DecisionKind, SelectResult

__all__ = ["ranked_selection", "unsimulated_selection"]


def _safer_first(d: Decision) -> tuple[bool, float, float, bool, bool, int]:
    """Rank key of a surviving candidate: simulated before unchecked, higher score first;
    on a tie the safer one first (lower p_failure, certain, no destructive effect)."""
    return (
        d.kind is DecisionKind.UNSIMULATED,
        -(d.score or 0.0),
        d.p_failure or 0.0,
        d.uncertain,
        d.destructive_effect is not None,
        d.index,
    )


def ranked_selection(decisions: list[Decision], candidates: int) -> SelectResult:
    """The result of a simulated ``select`` over ``candidates`` actions: survivors (not vetoed)
    ranked by :func:`_safer_first` (each marked ``metadata["rank"]``), then the pruned."""
    ordered = sorted((d for d in decisions if d.executes), key=_safer_first)
    survivors = [
        d.model_copy(update={"metadata": {**d.metadata, "rank": rank}})
        for rank, d in enumerate(ordered)
    ]
    pruned = [d for d in decisions if not d.executes]
    chosen = survivors[0] if survivors else None
    if chosen is not None:
        how = f"score {chosen.score:.2f}" if chosen.score is not None else "unsimulated"
        reason = (
            f"candidate {chosen.index} of {candidates} chosen ({how}, predicted "
            f"{chosen.outcome.value}); {len(pruned)} pruned"
        )
    else:
        why = "; ".join(f"#{d.index}: {d.reason}" for d in pruned[:8])
        reason = f"all {candidates} candidates were pruned: {why}"
    return SelectResult(decisions=survivors + pruned, chosen=chosen, pruned=pruned, reason=reason)


def unsimulated_selection(decided: list[Decision]) -> SelectResult:
    """The result of ``select`` under ``simulate="never"``: the first candidate the
    action-level judges allow, or none when every one may be destructive."""
    kept = [d for d in decided if d.executes]
    blocked = [d for d in decided if not d.executes]
    return SelectResult(
        decisions=kept + blocked,
        chosen=kept[0] if kept else None,
        pruned=blocked,
        reason="simulate='never': the first candidate the action-level judges allow"
        if kept
        else "simulate='never': every candidate may be destructive",
    )
