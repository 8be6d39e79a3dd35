"""Warm-up fine-tuning of a world model on trajectories (the ``[train]`` extra).

The face holds what a user calls: :func:`train` with its :class:`TrainConfig`
(LoRA or full fine-tuning with accelerate), :func:`train_grpo` with its
:class:`GRPOOptions` (RL warm-up with TRL's ``GRPOTrainer``) and
:class:`HybridReward` (rubric judge + rule verifier). The steps ``train`` runs
live in their modules: ``data`` (``read_training_records`` -> ``build_samples``:
turn classes, keep ratios, retries, target modes -> ``encode_sample``: chat
template, labels ``-100`` except the target answers), ``classify`` (the turn
classes), ``grpo_data`` (``grpo_dataset``: one target turn per trajectory) and
``mix`` (``mix_samples`` adds an agent's own chat transcripts). Importing this
package does not import torch; :func:`train` does, and a missing extra raises
an ImportError with the ``pip install 'aw-lookahead[train]'`` line.
"""

from __future__ import annotations

from .config import TrainConfig
from .grpo import GRPOOptions, train_grpo
from .reward import HybridReward
from .trainer import TrainResult, train

__all__ = [
    "GRPOOptions",
    "HybridReward",
    "TrainConfig",
    "TrainResult",
    "train",
    "train_grpo",
]
