"""What one training step reads and computes: the data order, the padded micro-batches
and the summed loss over label tokens (optionally weighting each target's outcome line).

Pure functions of the data and a model (torch is passed in, so importing this
module never imports it). Apart from :mod:`.trainer`, which runs the loop and
re-exports :func:`batch_order`; the guarantee that the order is a function of
(seed, epoch) alone rests on :func:`batch_order`.
"""

from __future__ import annotations

import math
import random
from typing import Any, NamedTuple

from .config import LossPositions
from .data import IGNORE_INDEX, EncodedSample

__all__ = [
    "LossSums",
    "batch_order",
    "collate",
    "label_loss",
    "lead_mask",
    "predicted_labels",
    "predicted_lead",
]


def batch_order(n: int, micro: int, global_batch: int, seed: int) -> list[int]:
    """Sample indexes of global micro-batch ``micro`` (``global_batch`` of them, wrapping)."""
    per_epoch = math.ceil(n / global_batch)
    epoch, pos = divmod(micro, per_epoch)
    perm = list(range(n))
    random.Random(seed * 1_000_003 + epoch).shuffle(perm)
    start = pos * global_batch
    return [perm[(start + k) % n] for k in range(global_batch)]


def collate(torch: Any, samples: list[EncodedSample], pad_id: int, device: Any) -> dict[str, Any]:
    """``samples`` as one padded batch on ``device`` (``pad_id`` and ignored labels past each
    sample's end, attention mask 0 there)."""
    width = max(len(s.input_ids) for s in samples)
    ids = torch.full((len(samples), width), pad_id, dtype=torch.long)
    labels = torch.full((len(samples), width), IGNORE_INDEX, dtype=torch.long)
    mask = torch.zeros((len(samples), width), dtype=torch.long)
    for row, s in enumerate(samples):
        k = len(s.input_ids)
        ids[row, :k] = torch.tensor(s.input_ids)
        labels[row, :k] = torch.tensor(s.labels)
        mask[row, :k] = 1
    return {
        "input_ids": ids.to(device),
        "labels": labels.to(device),
        "attention_mask": mask.to(device),
    }


def lead_mask(torch: Any, samples: list[EncodedSample], device: Any) -> Any:
    """A boolean mask, shaped like :func:`collate`'s batch, of the samples' outcome lines."""
    width = max(len(s.input_ids) for s in samples)
    mask = torch.zeros((len(samples), width), dtype=torch.bool)
    for row, s in enumerate(samples):
        for start, end in s.lead:
            mask[row, start:end] = True
    return mask.to(device)


def predicted_labels(sample: EncodedSample) -> int:
    """Label tokens a causal LM can be scored on (a label at position 0 has no context)."""
    return sum(1 for x in sample.labels[1:] if x != IGNORE_INDEX)


def predicted_lead(sample: EncodedSample) -> int:
    """Outcome-line tokens among :func:`predicted_labels`."""
    return sum(end - max(start, 1) for start, end in sample.lead if end > 1)


class LossSums(NamedTuple):
    """Summed cross-entropies of one micro-batch: ``weighted`` is what the gradient follows
    (``plain`` plus ``lead_weight - 1`` times ``lead``); ``plain`` sums every label token,
    ``lead`` the outcome-line tokens (0 without a mask)."""

    weighted: Any
    plain: Any
    lead: Any


def label_loss(
    torch: Any,
    model: Any,
    batch: dict[str, Any],
    logits: LossPositions,
    lead: Any = None,
    lead_weight: float = 1.0,
) -> LossSums:
    """The summed cross-entropy of the batch's label tokens, plain and outcome-weighted.

    ``"labels"`` asks the model for logits only at positions whose next
    token is a label (``logits_to_keep`` with the union of those positions
    over the batch's rows), which skips most of the output layer's work on
    world-model data; ``"all"`` computes every position. Both give the same sums.
    ``lead`` is :func:`lead_mask` of the batch; with it, each outcome-line token
    counts ``lead_weight`` times in ``weighted``.
    """
    targets = batch["labels"][:, 1:]
    chosen = None if lead is None else lead[:, 1:]
    inputs = {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"]}
    if logits == "labels":
        keep = (targets != IGNORE_INDEX).any(dim=0).nonzero().squeeze(1)
        if keep.numel() > 0:
            out = model(**inputs, logits_to_keep=keep).logits
            targets = targets[:, keep]
            chosen = None if chosen is None else chosen[:, keep]
        else:
            out = model(**inputs).logits[:, :-1]
    else:
        out = model(**inputs).logits[:, :-1]
    ce = torch.nn.functional.cross_entropy(
        out.float().reshape(-1, out.shape[-1]),
        targets.reshape(-1),
        ignore_index=IGNORE_INDEX,
        reduction="none",
    )
    plain = ce.sum()
    if chosen is None:
        return LossSums(plain, plain, plain.new_zeros(()))
    lead_sum = (ce * chosen.reshape(-1).to(ce.dtype)).sum()
    return LossSums(plain + (lead_weight - 1.0) * lead_sum, plain, lead_sum)
