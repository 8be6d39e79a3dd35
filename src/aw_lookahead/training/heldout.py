"""Held-out loss while a run trains, and the rule that stops it when the loss stops improving.

A run "until the held-out numbers stop improving" needs those numbers during
the run, from data it does not train on (e.g. the generator's ``validation``
families). :func:`heldout_sums` scores a fixed set of encoded sequences with
the model in eval mode and no gradients; :class:`HeldOutTrack` keeps every
evaluation, the best one, and how many evaluations have passed without
beating it.

Guarantees:

* The held-out set is the same at every evaluation and on every ``resume``
  (:func:`heldout_subset` is a pure function of the samples, the limit and
  the seed), so the numbers of one run are comparable step to step.
* The score is the mean cross-entropy over every label token of the set
  (``loss``) and over its outcome-line tokens (``lead_loss``: the first line
  of each output, where a failure shows), computed as the training loss is.
* An evaluation beats the best only when its metric is lower by more than
  ``min_delta``; the track round-trips through the checkpoint state, so a
  resumed run stops where an uninterrupted one would.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .batches import collate, label_loss, lead_mask, predicted_labels, predicted_lead
from .config import EvalMetric, LossPositions
from .data import EncodedSample

__all__ = [
    "HeldOutTrack",
    "evaluate_heldout",
    "heldout_subset",
    "heldout_sums",
    "metrics_fields",
]


def heldout_subset(
    samples: list[EncodedSample], limit: int | None, seed: int
) -> list[EncodedSample]:
    """At most ``limit`` of ``samples`` (a seeded spread), in their original order."""
    if limit is None or len(samples) <= limit:
        return list(samples)
    chosen = sorted(random.Random(seed).sample(range(len(samples)), limit))
    return [samples[i] for i in chosen]


def heldout_sums(
    torch: Any,
    model: Any,
    samples: list[EncodedSample],
    *,
    pad_id: int,
    device: Any,
    batch_size: int,
    logits: LossPositions,
) -> tuple[float, float, int, int]:
    """Summed cross-entropy over ``samples``' label tokens and outcome-line tokens, and the
    two token counts. The model is put in eval mode for the pass and back in train mode."""
    plain, lead = 0.0, 0.0
    model.eval()
    try:
        with torch.no_grad():
            for i in range(0, len(samples), batch_size):
                chunk = samples[i : i + batch_size]
                batch = collate(torch, chunk, pad_id, device)
                sums = label_loss(torch, model, batch, logits, lead_mask(torch, chunk, device))
                plain += float(sums.plain.float())
                lead += float(sums.lead.float())
    finally:
        model.train()
    labels = sum(predicted_labels(s) for s in samples)
    leads = sum(predicted_lead(s) for s in samples)
    return plain, lead, labels, leads


def evaluate_heldout(
    torch: Any,
    acc: Any,
    model: Any,
    heldout: list[EncodedSample],
    pad_id: int,
    batch_size: int,
    logits: LossPositions,
) -> tuple[float | None, float | None]:
    """Mean held-out loss and outcome-line loss under accelerate: each process scores an equal
    share of the set (sharded models need the same number of forward passes on every
    process, so up to ``processes - 1`` sequences are left out), the sums are gathered."""
    world = acc.num_processes
    mine = heldout[: len(heldout) - len(heldout) % world][acc.process_index :: world]
    sums = heldout_sums(
        torch, model, mine, pad_id=pad_id, device=acc.device, batch_size=batch_size, logits=logits
    )
    total = acc.gather(torch.tensor([sums], dtype=torch.float64, device=acc.device)).sum(0)
    plain, lead, labels, leads = (float(x) for x in total.tolist())
    return (plain / labels if labels else None, lead / leads if leads else None)


def metrics_fields(row: dict[str, Any] | None) -> dict[str, Any]:
    """A ``metrics.jsonl`` line's held-out fields (none for a step without an evaluation)."""
    if row is None:
        return {}
    return {"eval_loss": row["loss"], "eval_lead_loss": row["lead_loss"]}


@dataclass
class HeldOutTrack:
    """Every evaluation of a run (``{"step", "loss", "lead_loss"}``), the best by ``metric``,
    and the evaluations since it (see the module docstring)."""

    metric: EvalMetric = "loss"
    min_delta: float = 0.0
    history: list[dict[str, Any]] = field(default_factory=list)
    best_step: int | None = None
    best_value: float | None = None

    def add(self, step: int, loss: float | None, lead_loss: float | None) -> bool:
        """Record an evaluation; True when it is the new best."""
        self.history.append({"step": step, "loss": loss, "lead_loss": lead_loss})
        value = loss if self.metric == "loss" else lead_loss
        if value is None:
            return False
        if self.best_value is None or value < self.best_value - self.min_delta:
            self.best_step, self.best_value = step, value
            return True
        return False

    @property
    def since_best(self) -> int:
        """Evaluations after the best one (all of them while there is no best)."""
        if self.best_step is None:
            return len(self.history)
        return sum(1 for row in self.history if row["step"] > self.best_step)

    def series(self) -> list[tuple[int, float]]:
        """``(step, value)`` of the tracked metric, for the loss plot."""
        return [
            (int(row["step"]), float(row[self.metric]))
            for row in self.history
            if row[self.metric] is not None
        ]

    def summary(self, best_adapter: Path | None, stopped_early: bool) -> dict[str, Any]:
        """What ``train_result.json`` reports of the track."""
        return {
            "metric": self.metric,
            "evaluations": self.history,
            "best_step": self.best_step,
            "best_value": self.best_value,
            "best_adapter": str(best_adapter) if best_adapter else None,
            "stopped_early": stopped_early,
        }

    def to_state(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "history": self.history,
            "best_step": self.best_step,
            "best_value": self.best_value,
        }

    @classmethod
    def from_state(
        cls, state: dict[str, Any] | None, metric: EvalMetric, min_delta: float
    ) -> HeldOutTrack:
        """The track a checkpoint saved, replayed under ``metric`` and ``min_delta``."""
        track = cls(metric=metric, min_delta=min_delta)
        if not state:
            return track
        for row in state.get("history", []):
            track.add(int(row["step"]), row.get("loss"), row.get("lead_loss"))
        return track
