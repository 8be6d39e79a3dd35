"""Warm-up fine-tuning of a world model on trajectories (the ``[train]`` extra).

Pipeline: :func:`read_training_records` -> :func:`build_samples` (turn
classes, keep ratios, retries, target modes) -> :func:`encode_sample` (chat
template, labels ``-100`` except the target answers) -> :func:`train` (LoRA or
full fine-tuning with accelerate). RL warm-up: :func:`grpo_dataset` (one
target turn per trajectory) -> :func:`train_grpo` (TRL's ``GRPOTrainer``)
with :class:`HybridReward` (rubric judge + rule verifier). Warm-up of an
agent's own model: :func:`mix_samples` adds its chat transcripts. Importing
this package does not import torch; :func:`train` does, and a missing extra
raises an ImportError with the ``pip install 'aw-lookahead[train]'`` line.
"""

from __future__ import annotations

from .classify import (
    DEFAULT_KEEP_RATIOS,
    GUI_DOMAINS,
    ClassifyConfig,
    TurnClass,
    TurnDecision,
    TurnStats,
    classify_trajectory,
    classify_turn,
    retry_turns,
    turn_stats,
)
from .config import DEFAULT_LORA_TARGETS, TrainConfig
from .data import (
    IGNORE_INDEX,
    ChatSample,
    DataReport,
    EncodedSample,
    build_samples,
    encode_sample,
    label_spans,
    prepare_dataset,
    read_training_records,
    target_answer,
)
from .grpo import GRPOOptions, train_grpo
from .grpo_data import GRPODataReport, grpo_dataset, trajectory_group
from .mix import MixReport, encode_conversation, mix_samples, read_agent_conversations
from .reward import HybridReward, RewardStats, completion_text, rule_score
from .trainer import TrainResult, batch_order, train

__all__ = [
    "DEFAULT_KEEP_RATIOS",
    "DEFAULT_LORA_TARGETS",
    "GUI_DOMAINS",
    "IGNORE_INDEX",
    "ChatSample",
    "ClassifyConfig",
    "DataReport",
    "EncodedSample",
    "GRPODataReport",
    "GRPOOptions",
    "HybridReward",
    "MixReport",
    "RewardStats",
    "TrainConfig",
    "TrainResult",
    "TurnClass",
    "TurnDecision",
    "TurnStats",
    "batch_order",
    "build_samples",
    "classify_trajectory",
    "classify_turn",
    "completion_text",
    "encode_conversation",
    "encode_sample",
    "grpo_dataset",
    "label_spans",
    "mix_samples",
    "prepare_dataset",
    "read_agent_conversations",
    "read_training_records",
    "retry_turns",
    "rule_score",
    "target_answer",
    "train",
    "train_grpo",
    "trajectory_group",
    "turn_stats",
]
