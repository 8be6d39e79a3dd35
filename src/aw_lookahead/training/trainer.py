"""The warm-up trainer: LoRA or full fine-tuning with accelerate (single process or launched).

Guarantees:

* The data order is a pure function of (seed, epoch): micro-batch ``m`` is
  the same sequences on every run, so ``resume=True`` continues at the exact
  step of the latest complete checkpoint (weights, optimizer, scheduler and
  RNG restored) and produces the run an uninterrupted job would have.
* Under ``accelerate launch`` each process takes its slice of every global
  micro-batch; FSDP and DeepSpeed come from the accelerate config file (see
  ``integrations/accelerate/``); nothing here is device specific.
* LoRA checkpoints hold only the trainable weights (a few MB), not the base.
* The loss of a step is the mean over all its label tokens (every
  micro-batch and process of the step), and the data is tokenised once per
  run folder (:mod:`~aw_lookahead.training.dataset_cache`), not once per
  ``resume`` slice.
* With held-out data (``eval_data``) the run is scored every
  ``evaluation_interval`` steps and at its end, each evaluation is a
  checkpoint, and a LoRA run keeps the best evaluated adapter in
  ``<out>/best-adapter``; with ``early_stop`` it ends once that many
  evaluations in a row have not beaten the best (see :mod:`.heldout`). With
  ``eval_on_start`` the model is scored (and checkpointed) at step 0 as well,
  so a warm start that training does not improve is its own best.
* The result is a PEFT adapter (``<out>/adapter``) that vLLM serves with
  ``--enable-lora --lora-modules NAME=<out>/adapter``, or a full model folder
  (``<out>/model``, tokenizer and chat template included).

This module runs the loop; what a step reads and computes (the order, the
batches, the loss) is :mod:`.batches`, the model it trains :mod:`.model_setup`.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aw_lookahead._extras import require
from aw_lookahead._progress import ProgressBar
from aw_lookahead.errors import ConfigError
from aw_lookahead.trajectory import JsonlWriter

from . import _artifacts as art
from .batches import batch_order, collate, label_loss, lead_mask, predicted_labels, predicted_lead
from .config import TrainConfig, train_prompts
from .data import DataReport, EncodedSample
from .dataset_cache import ENCODED_FILE, HELDOUT_FILE, load_or_prepare
from .heldout import HeldOutTrack, evaluate_heldout, heldout_subset, metrics_fields
from .model_setup import build_model, mixed_precision, trainable_only

__all__ = ["TrainResult", "batch_order", "train"]


@dataclass
class TrainResult:
    """What a run did. ``losses`` is ``(step, loss)`` for every step so far (resumed ones too).

    ``tokens`` counts input tokens of this invocation (masked ones too),
    ``label_tokens`` the tokens that carried loss: the measure of useful work.
    """

    out: Path
    output_dir: Path | None
    step: int
    total_steps: int
    losses: list[tuple[int, float]] = field(default_factory=list)
    report: DataReport = field(default_factory=DataReport)
    tokens: int = 0
    label_tokens: int = 0
    seconds: float = 0.0
    resumed_from: int | None = None
    finished: bool = False
    cached_data: bool = False
    heldout: HeldOutTrack | None = None
    best_adapter: Path | None = None
    stopped_early: bool = False

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else 0.0

    @property
    def label_tokens_per_s(self) -> float:
        return self.label_tokens / self.seconds if self.seconds > 0 else 0.0


def train(cfg: TrainConfig) -> TrainResult:
    """Run (or resume) a fine-tuning job; see the module docstring for the guarantees."""
    torch = require("train", "torch")
    transformers = require("train", "transformers")
    accelerate = require("train", "accelerate")

    latest = art.latest_checkpoint(cfg.out) if cfg.resume else None
    if not cfg.resume and art.checkpoint_dirs(cfg.out):
        raise ConfigError(
            f"{cfg.out} already holds checkpoints; pass --resume to continue that run, or "
            "choose a new --out folder"
        )
    if cfg.threads is not None:
        torch.set_num_threads(cfg.threads)
    mixed = mixed_precision(torch, cfg.precision)
    # this loop has no accelerate dataloader: sync on the micro-batch count alone, whatever
    # dataloader another trainer in this process (GRPO through TRL) left registered
    plugin = accelerate.utils.GradientAccumulationPlugin(
        num_steps=cfg.grad_accum, sync_with_dataloader=False
    )
    acc = accelerate.Accelerator(mixed_precision=mixed, gradient_accumulation_plugin=plugin)
    accelerate.utils.set_seed(cfg.seed)
    main = acc.is_main_process

    tokenizer = transformers.AutoTokenizer.from_pretrained(str(cfg.model))
    prompts = train_prompts(cfg.model, cfg.prompt_profile, cfg.prompts)

    def encoded(
        paths: list[Path] = cfg.data, file_name: str = ENCODED_FILE
    ) -> tuple[list[EncodedSample], DataReport, bool]:
        return load_or_prepare(
            cfg.out,
            paths,
            tokenizer,
            max_len=cfg.max_len,
            targets=cfg.targets,
            config=cfg.classify,
            prompts=prompts,
            file_name=file_name,
        )

    def encoded_heldout() -> list[EncodedSample]:
        if not cfg.eval_data:
            return []
        found = encoded(cfg.eval_data, HELDOUT_FILE)[0]
        return heldout_subset(found, cfg.eval_limit, cfg.seed)

    if main:  # one process encodes and writes the cache; the others read it
        samples, report, cached = encoded()
        heldout = encoded_heldout()
    acc.wait_for_everyone()
    if not main:
        samples, report, cached = encoded()
        heldout = encoded_heldout()
    if cfg.eval_data and not heldout:
        raise ConfigError(
            f"--eval-data {' '.join(map(str, cfg.eval_data))}: no held-out sequence survived "
            "classification and length limits; pass other data or raise --max-len"
        )
    if cfg.eval_metric == "lead_loss" and heldout and not any(predicted_lead(s) for s in heldout):
        raise ConfigError(
            "--eval-metric lead_loss: the held-out data has no outcome lines (only world-model "
            "observations have them); use --eval-metric loss"
        )
    if cfg.agent_data:
        from .mix import mix_samples

        samples, report = mix_samples(
            samples,
            report,
            cfg.agent_data,
            tokenizer,
            mix=cfg.mix,
            max_len=cfg.max_len,
            seed=cfg.seed,
        )
    if not samples:
        raise ConfigError(
            "no training samples survived classification and length limits; raise keep ratios "
            f"(--keep CLASS=RATIO), --max-len, or add data.\n{report.summary()}"
        )
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    label_counts = [predicted_labels(s) for s in samples]
    lead_counts = [predicted_lead(s) for s in samples]

    world = acc.num_processes
    global_batch = cfg.batch_size * world
    micro_per_epoch = math.ceil(len(samples) / global_batch)
    total_steps = cfg.max_steps or max(1, math.ceil(micro_per_epoch * cfg.epochs / cfg.grad_accum))

    model = build_model(cfg, torch, mixed)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    scheduler = transformers.get_scheduler(
        cfg.scheduler,
        optimizer,
        num_warmup_steps=cfg.warmup_steps * world,
        num_training_steps=total_steps * world,
    )
    model, optimizer, scheduler = acc.prepare(model, optimizer, scheduler)
    if cfg.method == "lora":
        acc.register_save_state_pre_hook(trainable_only(acc.unwrap_model(model)))

    cfg.out.mkdir(parents=True, exist_ok=True)
    start, losses, tokens_before, labels_before = 0, [], 0, 0
    state: dict[str, Any] = {}
    if latest is not None:
        _, folder = latest
        acc.load_state(str(folder), strict=cfg.method != "lora")
        state = art.read_state(folder)
        start, tokens_before = int(state["step"]), int(state.get("tokens", 0))
        labels_before = int(state.get("label_tokens", 0))
        losses = [(int(s), float(v)) for s, v in state["losses"]]
    track = (
        HeldOutTrack.from_state(state.get("heldout"), cfg.eval_metric, cfg.early_stop_delta)
        if heldout
        else None
    )
    if main:
        (cfg.out / "data_report.json").write_text(json.dumps(report.as_dict(), indent=2))
        metrics = JsonlWriter(cfg.out / "metrics.jsonl", append=False)
        scored = {row["step"]: row for row in track.history} if track else {}
        before_step_one: list[tuple[int, float | None]] = [(0, None)] if 0 in scored else []
        for s, v in [*before_step_one, *losses]:
            metrics.write({"step": s, "loss": v, **metrics_fields(scored.get(s))})
    result = TrainResult(
        out=cfg.out,
        output_dir=None,
        step=start,
        total_steps=total_steps,
        losses=losses,
        report=report,
        resumed_from=start if latest is not None else None,
        cached_data=cached,
        heldout=track,
        stopped_early=bool(state.get("stopped_early")),
    )
    if result.stopped_early:
        total_steps = result.total_steps = start
    stop_at = total_steps if cfg.stop_after is None else min(total_steps, start + cfg.stop_after)
    rank = acc.process_index

    progress = ProgressBar(
        "train",
        total_steps,
        enabled=cfg.progress and main,
        start=start,
        fields={"loss": "-"},
        terminal_only=False,
    )
    began = time.perf_counter()
    tokens, label_tokens = 0, 0

    def evaluate(at: int) -> bool:
        """Score the held-out set at step ``at``; True when it is the new best."""
        assert track is not None
        scores = evaluate_heldout(torch, acc, model, heldout, pad_id, cfg.batch_size, cfg.logits)
        return track.add(at, *scores)

    def checkpoint(at: int, is_best: bool) -> None:
        extra: dict[str, Any] = {"stopped_early": result.stopped_early}
        if track is not None:
            extra["heldout"] = track.to_state()
        folder = art.save_checkpoint(
            acc, cfg, model, at, losses, tokens_before + tokens, labels_before + label_tokens, extra
        )
        if is_best and main and cfg.method == "lora":
            art.copy_adapter(folder / "adapter", cfg.out / art.BEST_ADAPTER)

    model.train()
    try:
        if track is not None and cfg.eval_on_start and start == 0 and not track.history:
            is_best = evaluate(0)
            if main:
                metrics.write({"step": 0, "loss": None, **metrics_fields(track.history[-1])})
            checkpoint(0, is_best)
        for step in range(start, stop_at):
            orders = [
                batch_order(len(samples), step * cfg.grad_accum + a, global_batch, cfg.seed)
                for a in range(cfg.grad_accum)
            ]
            # every process knows the whole step's label count: no communication needed
            step_labels = max(1, sum(label_counts[i] for order in orders for i in order))
            step_lead = sum(lead_counts[i] for order in orders for i in order)
            weight = step_labels + (cfg.lead_weight - 1.0) * step_lead
            # accelerate divides by grad_accum and DDP averages over processes: undo both,
            # so the gradient is that of the (weighted) mean over the step's label tokens
            scale = world * cfg.grad_accum / weight
            sums, lead_sums = [], []
            for order in orders:
                mine = [
                    samples[i] for i in order[rank * cfg.batch_size : (rank + 1) * cfg.batch_size]
                ]
                batch = collate(torch, mine, pad_id, acc.device)
                lead = lead_mask(torch, mine, acc.device)
                tokens += int(batch["attention_mask"].sum()) * world
                with acc.accumulate(model):
                    ce = label_loss(torch, model, batch, cfg.logits, lead, cfg.lead_weight)
                    acc.backward(ce.weighted * scale)
                    if acc.sync_gradients and cfg.max_grad_norm > 0:
                        acc.clip_grad_norm_(params, cfg.max_grad_norm)
                    optimizer.step()
                    scheduler.step()
                    optimizer.zero_grad()
                sums.append(ce.plain.detach().float())
                lead_sums.append(ce.lead.detach().float())
            label_tokens += step_labels
            step_loss = float(acc.gather(torch.stack(sums).sum()).sum().item()) / step_labels
            lead_total = float(acc.gather(torch.stack(lead_sums).sum()).sum().item())
            losses.append((step + 1, step_loss))
            result.step = step + 1
            evaluated = track is not None and (
                (step + 1) % cfg.evaluation_interval == 0 or step + 1 == total_steps
            )
            is_best = False
            if track is not None and evaluated:
                is_best = evaluate(step + 1)
                result.stopped_early = (
                    cfg.early_stop is not None and track.since_best >= cfg.early_stop
                )
            if main:
                metrics.write(
                    {
                        "step": step + 1,
                        "loss": step_loss,
                        "lead_loss": lead_total / step_lead if step_lead else None,
                        "lr": scheduler.get_last_lr()[0],
                        "tokens": tokens_before + tokens,
                        "label_tokens": labels_before + label_tokens,
                        "elapsed_s": round(time.perf_counter() - began, 3),
                        **metrics_fields(track.history[-1] if track and evaluated else None),
                    }
                )
            progress.advance(loss=f"{step_loss:.4f}")
            if (
                evaluated
                or result.stopped_early
                or (step + 1) % cfg.save_every == 0
                or step + 1 == stop_at
            ):
                checkpoint(step + 1, is_best)
            if result.stopped_early:
                break
    finally:
        progress.close()
        if main:
            metrics.close()
    result.seconds = time.perf_counter() - began
    result.tokens = tokens
    result.label_tokens = label_tokens
    result.finished = result.step >= total_steps or result.stopped_early
    best = cfg.out / art.BEST_ADAPTER
    if track is not None and track.best_step is not None and best.is_dir():
        result.best_adapter = best
    if main:
        art.plot_losses(losses, cfg.out / "loss.png", heldout=track.series() if track else None)
    if result.finished:
        result.output_dir = art.save_output(acc, cfg, model, tokenizer)
    if main:
        _write_result(cfg, result)
    acc.wait_for_everyone()
    return result


def _write_result(cfg: TrainConfig, r: TrainResult) -> None:
    serve = None
    if r.output_dir is not None and cfg.method == "lora":
        rank = max(16, cfg.lora_r)
        serve = f"--enable-lora --max-lora-rank {rank} --lora-modules NAME={r.output_dir}"
    elif r.output_dir is not None:
        serve = f"--model {r.output_dir}"
    data = {
        "step": r.step,
        "total_steps": r.total_steps,
        "finished": r.finished,
        "resumed_from": r.resumed_from,
        "first_loss": r.losses[0][1] if r.losses else None,
        "last_loss": r.losses[-1][1] if r.losses else None,
        "tokens_this_run": r.tokens,
        "label_tokens_this_run": r.label_tokens,
        "seconds_this_run": round(r.seconds, 3),
        "tokens_per_s": round(r.tokens_per_s, 2),
        "label_tokens_per_s": round(r.label_tokens_per_s, 2),
        "prompt_profile": cfg.resolved_profile(),
        "init_adapter": str(cfg.init_adapter) if cfg.init_adapter else None,
        "logits": cfg.logits,
        "lead_weight": cfg.lead_weight,
        "threads": cfg.threads,
        "lora_kernel": cfg.lora_kernel,
        "cached_data": r.cached_data,
        "heldout": r.heldout.summary(r.best_adapter, r.stopped_early) if r.heldout else None,
        "output_dir": str(r.output_dir) if r.output_dir else None,
        "vllm_args": serve,
        "samples": r.report.samples,
        "masked_share": round(r.report.masked_share, 4),
    }
    (cfg.out / "train_result.json").write_text(json.dumps(data, indent=2))
