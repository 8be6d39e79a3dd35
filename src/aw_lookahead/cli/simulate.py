"""``aw-lookahead simulate``: predict the observation that follows one action."""

from __future__ import annotations

import argparse
import asyncio
import itertools
import sys
from typing import Any

from aw_lookahead._jsonl import decode_jsonl_line
from aw_lookahead.errors import TrajectoryError, UsageError
from aw_lookahead.trajectory import Action, Domain, Trajectory, Turn, read_trajectories

from ._common import (
    add_prompts_option,
    add_server_options,
    print_json,
    prompts_from_args,
    world_model_from_args,
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "simulate",
        help="predict what the environment answers to an action",
        description=(
            "Predict the next observation for ACTION, given a trajectory so far. The history "
            "comes from --trajectory (a JSONL file in our schema) or --history (inline JSON "
            "list of {action, observation}). JSON actions are parsed; anything else is text."
        ),
    )
    p.add_argument("action", help="the action: text, or JSON (a tool call, a keystroke list)")
    p.add_argument(
        "--domain",
        default=None,
        help="mcp, search, terminal, swe, android, web or os (default: the trajectory's, "
        "else terminal)",
    )
    p.add_argument("--trajectory", help="JSONL file of trajectories (our schema)")
    p.add_argument("--index", type=int, default=0, help="which trajectory of the file (0-based)")
    p.add_argument("--turns", type=int, default=None, help="use only the first N turns as history")
    p.add_argument("--history", help="inline JSON list of {action, observation} turns")
    p.add_argument("--task", help="the task instruction (first turn)")
    add_prompts_option(p)
    p.add_argument("--max-tokens", type=int, default=512)
    p.add_argument("--temperature", type=float, default=0.6)
    p.add_argument("--seed", type=int, default=None, help="sampling seed (reproducible output)")
    p.add_argument(
        "--thinking",
        choices=["on", "off", "server"],
        default="server",
        help="thinking in the chat template (default: the server's)",
    )
    add_server_options(p)
    p.add_argument("--json", action="store_true", help="print the prediction as JSON")
    p.set_defaults(func=run)


def parse_action(text: str) -> Action:
    """JSON objects and lists become structured actions; other text stays text."""
    stripped = text.strip()
    if stripped[:1] in "[{":
        try:
            value: Any = decode_jsonl_line(stripped, source="ACTION")
        except TrajectoryError as exc:
            detail = str(exc).removeprefix("ACTION: ")
            raise UsageError(
                f"the action looks like JSON but does not parse ({detail}); quote it as text "
                "or fix the JSON"
            ) from None
        if isinstance(value, dict | list):
            return value
    return text


def _history(args: argparse.Namespace) -> Trajectory:
    if args.trajectory and args.history:
        raise UsageError("give either --trajectory or --history, not both")
    if args.trajectory:
        found = next(itertools.islice(read_trajectories(args.trajectory), args.index, None), None)
        if found is None:
            raise UsageError(f"{args.trajectory} has no trajectory at --index {args.index}")
        traj = found
    else:
        turns: list[Turn] = []
        if args.history:
            raw = decode_jsonl_line(args.history, source="--history")
            if not isinstance(raw, list):
                raise UsageError("--history must be a JSON list of {action, observation} objects")
            for i, item in enumerate(raw):
                try:
                    turns.append(Turn.model_validate(item))
                except ValueError as exc:
                    raise UsageError(f"--history item {i}: {exc}") from exc
        traj = Trajectory(domain=Domain.parse(args.domain or "terminal"), turns=turns)
    if args.domain:
        traj = traj.model_copy(update={"domain": Domain.parse(args.domain)})
    if args.task:
        traj = traj.model_copy(update={"task": args.task})
    if args.turns is not None:
        traj = traj.prefix(args.turns)
    return traj


def run(args: argparse.Namespace) -> int:
    trajectory = _history(args)
    action = parse_action(args.action)
    thinking = {"on": True, "off": False, "server": None}[args.thinking]
    prompts = prompts_from_args(args)

    async def go() -> int:
        async with world_model_from_args(
            args,
            max_tokens=args.max_tokens,
            temperature=args.temperature,
            seed=args.seed,
            thinking=thinking,
            prompts=prompts,
        ) as wm:
            pred = await wm.predict(trajectory, action)
        if args.json:
            print_json(pred.model_dump(mode="json"))
        else:
            flags = []
            if pred.truncated:
                flags.append("truncated")
            if pred.trimmed_turns:
                flags.append(f"{pred.trimmed_turns} old turns trimmed")
            cached = pred.usage.cached_tokens
            print(
                f"# {pred.model}: {pred.latency_s:.2f} s, {pred.usage.prompt_tokens} prompt "
                f"tokens ({cached if cached is not None else '?'} cached), "
                f"{pred.usage.completion_tokens} generated, parsed by {pred.parse_method}"
                + (f" [{', '.join(flags)}]" if flags else ""),
                file=sys.stderr,
            )
            print(pred.observation)
        return 0

    return asyncio.run(go())
