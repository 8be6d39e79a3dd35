"""What one training step reads and computes: the data order, the padded micro-batches
and the summed loss over label tokens.

Pure functions of the data and a model (torch is passed in, so importing this
module never imports it). Apart from :mod:`.trainer`, which runs the loop and
re-exports :func:`batch_order`; the guarantee that the order is a function of
(seed, epoch) alone rests on :func:`batch_order`.
"""

from __future__ import annotations

import math
import random
from typing import Any

from .config import LossPositions
from .data import IGNORE_INDEX, EncodedSample

__all__ = ["batch_order", "collate", "label_loss", "predicted_labels"]


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


def predicted_labels(sample: EncodedSample) -> int:
    """Label tokens a causal LM can be scored on (a label at position 0 has no context)."""
    return sum(1 for x in sample.labels[1:] if x != IGNORE_INDEX)


def label_loss(torch: Any, model: Any, batch: dict[str, Any], logits: LossPositions) -> Any:
    """The summed cross-entropy of the batch's label tokens.

    ``"labels"`` asks the model for logits only at positions whose next
    token is a label (``logits_to_keep`` with the union of those positions
    over the batch's rows), which skips most of the output layer's work on
    world-model data; ``"all"`` computes every position. Both give the same sum.
    """
    targets = batch["labels"][:, 1:]
    inputs = {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"]}
    if logits == "labels":
        keep = (targets != IGNORE_INDEX).any(dim=0).nonzero().squeeze(1)
        if keep.numel() > 0:
            out = model(**inputs, logits_to_keep=keep).logits
            targets = targets[:, keep]
        else:
            out = model(**inputs).logits[:, :-1]
    else:
        out = model(**inputs).logits[:, :-1]
    return torch.nn.functional.cross_entropy(
        out.float().reshape(-1, out.shape[-1]),
        targets.reshape(-1),
        ignore_index=IGNORE_INDEX,
        reduction="sum",
    )
