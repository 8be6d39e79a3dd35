"""Grounded replay: what looking at the sandbox catches on recorded steps, and what it costs.

    python bench/grounded_replay.py --data runs/embedded-data/terminal/test.jsonl \\
        [--limit 200] [--json]

Each recorded terminal trajectory (the data generator's, ``aw-lookahead data
terminal``; its ``test`` split holds families no adapter trained on) is replayed
step by step in a fresh real sandbox seeded with the task's files (rebuilt from
the trajectory's seed and index). Before each step runs, the engine's
environment (``LocalEnvironment`` following the sandbox) looks at what the step
needs; then the step runs for real. The truth is the step's real exit status in
the replay (non-zero: it failed).

Reported, overall and per family: failing steps caught by observation (vetoed
with certainty, before any model), good steps vetoed by observation (false
vetoes: the bar is none), and the cost of a look (median, 95th percentile and
worst, milliseconds; the bar is a median of 20 ms).

With ``--base-url`` (a served world model, e.g. ``serve --local``), every step
the engine would still send to the model (not vetoed by observation) is also
predicted twice, greedy: with the observed state in its turn (what the grounded
engine sends) and without it. Reported for each: the rule verifier's pass rate
against the real output, and outcome agreement (the rule judges read a failure
in the prediction exactly when the step failed for real).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from aw_lookahead.datagen.terminal import SANDBOX_ENV, build_task
from aw_lookahead.evaluation.rules import verify
from aw_lookahead.lookahead import Outcome, RuleJudge
from aw_lookahead.lookahead.environment import LocalEnvironment
from aw_lookahead.lookahead.routing import terminal_command_text
from aw_lookahead.sandbox import TerminalSandbox
from aw_lookahead.trajectory import Action, Domain, Trajectory, read_trajectories
from aw_lookahead.worldmodel import OpenAIWorldModel

_FAILED = (Outcome.FAILURE, Outcome.NO_OP)


async def _predicted(
    model: OpenAIWorldModel, seen: Trajectory, action: Action, state: str | None, real: str
) -> dict[str, Any]:
    """One greedy prediction (with ``state`` in the turn, or not), scored against ``real``."""
    step = model.prepare_step(seen, [action]).with_states([state])
    [prediction] = await model.predict_step(step)
    if isinstance(prediction, Exception):
        return {"error": str(prediction)}
    verdict = await RuleJudge().judge(seen, action, prediction)
    context = "\n".join(f"{t.action}\n{t.observation}" for t in seen.turns)
    passed = verify(Domain.TERMINAL, prediction.observation, real, action=action, context=context)
    return {"fails": verdict.outcome in _FAILED, "rule_pass": passed.verdict}


async def replay(traj: Trajectory, model: OpenAIWorldModel | None = None) -> list[dict[str, Any]]:
    """One row per step: whether it failed for real, what looking said, what it cost."""
    rows: list[dict[str, Any]] = []
    family = str(traj.metadata.get("family", "?"))
    name, spec = build_task(int(traj.metadata["seed"]), int(traj.metadata["index"]))
    if name != family:
        raise SystemExit(f"{traj.id}: the generator now builds {name!r}, not {family!r}")
    async with TerminalSandbox(env=SANDBOX_ENV) as sandbox:
        for rel, text in spec.files.items():  # the task's files, as the generator seeded them
            path = sandbox.write_file(rel, text)
            path.chmod(0o755 if rel in spec.executable else 0o644)
        env = LocalEnvironment.following(sandbox, time_budget_s=0.2)
        seen = traj.model_copy(update={"turns": []})
        for turn in traj.turns:
            command = (terminal_command_text(turn.action) or "").rstrip("\n")
            looked = await env.observe(seen, turn.action)
            result = await sandbox.run(command, timeout=10.0)
            failed = result.exit_code != 0 or result.timed_out
            vetoed = looked is not None and looked.missing is not None
            row: dict[str, Any] = {
                "family": family,
                "command": command,
                "failed": failed,
                "observed_veto": vetoed,
                "why": looked.explanation() if looked is not None else "",
                "ms": looked.seconds * 1000 if looked is not None else None,
            }
            if model is not None and not vetoed:
                state = looked.state_text() if looked is not None else None
                row["grounded"] = await _predicted(model, seen, turn.action, state, result.output)
                row["blind"] = await _predicted(model, seen, turn.action, None, result.output)
            rows.append(row)
            seen = seen.with_turn(turn.action, result.output)
    return rows


def _fidelity(rows: list[dict[str, Any]], key: str) -> dict[str, Any] | None:
    scored = [r for r in rows if "fails" in r.get(key, {})]
    if not scored:
        return None
    agree = sum(r[key]["fails"] == r["failed"] for r in scored)
    return {
        "predictions": len(scored),
        "rule_pass": round(sum(r[key]["rule_pass"] for r in scored) / len(scored), 3),
        "outcome_agreement": round(agree / len(scored), 3),
        "failing_predicted_to_fail": sum(r[key]["fails"] for r in scored if r["failed"]),
        "failing": sum(r["failed"] for r in scored),
        "good_predicted_to_fail": sum(r[key]["fails"] for r in scored if not r["failed"]),
        "good": sum(not r["failed"] for r in scored),
    }


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    failing = [r for r in rows if r["failed"]]
    good = [r for r in rows if not r["failed"]]
    costs = sorted(r["ms"] for r in rows if r["ms"] is not None)
    return {
        "with_observed_state": _fidelity(rows, "grounded"),
        "without_it": _fidelity(rows, "blind"),
        "steps": len(rows),
        "failing": len(failing),
        "failing_caught_by_observation": sum(r["observed_veto"] for r in failing),
        "good": len(good),
        "good_vetoed_by_observation": sum(r["observed_veto"] for r in good),
        "look_ms_median": round(statistics.median(costs), 3) if costs else None,
        "look_ms_p95": round(costs[int(0.95 * (len(costs) - 1))], 3) if costs else None,
        "look_ms_max": round(costs[-1], 3) if costs else None,
    }


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    trajectories = [t for path in args.data for t in read_trajectories(path)]
    if args.limit:
        trajectories = trajectories[: args.limit]
    rows: list[dict[str, Any]] = []
    model = None
    if args.base_url:
        model = OpenAIWorldModel(
            args.model, base_url=args.base_url, max_tokens=args.max_tokens, temperature=0.0
        )
    for i, traj in enumerate(trajectories, 1):
        rows.extend(await replay(traj, model))
        if not args.json and i % 20 == 0:
            print(f"  replayed {i}/{len(trajectories)} trajectories", flush=True)
    by_family: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_family[row["family"]].append(row)
    return {
        "trajectories": len(trajectories),
        **summarize(rows),
        "per_family": {f: summarize(r) for f, r in sorted(by_family.items())},
        "false_vetoes": [
            {"command": r["command"], "why": r["why"]}
            for r in rows
            if r["observed_veto"] and not r["failed"]
        ],
        "caught": [r["command"] for r in rows if r["observed_veto"] and r["failed"]][:40],
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, action="append", required=True)
    p.add_argument("--limit", type=int, default=0, help="first N trajectories (0: all)")
    p.add_argument("--base-url", help="also predict each step with and without the state")
    p.add_argument("--model", help="the served model's name (default: the server's first)")
    p.add_argument("--max-tokens", type=int, default=64)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    result = asyncio.run(main_async(args))
    if args.json:
        print(json.dumps(result))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"grounded replay: {result['trajectories']} recorded trajectories")
    for col in ("family", "failing caught", "good vetoed", "look ms median / p95 / max"):
        table.add_column(col)
    for name, s in [("all", result), *result["per_family"].items()]:
        table.add_row(
            name,
            f"{s['failing_caught_by_observation']} of {s['failing']}",
            f"{s['good_vetoed_by_observation']} of {s['good']}",
            f"{s['look_ms_median']} / {s['look_ms_p95']} / {s['look_ms_max']}",
        )
    Console().print(table)
    for fv in result["false_vetoes"]:
        print(f"false veto: {fv['command']!r}: {fv['why']}")
    for key in ("with_observed_state", "without_it"):
        if result[key] is not None:
            print(f"model {key}: {result[key]}")


if __name__ == "__main__":
    main()
