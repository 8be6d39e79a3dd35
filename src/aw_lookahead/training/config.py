"""The options of a warm-up fine-tuning run, validated up front."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from aw_lookahead._extras import require
from aw_lookahead.errors import ConfigError
from aw_lookahead.prompts import (
    PROMPT_PROFILES,
    PromptProfile,
    PromptSet,
    profile_for_model,
    profile_prompts,
)

from .classify import ClassifyConfig
from .data import TargetMode

__all__ = [
    "DEFAULT_LORA_TARGETS",
    "EvalMetric",
    "LoraKernel",
    "LossPositions",
    "Method",
    "Precision",
    "TrainConfig",
    "train_prompts",
]

Method = Literal["lora", "full"]
Precision = Literal["auto", "bf16", "fp32"]
LossPositions = Literal["labels", "all"]
LoraKernel = Literal["fused", "peft"]
EvalMetric = Literal["loss", "lead_loss"]

DEFAULT_LORA_TARGETS: tuple[str, ...] = (
    "q_proj",
    "k_proj",
    "v_proj",
    "o_proj",
    "gate_proj",
    "up_proj",
    "down_proj",
)


def train_prompts(
    model: str | Path, profile: PromptProfile | Literal["auto"], overrides: Path | None
) -> PromptSet:
    """The prompts a run renders its data with: ``profile`` (``"auto"``: the one the model
    folder's name is served with) plus the override folder, if any."""
    chosen = profile_for_model(str(model)) if profile == "auto" else profile
    return PromptSet(overrides, profile=chosen) if overrides else profile_prompts(chosen)


@dataclass
class TrainConfig:
    """Everything a run needs; :func:`~aw_lookahead.training.train` takes one.

    Steps are optimizer steps (``batch_size * grad_accum * processes``
    sequences each). ``max_steps`` wins over ``epochs``. ``stop_after`` ends
    this invocation after that many steps with a checkpoint (a time-sliced or
    preemptible job continues later with ``resume=True``); the learning-rate
    schedule still spans the whole run. ``precision="auto"`` uses bf16 on a GPU
    that supports it, fp32 elsewhere.

    The loss of an optimizer step is the mean over every label token of the
    step (all its micro-batches and processes), so a long answer weighs what
    its tokens weigh. ``logits="labels"`` computes the output layer only at
    positions that predict a label token (the loss is the same as ``"all"``,
    most positions of world-model data carry no label). ``prompt_profile``
    chooses the packaged system prompts (``"auto"``: the profile the model
    folder's name is served with, see
    :func:`~aw_lookahead.prompts.profile_for_model`); serve the result with
    the same profile. ``threads`` sets torch's CPU threads (``None``: torch's
    default); on a busy CPU one thread can beat two. ``lora_kernel="fused"``
    runs each plain LoRA layer as one autograd node (fewer full-size passes,
    same function and adapter files as PEFT's; see
    :mod:`~aw_lookahead.training._lora_kernel`); ``"peft"`` keeps PEFT's forward.
    ``lead_weight`` counts each token of a target's outcome line (the first
    line of its output, where failure shows; see
    :mod:`~aw_lookahead.training._outcome_line`) that many times in the step's
    mean; 1 is the plain mean. The step's plain loss and its outcome-line
    loss are recorded either way.
    """

    model: Path
    data: list[Path]
    out: Path
    method: Method = "lora"
    targets: TargetMode = "each"
    max_len: int = 2048
    epochs: float = 1.0
    max_steps: int | None = None
    stop_after: int | None = None
    batch_size: int = 1
    grad_accum: int = 1
    lr: float = 2e-4
    warmup_steps: int = 0
    scheduler: Literal["linear", "cosine", "constant"] = "linear"
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.0
    lora_targets: tuple[str, ...] = DEFAULT_LORA_TARGETS
    precision: Precision = "auto"
    gradient_checkpointing: bool = True
    save_every: int = 50
    keep_checkpoints: int = 2
    resume: bool = False
    seed: int = 0
    classify: ClassifyConfig = field(default_factory=ClassifyConfig)
    progress: bool = True
    prompts: Path | None = None
    """Folder of system prompt overrides (see :class:`~aw_lookahead.prompts.PromptSet`)."""
    prompt_profile: PromptProfile | Literal["auto"] = "auto"
    logits: LossPositions = "labels"
    lead_weight: float = 1.0
    threads: int | None = None
    lora_kernel: LoraKernel = "fused"
    agent_data: list[Path] = field(default_factory=list)
    """The agent's own SFT data (OpenAI messages JSONL), mixed in at ``mix``
    (see :mod:`~aw_lookahead.training.mix`)."""
    mix: float = 0.0
    """Share of the training sequences drawn from ``agent_data`` (0 <= mix < 1)."""
    init_adapter: Path | None = None
    """A PEFT LoRA adapter folder to start from (warm start; LoRA only). Its rank, alpha and
    target modules win over ``lora_r``/``lora_alpha``/``lora_targets``; the optimizer and
    schedule start fresh. Continue an interrupted run with ``resume`` instead."""
    eval_data: list[Path] = field(default_factory=list)
    """Held-out data (same formats as ``data``), scored every ``eval_every`` steps
    (default ``save_every``) and at the end; see :mod:`~aw_lookahead.training.heldout`."""
    eval_every: int | None = None
    eval_limit: int | None = 200
    """At most this many held-out sequences (a seeded spread); ``None``: all of them."""
    eval_metric: EvalMetric = "loss"
    early_stop: int | None = None
    """Stop once this many evaluations in a row have not beaten the best by ``early_stop_delta``."""
    early_stop_delta: float = 0.0
    eval_on_start: bool = False
    """Also score the model before the first step (step 0: the ``init_adapter`` or the base),
    so a warm start's own number is on the track and ``best-adapter`` can be it."""

    def lora_config(self) -> Any:
        """The ``peft.LoraConfig`` of this run's adapter shape (needs the ``train`` extra)."""
        peft = require("train", "peft")
        return peft.LoraConfig(
            task_type="CAUSAL_LM",
            r=self.lora_r,
            lora_alpha=self.lora_alpha,
            lora_dropout=self.lora_dropout,
            target_modules=list(self.lora_targets),
        )

    @property
    def served_lora_rank(self) -> int:
        """vLLM's ``--max-lora-rank`` for serving this run's adapter: its rank, at least 16."""
        return max(16, self.lora_r)

    def resolved_profile(self) -> PromptProfile:
        """The prompt profile this run trains with (``"auto"`` resolved by the model folder)."""
        return train_prompts(self.model, self.prompt_profile, self.prompts).profile

    def _take_adapter_shape(self, config_file: Path) -> None:
        """Adopt a warm-start adapter's rank, alpha and targets, so the config says what trains."""
        try:
            data = json.loads(config_file.read_text(encoding="utf-8"))
            r, alpha, targets = data["r"], data["lora_alpha"], data["target_modules"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(
                f"--init-adapter {config_file.parent}: cannot read {config_file.name} ({exc}); "
                "pass a folder written by save_pretrained (e.g. runs/x/adapter)"
            ) from exc
        if not isinstance(r, int) or not isinstance(targets, list):
            raise ConfigError(f"{config_file}: field r or target_modules is not a LoRA adapter's")
        self.lora_r, self.lora_alpha = r, int(alpha)
        self.lora_targets = tuple(sorted(str(t) for t in targets))

    def __post_init__(self) -> None:
        self.model = Path(self.model)
        self.out = Path(self.out)
        self.data = [Path(p) for p in self.data]
        if not self.data:
            raise ConfigError("no training data given; pass one or more --data JSONL files")
        for p in self.data:
            if not p.exists():
                raise ConfigError(f"training data {p} does not exist")
        if not (self.model / "config.json").is_file():
            raise ConfigError(
                f"{self.model} is not a Hugging Face model folder (no config.json); pass the "
                "folder of a model saved with save_pretrained"
            )
        if self.method not in ("lora", "full"):
            raise ConfigError(f"method must be 'lora' or 'full', got {self.method!r}")
        if self.prompt_profile != "auto" and self.prompt_profile not in PROMPT_PROFILES:
            raise ConfigError(
                f"prompt_profile must be auto or one of {', '.join(PROMPT_PROFILES)}, "
                f"got {self.prompt_profile!r}"
            )
        if self.logits not in ("labels", "all"):
            raise ConfigError(f"logits must be 'labels' or 'all', got {self.logits!r}")
        if self.lora_kernel not in ("fused", "peft"):
            raise ConfigError(f"lora_kernel must be 'fused' or 'peft', got {self.lora_kernel!r}")
        if self.threads is not None and self.threads < 1:
            raise ConfigError(f"threads must be >= 1, got {self.threads}")
        if self.precision not in ("auto", "bf16", "fp32"):
            raise ConfigError(f"precision must be auto, bf16 or fp32, got {self.precision!r}")
        positive = {
            "batch_size": self.batch_size,
            "grad_accum": self.grad_accum,
            "save_every": self.save_every,
            "keep_checkpoints": self.keep_checkpoints,
            "lora_r": self.lora_r,
        }
        for name, value in positive.items():
            if value < 1:
                raise ConfigError(f"{name} must be >= 1, got {value}")
        if self.max_steps is not None and self.max_steps < 1:
            raise ConfigError(f"max_steps must be >= 1, got {self.max_steps}")
        if self.stop_after is not None and self.stop_after < 1:
            raise ConfigError(f"stop_after must be >= 1, got {self.stop_after}")
        if self.epochs <= 0:
            raise ConfigError(f"epochs must be > 0, got {self.epochs}")
        if self.lr <= 0:
            raise ConfigError(f"lr must be > 0, got {self.lr}")
        if not self.lead_weight >= 1.0:
            raise ConfigError(f"lead_weight must be >= 1, got {self.lead_weight}")
        self.agent_data = [Path(p) for p in self.agent_data]
        for p in self.agent_data:
            if not p.exists():
                raise ConfigError(f"agent data {p} does not exist")
        if not 0.0 <= self.mix < 1.0:
            raise ConfigError(f"mix is the agent share of the sequences (0 <= mix < 1): {self.mix}")
        if self.init_adapter is not None:
            self.init_adapter = Path(self.init_adapter)
            if self.method != "lora":
                raise ConfigError("--init-adapter starts a LoRA run; use it with --method lora")
            self._take_adapter_shape(self.init_adapter / "adapter_config.json")
        self._check_heldout()
        if self.mix > 0 and not self.agent_data:
            raise ConfigError("--mix needs --agent-data (the agent's OpenAI messages JSONL)")

    @property
    def evaluation_interval(self) -> int:
        """Steps between held-out evaluations (``eval_every``, else ``save_every``)."""
        return self.eval_every or self.save_every

    def _check_heldout(self) -> None:
        self.eval_data = [Path(p) for p in self.eval_data]
        for p in self.eval_data:
            if not p.exists():
                raise ConfigError(f"held-out data {p} does not exist (--eval-data)")
        if self.eval_metric not in ("loss", "lead_loss"):
            raise ConfigError(f"eval_metric must be loss or lead_loss, got {self.eval_metric!r}")
        for name, value in (
            ("eval_every", self.eval_every),
            ("eval_limit", self.eval_limit),
            ("early_stop", self.early_stop),
        ):
            if value is not None and value < 1:
                raise ConfigError(f"{name} must be >= 1, got {value}")
        if self.early_stop_delta < 0:
            raise ConfigError(f"early_stop_delta must be >= 0, got {self.early_stop_delta}")
        if self.eval_on_start and not self.eval_data:
            raise ConfigError("--eval-on-start needs held-out data to score; pass --eval-data")
        if self.early_stop is not None and not self.eval_data:
            raise ConfigError("--early-stop needs held-out data to watch; pass --eval-data")
