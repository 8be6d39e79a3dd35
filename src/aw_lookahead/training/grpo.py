"""RL warm-up: GRPO on TRL's ``GRPOTrainer`` with the hybrid reward (``train --method grpo``).

:func:`train_grpo` takes the same :class:`~aw_lookahead.training.TrainConfig`
as SFT (model, data, out, LoRA or full, steps, resume, stop-after, seed) plus
:class:`GRPOOptions`, and guarantees:

* Prompts come from :func:`~aw_lookahead.training.grpo_data.grpo_dataset`: one target
  turn per trajectory unless ``turns_per_trajectory`` asks for more.
* ``batch_size`` counts *prompts* per process per micro-batch; each is
  sampled ``num_generations`` times (TRL's per-device batch is
  ``batch_size * num_generations`` completions, a whole number of groups).
* Generation: ``"auto"`` uses TRL's own vLLM option (``use_vllm=True``,
  ``vllm_mode="colocate"``) on a CUDA machine with vLLM installed, and plain
  ``model.generate`` elsewhere (CPU); ``"vllm-server"`` sends generation to a
  ``trl vllm-serve`` server at ``vllm_server_base_url``.
* The artefacts are SFT's: ``adapter/`` or ``model/``, ``metrics.jsonl`` (one
  line per step with the loss, the reward and each reward component),
  ``loss.png`` and ``reward.png``, ``data_report.json``, and
  ``train_result.json`` with the serving line (``vllm_args``) and the
  generation settings. Checkpoints are TRL's (``checkpoints/checkpoint-N``:
  trainable weights, optimizer, scheduler, RNG, data position).
* ``resume=True`` continues from the latest checkpoint; ``stop_after`` ends
  this invocation after that many steps with a checkpoint; the learning-rate
  schedule spans the whole run, as in SFT. A folder with checkpoints and no
  ``resume`` is refused.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from aw_lookahead._extras import require
from aw_lookahead.errors import ConfigError
from aw_lookahead.trajectory import JsonlWriter

from . import _artifacts as art
from .config import TrainConfig, train_prompts
from .grpo_data import GRPODataReport, grpo_dataset
from .model_setup import mixed_precision
from .reward import HybridReward
from .trainer import TrainResult

__all__ = ["GRPOOptions", "Generation", "train_grpo"]

Generation = Literal["auto", "plain", "vllm-colocate", "vllm-server"]
_CHECKPOINT_PREFIX = "checkpoint-"
_REWARD_CURVES = {"reward": "reward", "rule": "hybrid/rule", "rubric": "hybrid/rubric"}


@dataclass
class GRPOOptions:
    """What GRPO adds to a :class:`~aw_lookahead.training.TrainConfig`."""

    num_generations: int = 4
    max_completion_length: int = 256
    turns_per_trajectory: int = 1
    temperature: float = 1.0
    beta: float = 0.0
    """KL coefficient against the reference model (0: no reference model is kept)."""
    generation: Generation = "auto"
    vllm_server_base_url: str | None = None
    vllm_gpu_memory_utilization: float = 0.3

    def __post_init__(self) -> None:
        if self.num_generations < 2:
            raise ConfigError(
                f"num_generations must be >= 2 (GRPO compares completions of one prompt), got "
                f"{self.num_generations}"
            )
        if self.max_completion_length < 1:
            raise ConfigError(
                f"max_completion_length must be >= 1, got {self.max_completion_length}"
            )
        if self.generation not in ("auto", "plain", "vllm-colocate", "vllm-server"):
            raise ConfigError(
                "generation must be auto, plain, vllm-colocate or vllm-server, got "
                f"{self.generation!r}"
            )
        if self.generation == "vllm-server" and not self.vllm_server_base_url:
            raise ConfigError(
                "generation='vllm-server' needs vllm_server_base_url (a `trl vllm-serve` server)"
            )


def _generation_args(opts: GRPOOptions, torch: Any) -> dict[str, Any]:
    mode = opts.generation
    if mode == "auto":
        import importlib.util

        gpu = torch.cuda.is_available() and importlib.util.find_spec("vllm") is not None
        mode = "vllm-colocate" if gpu else "plain"
    if mode == "plain":
        return {"use_vllm": False}
    if mode == "vllm-colocate":
        return {
            "use_vllm": True,
            "vllm_mode": "colocate",
            "vllm_gpu_memory_utilization": opts.vllm_gpu_memory_utilization,
        }
    return {
        "use_vllm": True,
        "vllm_mode": "server",
        "vllm_server_base_url": opts.vllm_server_base_url,
    }


def _checkpoints(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    found = [
        p
        for p in folder.iterdir()
        if p.name.startswith(_CHECKPOINT_PREFIX) and (p / "trainer_state.json").is_file()
    ]
    return sorted(found, key=lambda p: int(p.name.removeprefix(_CHECKPOINT_PREFIX)))


def _metrics_line(step: int, logs: dict[str, Any]) -> dict[str, Any]:
    line: dict[str, Any] = {"step": step}
    for key, value in logs.items():
        if isinstance(value, int | float) and not (isinstance(value, float) and math.isnan(value)):
            line[key] = value
    return line


def _callback_class(transformers: Any) -> Any:
    class Recorder(transformers.TrainerCallback):  # type: ignore[misc]
        """metrics.jsonl per step, the stop-after cut, and the step counts of this invocation."""

        def __init__(self, out: Path, stop_after: int | None) -> None:
            self.out = out
            self.stop_after = stop_after
            self.start = 0
            self.writer: JsonlWriter | None = None
            self.began = time.perf_counter()

        def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            self.start = state.global_step
            if state.is_world_process_zero:
                self.writer = JsonlWriter(self.out / "metrics.jsonl", append=False)
                for entry in state.log_history:
                    if "reward" in entry and entry.get("step", 0) <= state.global_step:
                        self.writer.write(_metrics_line(int(entry["step"]), entry))

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            if self.stop_after is not None and state.global_step >= self.start + self.stop_after:
                control.should_save = True
                control.should_training_stop = True

        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kw: Any) -> None:
            if self.writer is not None and logs and "reward" in logs:
                line = _metrics_line(state.global_step, logs)
                line["elapsed_s"] = round(time.perf_counter() - self.began, 3)
                self.writer.write(line)

        def on_train_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            if self.writer is not None:
                self.writer.close()
                self.writer = None

    return Recorder


def _series(out: Path, key: str) -> list[tuple[int, float]]:
    path = out / "metrics.jsonl"
    if not path.is_file():
        return []
    points = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            entry = json.loads(line)
            if key in entry:
                points.append((int(entry["step"]), float(entry[key])))
    return points


def train_grpo(
    cfg: TrainConfig, opts: GRPOOptions | None = None, *, reward: HybridReward
) -> TrainResult:
    """Run (or resume) a GRPO job with ``reward``; see the module docstring."""
    opts = opts or GRPOOptions()
    if cfg.agent_data:
        raise ConfigError(
            "--agent-data / --mix mix SFT sequences; GRPO trains on world-model prompts only. "
            "Warm up with SFT and --mix first, then run GRPO on the result"
        )
    ckpt_root = cfg.out / art.CHECKPOINTS
    existing = _checkpoints(ckpt_root)
    if existing and not cfg.resume:
        raise ConfigError(
            f"{cfg.out} already holds checkpoints; pass --resume to continue that run, or "
            "choose a new --out folder"
        )
    torch = require("train", "torch")
    transformers = require("train", "transformers")
    trl = require("train", "trl")
    datasets = require("train", "datasets")
    if cfg.threads is not None:
        torch.set_num_threads(cfg.threads)
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(cfg.model))
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    rows, report = grpo_dataset(
        cfg.data,
        tokenizer=tokenizer,
        max_prompt_len=cfg.max_len,
        turns_per_trajectory=opts.turns_per_trajectory,
        config=cfg.classify,
        prompts=train_prompts(cfg.model, cfg.prompt_profile, cfg.prompts),
        seed=cfg.seed,
    )
    if not rows:
        raise ConfigError(
            "no GRPO prompts survived classification and the prompt budget; raise keep ratios "
            f"(--keep CLASS=RATIO), --max-len, or add data.\n{report.summary()}"
        )
    mixed = mixed_precision(torch, cfg.precision)
    generation = _generation_args(opts, torch)
    args = trl.GRPOConfig(
        output_dir=str(ckpt_root),
        per_device_train_batch_size=cfg.batch_size * opts.num_generations,
        gradient_accumulation_steps=cfg.grad_accum,
        num_generations=opts.num_generations,
        max_completion_length=opts.max_completion_length,
        temperature=opts.temperature,
        beta=opts.beta,
        learning_rate=cfg.lr,
        lr_scheduler_type=cfg.scheduler,
        warmup_steps=cfg.warmup_steps,
        weight_decay=cfg.weight_decay,
        max_grad_norm=cfg.max_grad_norm,
        num_train_epochs=cfg.epochs,
        max_steps=cfg.max_steps or -1,
        save_strategy="steps",
        save_steps=cfg.save_every,
        save_total_limit=cfg.keep_checkpoints,
        logging_steps=1,
        report_to="none",
        seed=cfg.seed,
        data_seed=cfg.seed,
        bf16=mixed == "bf16",
        gradient_checkpointing=cfg.gradient_checkpointing,
        disable_tqdm=not cfg.progress,
        model_init_kwargs={"dtype": torch.bfloat16 if mixed == "bf16" else torch.float32},
        **generation,
    )
    peft_config = cfg.lora_config() if cfg.method == "lora" else None
    recorder = _callback_class(transformers)(cfg.out, cfg.stop_after)
    trainer = trl.GRPOTrainer(
        model=str(cfg.model),
        reward_funcs=[reward],
        args=args,
        train_dataset=datasets.Dataset.from_list(rows),
        processing_class=tokenizer,
        peft_config=peft_config,
        callbacks=[recorder],
    )
    cfg.out.mkdir(parents=True, exist_ok=True)
    main = trainer.accelerator.is_main_process
    if main:
        (cfg.out / "data_report.json").write_text(json.dumps(report.as_dict(), indent=2))
    began = time.perf_counter()
    trainer.train(resume_from_checkpoint=str(existing[-1]) if existing else None)
    seconds = time.perf_counter() - began
    state = trainer.state
    losses = _series(cfg.out, "loss")
    result = TrainResult(
        out=cfg.out,
        output_dir=None,
        step=state.global_step,
        total_steps=state.max_steps,
        losses=losses,
        report=report.data,
        tokens=0,
        seconds=seconds,
        resumed_from=int(existing[-1].name.removeprefix(_CHECKPOINT_PREFIX)) if existing else None,
        finished=state.global_step >= state.max_steps,
    )
    if result.finished:
        target = cfg.out / ("adapter" if cfg.method == "lora" else "model")
        trainer.save_model(str(target))
        if main and cfg.method == "full":
            tokenizer.padding_side = "right"
            tokenizer.save_pretrained(str(target))
        result.output_dir = target
    if main:
        art.plot_losses(losses, cfg.out / "loss.png")
        curves = {name: _series(cfg.out, key) for name, key in _REWARD_CURVES.items()}
        art.plot_series(
            curves,
            cfg.out / "reward.png",
            ylabel="mean reward (0-1)",
            title="aw-lookahead GRPO warm-up",
        )
        _write_result(cfg, opts, result, report, generation, reward)
    return result


def _write_result(
    cfg: TrainConfig,
    opts: GRPOOptions,
    r: TrainResult,
    report: GRPODataReport,
    generation: dict[str, Any],
    reward: HybridReward,
) -> None:
    serve = None
    if r.output_dir is not None and cfg.method == "lora":
        rank = cfg.served_lora_rank
        serve = f"--enable-lora --max-lora-rank {rank} --lora-modules NAME={r.output_dir}"
    elif r.output_dir is not None:
        serve = f"--model {r.output_dir}"
    rewards = _series(cfg.out, "reward")
    data = {
        "method": "grpo",
        "weights": cfg.method,
        "step": r.step,
        "total_steps": r.total_steps,
        "finished": r.finished,
        "resumed_from": r.resumed_from,
        "first_reward": rewards[0][1] if rewards else None,
        "last_reward": rewards[-1][1] if rewards else None,
        "last_loss": r.losses[-1][1] if r.losses else None,
        "seconds_this_run": round(r.seconds, 3),
        "seconds_per_step": round(r.seconds / max(1, r.step - (r.resumed_from or 0)), 3),
        "prompt_profile": cfg.resolved_profile(),
        "threads": cfg.threads,
        "output_dir": str(r.output_dir) if r.output_dir else None,
        "vllm_args": serve,
        "generation": {
            **generation,
            "num_generations": opts.num_generations,
            "max_completion_length": opts.max_completion_length,
            "temperature": opts.temperature,
        },
        "reward": {
            "rubric_weight": reward.rubric_weight,
            "rule_weight": reward.rule_weight,
            "judge": reward.judge.model if reward.judge is not None else None,
            "judge_base_url": reward.judge.base_url if reward.judge is not None else None,
            "samples": reward.stats.samples,
            "judged": reward.stats.judged,
            "judge_failed": reward.stats.judge_failed,
            "judge_cached": reward.stats.judge_cached,
        },
        "prompts": report.rows,
        "trajectories": report.trajectories,
        "turns_per_trajectory": report.turns_per_trajectory,
    }
    (cfg.out / "train_result.json").write_text(json.dumps(data, indent=2))
