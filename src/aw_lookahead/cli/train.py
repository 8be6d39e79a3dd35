"""``aw-lookahead train``: warm-up fine-tuning of a world model on trajectories.

Runs in one process, or under ``accelerate launch`` for several GPUs (FSDP or
DeepSpeed through the accelerate config; see ``integrations/accelerate/``).
``--report-only`` prints the data report (turn classes, kept tokens) without
loading the model.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from aw_lookahead.training.classify import ClassifyConfig, TurnClass

from ._common import add_prompts_option
from ._train_grpo import add_grpo_options, run_grpo


def register(subparsers: Any) -> None:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "train",
        help="fine-tune a world model (LoRA or full) on trajectories",
        description="Warm-up fine-tuning: trajectories -> turn-level samples rendered with the "
        "inference message contract -> LoRA or full fine-tuning. Multi-GPU: "
        "accelerate launch --config_file integrations/accelerate/fsdp.yaml "
        "-m aw_lookahead.cli train ...",
    )
    p.add_argument("--model", required=True, type=Path, help="Hugging Face model folder")
    p.add_argument(
        "--data",
        required=True,
        nargs="+",
        type=Path,
        help="JSONL files or folders: trajectories (our schema, recorder output), shadow logs "
        "(LangGraph middleware or MCP proxy; the real observations are the targets) or "
        "AgentWorldBench records",
    )
    p.add_argument("--out", required=True, type=Path, help="output folder")
    p.add_argument(
        "--agent-data",
        nargs="+",
        type=Path,
        default=[],
        help="the agent's own SFT data (OpenAI messages JSONL with tool calls), mixed in at --mix",
    )
    p.add_argument(
        "--mix",
        type=float,
        default=0.0,
        help="share of the training sequences drawn from --agent-data (e.g. 0.3)",
    )
    add_prompts_option(p)
    p.add_argument(
        "--prompt-profile",
        choices=("auto", "standard", "short"),
        default="auto",
        help="packaged system prompts to train with; serve the result with the same profile "
        "(auto: the profile the model's name is served with; short: a few lines per domain, "
        "for small models) (default %(default)s)",
    )
    p.add_argument(
        "--method",
        choices=("lora", "full", "grpo"),
        default="lora",
        help="lora / full: SFT; grpo: RL with the hybrid reward (see the GRPO options)",
    )
    p.add_argument(
        "--targets",
        choices=("each", "all", "one"),
        default="each",
        help="each: one sequence per kept turn; all: one sequence per trajectory with every "
        "kept turn a target (SFT); one: one kept turn per trajectory (RL-style pools)",
    )
    p.add_argument("--max-len", type=int, default=2048, help="tokens per sequence")
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument(
        "--max-steps", type=int, default=None, help="optimizer steps (wins over --epochs)"
    )
    p.add_argument(
        "--stop-after",
        type=int,
        default=None,
        help="stop this invocation after N steps with a checkpoint; continue with --resume",
    )
    p.add_argument(
        "--batch-size", type=int, default=1, help="sequences per process per micro-batch"
    )
    p.add_argument("--grad-accum", type=int, default=1)
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--warmup-steps", type=int, default=0)
    p.add_argument("--scheduler", choices=("linear", "cosine", "constant"), default="linear")
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument(
        "--init-adapter",
        type=Path,
        default=None,
        metavar="DIR",
        help="start LoRA from this adapter (warm start: its rank and targets win; fresh "
        "optimizer); to continue an interrupted run use --resume",
    )
    p.add_argument("--lora-r", type=int, default=16)
    p.add_argument("--lora-alpha", type=int, default=32)
    p.add_argument("--lora-dropout", type=float, default=0.0)
    p.add_argument(
        "--precision",
        choices=("auto", "bf16", "fp32"),
        default="auto",
        help="auto: bf16 on a GPU that supports it, else fp32",
    )
    p.add_argument("--no-gradient-checkpointing", action="store_true")
    p.add_argument(
        "--logits",
        choices=("labels", "all"),
        default="labels",
        help="labels: output layer only where a label token is predicted (same loss, less "
        "work); all: every position (default %(default)s)",
    )
    p.add_argument(
        "--lead-weight",
        type=float,
        default=1.0,
        help="weight of each target's outcome line (the first line of its output, where a "
        "failure shows) in the step's mean loss; 1 = every label token alike (default)",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch CPU threads (default: torch's choice; on a busy CPU 1 can beat 2)",
    )
    p.add_argument(
        "--lora-kernel",
        choices=("fused", "peft"),
        default="fused",
        help="fused: each LoRA layer as one autograd node (same result, fewer passes); "
        "peft: PEFT's own forward (default %(default)s)",
    )
    p.add_argument("--save-every", type=int, default=50, help="checkpoint every N steps")
    p.add_argument(
        "--eval-data",
        nargs="+",
        type=Path,
        default=[],
        help="held-out data (same formats as --data, e.g. the validation split), scored "
        "during the run; LoRA runs keep the best adapter in OUT/best-adapter",
    )
    p.add_argument(
        "--eval-every",
        type=int,
        default=None,
        help="steps between held-out evaluations, each also a checkpoint (default: "
        "--save-every); the last step is always scored",
    )
    p.add_argument(
        "--eval-limit",
        type=int,
        default=200,
        help="at most N held-out sequences, a seeded spread (default %(default)s)",
    )
    p.add_argument(
        "--eval-metric",
        choices=("loss", "lead_loss"),
        default="loss",
        help="what the best adapter and --early-stop go by: the mean loss over all label "
        "tokens, or over each output's outcome line only (default %(default)s)",
    )
    p.add_argument(
        "--eval-on-start",
        action="store_true",
        help="also score the model before the first step (step 0), e.g. a warm start's "
        "--init-adapter, so the run's best can be where it started",
    )
    p.add_argument(
        "--early-stop",
        type=int,
        default=None,
        metavar="N",
        help="end the run once N held-out evaluations in a row have not beaten the best",
    )
    p.add_argument(
        "--early-stop-delta",
        type=float,
        default=0.0,
        help="how much lower the metric must be to count as better (default %(default)s)",
    )
    p.add_argument("--keep-checkpoints", type=int, default=2)
    p.add_argument("--resume", action="store_true", help="continue from the latest checkpoint")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--keep",
        action="append",
        default=[],
        metavar="CLASS=RATIO",
        help="keep ratio of a turn class (" + ", ".join(c.value for c in TurnClass) + "); "
        "repeatable, e.g. --keep echo=0.2",
    )
    p.add_argument("--keep-retries", action="store_true", help="do not skip exact retries")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--report-only",
        action="store_true",
        help="print the data report and exit (loads only the tokenizer)",
    )
    add_grpo_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    classify = ClassifyConfig.parse_ratios(
        args.keep, skip_retries=not args.keep_retries, seed=args.seed
    )
    _check_data(args.data)
    if args.eval_data:
        _check_data(args.eval_data, option="--eval-data")
    if args.report_only:
        return _report_only(args, classify)
    from aw_lookahead.training import TrainConfig, train

    cfg = TrainConfig(
        model=args.model,
        data=args.data,
        out=args.out,
        method=args.grpo_weights if args.method == "grpo" else args.method,
        targets=args.targets,
        prompts=args.prompts,
        prompt_profile=args.prompt_profile,
        logits=args.logits,
        lead_weight=args.lead_weight,
        threads=args.threads,
        lora_kernel=args.lora_kernel,
        agent_data=args.agent_data,
        mix=args.mix,
        init_adapter=args.init_adapter,
        max_len=args.max_len,
        epochs=args.epochs,
        max_steps=args.max_steps,
        stop_after=args.stop_after,
        batch_size=args.batch_size,
        grad_accum=args.grad_accum,
        lr=args.lr,
        warmup_steps=args.warmup_steps,
        scheduler=args.scheduler,
        weight_decay=args.weight_decay,
        lora_r=args.lora_r,
        lora_alpha=args.lora_alpha,
        lora_dropout=args.lora_dropout,
        precision=args.precision,
        gradient_checkpointing=not args.no_gradient_checkpointing,
        save_every=args.save_every,
        eval_data=args.eval_data,
        eval_every=args.eval_every,
        eval_limit=args.eval_limit,
        eval_metric=args.eval_metric,
        early_stop=args.early_stop,
        early_stop_delta=args.early_stop_delta,
        eval_on_start=args.eval_on_start,
        keep_checkpoints=args.keep_checkpoints,
        resume=args.resume,
        seed=args.seed,
        classify=classify,
        progress=not args.no_progress,
    )
    if args.method == "grpo":
        if args.eval_data:
            from aw_lookahead.errors import ConfigError

            raise ConfigError("--eval-data scores SFT runs (lora, full); GRPO reports its reward")
        return run_grpo(args, cfg)
    result = train(cfg)
    print(result.report.summary())
    first = result.losses[0][1] if result.losses else float("nan")
    last = result.losses[-1][1] if result.losses else float("nan")
    print(
        f"step {result.step}/{result.total_steps}, loss {first:.4f} -> {last:.4f}, "
        f"{result.label_tokens_per_s:.1f} label tokens/s ({result.tokens_per_s:.1f} tokens/s), "
        f"loss curve {cfg.out / 'loss.png'}"
    )
    if result.heldout is not None and result.heldout.best_step is not None:
        where = f", adapter {result.best_adapter}" if result.best_adapter else ""
        print(
            f"held-out {cfg.eval_metric}: best {result.heldout.best_value:.4f} at step "
            f"{result.heldout.best_step} of {len(result.heldout.history)} evaluations{where}"
        )
    if result.stopped_early:
        print(
            f"stopped early at step {result.step}: {cfg.early_stop} "
            f"evaluation{'s' if cfg.early_stop != 1 else ''} without a better held-out score"
        )
    if result.output_dir is not None:
        print(f"saved {result.output_dir}")
        if cfg.method == "lora":
            print(
                f"serve it: vllm serve {cfg.model} --enable-lora --max-lora-rank "
                f"{cfg.served_lora_rank} --lora-modules my-adapter={result.output_dir}"
            )
    else:
        print(f"stopped at step {result.step}; continue with --resume")
    return 0


def _check_data(paths: list[Path], option: str = "--data") -> None:
    """Read every record once before any model loads, so a bad line fails in seconds."""
    from aw_lookahead.errors import ConfigError
    from aw_lookahead.training.data import read_training_records

    if sum(1 for _ in read_training_records(paths)) == 0:
        raise ConfigError(f"{option} {' '.join(map(str, paths))} holds no records")


def _report_only(args: argparse.Namespace, classify: ClassifyConfig) -> int:
    from aw_lookahead._extras import require
    from aw_lookahead.errors import ConfigError
    from aw_lookahead.training.config import train_prompts
    from aw_lookahead.training.data import prepare_dataset

    transformers = require("train", "transformers")
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(args.model))
    except (OSError, ValueError) as exc:
        detail = " ".join(str(exc).split())  # transformers' messages span lines
        raise ConfigError(f"--model {args.model}: cannot load its tokenizer ({detail})") from exc
    samples, report = prepare_dataset(
        args.data,
        tokenizer,
        max_len=args.max_len,
        targets=args.targets,
        config=classify,
        prompts=train_prompts(args.model, args.prompt_profile, args.prompts),
    )
    if args.agent_data:
        from aw_lookahead.training.mix import mix_samples

        _, report = mix_samples(
            samples,
            report,
            args.agent_data,
            tokenizer,
            mix=args.mix,
            max_len=args.max_len,
            seed=args.seed,
        )
    print(report.summary())
    json.dump(report.as_dict(), sys.stdout, indent=2)
    print()
    return 0
