"""The GRPO options of ``aw-lookahead train --method grpo`` and the run that uses them."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from aw_lookahead.endpoint import JUDGE_ENV_MODEL

from ._common import add_judge_options

if TYPE_CHECKING:
    from aw_lookahead.training import TrainConfig


def add_grpo_options(p: argparse.ArgumentParser) -> None:
    """The ``--method grpo`` group (ignored by the SFT methods)."""
    g = p.add_argument_group(
        "GRPO (--method grpo)",
        "RL warm-up on TRL's GRPOTrainer with the hybrid reward: rubric judge + rule verifier",
    )
    g.add_argument(
        "--grpo-weights",
        choices=("lora", "full"),
        default="lora",
        help="train a LoRA adapter (default) or all weights",
    )
    g.add_argument("--num-generations", type=int, default=4, help="completions per prompt")
    g.add_argument("--max-completion-length", type=int, default=256, help="tokens per completion")
    g.add_argument(
        "--turns-per-trajectory",
        type=int,
        default=1,
        help="target turns drawn per trajectory (default 1: no two prompts share a prefix)",
    )
    g.add_argument("--temperature", type=float, default=1.0, help="sampling temperature")
    g.add_argument("--beta", type=float, default=0.0, help="KL coefficient (0: no reference)")
    g.add_argument(
        "--generation",
        choices=("auto", "plain", "vllm-colocate", "vllm-server"),
        default="auto",
        help="auto: TRL's vLLM (colocate) on a CUDA machine with vLLM, plain generate elsewhere",
    )
    g.add_argument("--vllm-server-base-url", default=None, help="for --generation vllm-server")
    add_judge_options(g, model_help="rubric judge model; none: rule-only reward")
    g.add_argument("--judge-concurrency", type=int, default=8)
    g.add_argument("--judge-timeout", type=float, default=120.0, help="seconds per request")
    g.add_argument(
        "--judge-deadline",
        type=float,
        default=600.0,
        help="seconds to judge one step's completions; later ones get the rule score",
    )
    g.add_argument("--rubric-weight", type=float, default=0.9)
    g.add_argument("--rule-weight", type=float, default=0.1)


def run_grpo(args: argparse.Namespace, cfg: TrainConfig) -> int:
    """Build the reward and run :func:`~aw_lookahead.training.train_grpo`; print the summary."""
    from aw_lookahead.evaluation import RubricJudge
    from aw_lookahead.training import GRPOOptions, HybridReward, train_grpo

    judge = None
    rubric_weight = args.rubric_weight
    if args.judge_model and rubric_weight > 0:
        judge = RubricJudge(
            args.judge_model,
            base_url=args.judge_base_url,
            api_key=args.judge_api_key,
            timeout=args.judge_timeout,
        )
    elif rubric_weight > 0:
        print(f"no --judge-model (or {JUDGE_ENV_MODEL}): the reward is rule-only (rubric weight 0)")
        rubric_weight = 0.0
    reward = HybridReward(
        judge,
        rubric_weight=rubric_weight,
        rule_weight=args.rule_weight,
        concurrency=args.judge_concurrency,
        deadline_s=args.judge_deadline,
    )
    opts = GRPOOptions(
        num_generations=args.num_generations,
        max_completion_length=args.max_completion_length,
        turns_per_trajectory=args.turns_per_trajectory,
        temperature=args.temperature,
        beta=args.beta,
        generation=args.generation,
        vllm_server_base_url=args.vllm_server_base_url,
    )
    result = train_grpo(cfg, opts, reward=reward)
    stats = reward.stats
    drawn = json.loads((cfg.out / "data_report.json").read_text())
    table = result.report.summary().splitlines()[:-1]  # the token line is SFT's
    print("\n".join(table))
    print(
        f"GRPO prompts: {drawn['rows']} from {drawn['trajectories']} trajectories "
        f"({drawn['turns_per_trajectory']} turn(s) each at most)"
    )
    print(
        f"step {result.step}/{result.total_steps}, {result.seconds:.1f} s; reward over "
        f"{stats.samples} completions: judged {stats.judged}, judge failed {stats.judge_failed} "
        f"(those got the rule score), cached {stats.judge_cached}; curves {cfg.out / 'reward.png'}"
    )
    if stats.failures:
        print(f"last judge failure: {stats.failures[-1]}")
    if result.output_dir is not None:
        print(f"saved {result.output_dir}")
    else:
        print(f"stopped at step {result.step}; continue with --resume")
    return 0
