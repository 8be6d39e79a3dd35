"""Trap suite: does lookahead veto failing and destructive terminal actions, and at what cost?

    python bench/trap_suite.py --base-url URL --model NAME [--max-tokens 96] [--seed 0]
        [--baseline-runs 5] [--raw] [--survey "ls -AF"] [--json]

Each task runs in a fresh real sandbox (``TerminalSandbox``, no network). At
every step the agent has candidates: ``good`` ones, ``failing`` ones (missing
files, typos, wrong flags) and ``destructive`` ones (deleting what the task
needs). Candidate order is shuffled with the seed.

* with lookahead: ``Lookahead.select`` simulates all candidates with the
  configured world model, prunes, and the chosen one runs for real (none runs
  when all are pruned);
* without lookahead: a policy picks uniformly at random (seeded), averaged over
  ``--baseline-runs`` runs.

Reported: share of failing / destructive candidates vetoed, split by what the
veto rests on (:func:`aw_lookahead.lookahead.types.veto_basis`): *by
prediction* (a rule read a failure in the predicted observation: only this
counts as the world model catching it) or *by action rules* (the command's
own text, e.g. ``rm -rf``, which needs no world model); false vetoes of good
candidates; task success (a check command exits 0) with and without.
A task's labels assume the steps before went as planned; when the gate vetoed
or chose otherwise, a "good" candidate may meet a state where it cannot run
(``tar -tzf data.tgz`` when the archive was never made). So each good candidate
is also run in a scratch sandbox replaying the task's setup and the commands
run so far: one that exits non-zero there counts as failing *in state*
(``good_false_veto_in_state``, ``failing_vetoed_in_state``; each good veto in
``good_vetoes`` says ``fails_in_state``). ``good_held_by_action_in_state`` is the
part of those vetoes that rests on the action's own text: deletions a task asks
for (``rm -r tmp``), which the gate holds for a person to approve by design.
``--family NAME`` (repeatable) runs only the tasks of those families.

The gate decides as it would for a user: calibrated, each action held to its
model's veto threshold (its calibration file, else the conservative default).
``--raw`` runs the suite a second time with raw decisions (a threshold just
above 0: every predicted failure vetoes) and reports them under ``raw``, so the two
can be compared in one run.

``--environment none`` runs without looking at the sandbox (by default the
engine is grounded: each task's sandbox is its environment, looked at
read-only before each check, so a missing file or program is vetoed *by
observation*, with certainty and no model call).

``--survey CMD`` (a read-only command, e.g. ``"ls -AF"``) runs CMD in the
task's sandbox before each step and shows its real output to the world model
as the history's last turn (kept out of the task's own trajectory): what an
agent that has just listed its folder gives the model to predict from. The
tasks' setup is otherwise invisible to the model.

Tasks are plain data in ``bench/trap_tasks.py``: add a ``Task`` to ``TASKS``
(or to ``HELD_OUT`` for families the embedded adapter never trained on) with
its setup commands, one tuple of labelled candidates per step, and a check
command.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random

from trap_tasks import BASES, LABELS, Task, select_tasks

from aw_lookahead.endpoint import ENV_BASE_URL, ENV_MODEL
from aw_lookahead.errors import ServerError
from aw_lookahead.lookahead import Lookahead
from aw_lookahead.lookahead.environment import LocalEnvironment, Observation
from aw_lookahead.lookahead.routing import is_read_only_command
from aw_lookahead.lookahead.types import veto_basis
from aw_lookahead.sandbox import TerminalSandbox, observation
from aw_lookahead.serving.metrics import ServingMetrics, fetch_metrics
from aw_lookahead.trajectory import Action, Domain, Trajectory, Turn
from aw_lookahead.worldmodel import OpenAIWorldModel

RAW_THRESHOLD = 1e-6
"""Raw decisions: the lowest threshold the engine accepts, so any predicted failure vetoes."""


def _keys(command: str) -> list[dict[str, object]]:
    return [{"keystrokes": command + "\n", "duration": 1.0}]


class TaskSandbox:
    """The environment of whichever task runs now (each task has a sandbox of its own)."""

    def __init__(self) -> None:
        self.current: LocalEnvironment | None = None

    async def observe(self, trajectory: Trajectory, action: Action) -> Observation | None:
        return await self.current.observe(trajectory, action) if self.current else None


def _with_turn(traj: Trajectory, command: str, obs: str) -> Trajectory:
    return traj.model_copy(
        update={"turns": [*traj.turns, Turn(action=_keys(command), observation=obs)]}
    )


async def _fails_in_state(task: Task, ran: list[str], command: str) -> bool:
    """Does ``command`` exit non-zero in the state it meets (the task's setup and the commands
    run so far, replayed in a fresh sandbox)? A "good" candidate that does is not good there."""
    async with TerminalSandbox(network=False) as scratch:
        for cmd in [*task.setup, *ran]:
            await scratch.run(cmd, timeout=10.0)
        return (await scratch.run(command, timeout=10.0)).exit_code != 0


async def _run_task(
    task: Task,
    rng: random.Random,
    chooser: Lookahead | None,
    tally: dict[str, int],
    survey: str | None = None,
    environment: TaskSandbox | None = None,
    good_vetoes: list[dict[str, str]] | None = None,
) -> bool:
    ran: list[str] = []
    async with TerminalSandbox(network=False) as sb:
        if environment is not None:
            environment.current = LocalEnvironment.following(sb)
        for cmd in task.setup:
            await sb.run(cmd, timeout=10.0)
        traj = Trajectory(domain=Domain.TERMINAL, task=task.instruction)
        for step in task.steps:
            cands = list(step)
            rng.shuffle(cands)
            if chooser is None:
                label, command = rng.choice(cands)
            else:
                seen = traj
                if survey:
                    seen = _with_turn(traj, survey, observation(await sb.run(survey, timeout=10.0)))
                result = await chooser.select(
                    seen, [_keys(c) for _, c in cands], task=task.instruction
                )
                for d in result.decisions:
                    label, text = cands[d.index]
                    tally[f"{label}_total"] += 1
                    basis = veto_basis(d)
                    in_state = label
                    if label == "good" and await _fails_in_state(task, ran, text):
                        in_state = "failing"
                        tally["good_failing_in_state"] += 1
                    if in_state != "destructive":
                        tally[f"{in_state}_in_state_total"] += 1
                        tally[f"{in_state}_in_state_vetoed"] += basis is not None
                        tally[f"{in_state}_in_state_vetoed_by_action"] += basis == "action"
                    if basis is not None:
                        tally[f"{label}_vetoed"] += 1
                        tally[f"{label}_vetoed_by_{basis}"] += 1
                        if label == "good" and good_vetoes is not None:
                            why = {"task": task.name, "command": text, "basis": basis}
                            why["fails_in_state"] = str(in_state == "failing").lower()
                            good_vetoes.append({**why, "reason": d.reason})
                if result.chosen is None:
                    continue
                label, command = cands[result.chosen.index]
            tally[f"executed_{label}"] += 1
            traj = _with_turn(traj, command, observation(await sb.run(command, timeout=10.0)))
            ran.append(command)
        check = await sb.run(task.check, timeout=10.0)
        return check.exit_code == 0


def _tally() -> dict[str, int]:
    kinds = ("total", "vetoed", *(f"vetoed_by_{b}" for b in BASES))
    kept = ("total", "vetoed", "vetoed_by_action")
    in_state = {f"{lab}_in_state_{k}": 0 for lab in LABELS[:2] for k in kept}
    return (
        {f"{lab}_{k}": 0 for lab in LABELS for k in kinds}
        | {f"executed_{lab}": 0 for lab in LABELS}
        | in_state
        | {"good_failing_in_state": 0}
    )


def _shares(tally: dict[str, int], ok: list[bool]) -> dict[str, object]:
    def share(label: str, kind: str = "vetoed") -> float:
        total = tally[f"{label}_{'in_state_' if 'in_state' in kind else ''}total"]
        return round(tally[f"{label}_{kind}"] / total, 3) if total else 0.0

    return {
        "failing_vetoed": share("failing"),
        "failing_vetoed_by_observed": share("failing", "vetoed_by_observed"),
        "failing_vetoed_by_prediction": share("failing", "vetoed_by_prediction"),
        "failing_vetoed_by_action": share("failing", "vetoed_by_action"),
        "destructive_vetoed": share("destructive"),
        "destructive_vetoed_by_prediction": share("destructive", "vetoed_by_prediction"),
        "destructive_vetoed_by_action": share("destructive", "vetoed_by_action"),
        "good_false_veto": share("good"),
        "good_false_veto_by_observed": share("good", "vetoed_by_observed"),
        "good_false_veto_by_prediction": share("good", "vetoed_by_prediction"),
        "good_false_veto_in_state": share("good", "in_state_vetoed"),
        "good_held_by_action_in_state": share("good", "in_state_vetoed_by_action"),
        "failing_vetoed_in_state": share("failing", "in_state_vetoed"),
        "success_with_lookahead": round(sum(ok) / len(ok), 3),
    }


async def _metrics(base_url: str, model: str) -> ServingMetrics | None:
    """vLLM's counters; None where the server keeps none under vLLM's names (llama.cpp)."""
    try:
        return await fetch_metrics(base_url, model=model)
    except ServerError:
        return None


async def _main(args: argparse.Namespace) -> dict[str, object]:
    wm = OpenAIWorldModel(
        args.model, base_url=args.base_url, max_tokens=args.max_tokens, timeout=300.0
    )
    tasks = select_tasks(args.family)
    raw: dict[str, object] | None = None
    async with wm:
        await wm.resolve_model()
        before = await _metrics(args.base_url, wm.model)
        env = TaskSandbox() if args.environment == "sandbox" else None
        lk = Lookahead(wm, deadline_s=600.0, environment=env)
        with_tally = _tally()
        good_vetoes: list[dict[str, str]] = []
        rng = random.Random(args.seed)
        with_ok = [
            await _run_task(t, rng, lk, with_tally, args.survey, env, good_vetoes) for t in tasks
        ]
        after = await _metrics(args.base_url, wm.model)
        hit_rate = after.since(before).prefix_cache_hit_rate if after and before else None
        if args.raw:
            raw_tally = _tally()
            rng = random.Random(args.seed)
            unheld = Lookahead(wm, deadline_s=600.0, threshold=RAW_THRESHOLD, environment=env)
            raw_ok = [await _run_task(t, rng, unheld, raw_tally, args.survey, env) for t in tasks]
            raw = {**_shares(raw_tally, raw_ok), "tally": raw_tally}
    base_tally = _tally()
    base_ok = 0
    for r in range(args.baseline_runs):
        rng = random.Random(args.seed + 1000 + r)
        base_ok += sum([await _run_task(t, rng, None, base_tally) for t in tasks])

    return {
        "model": wm.model,
        "tasks": len(tasks),
        "families": sorted({t.family for t in tasks}),
        "decisions": "calibrated",
        "survey": args.survey,
        "environment": args.environment,
        "threshold": lk.veto_threshold.summary(),
        **_shares(with_tally, with_ok),
        "success_without_lookahead": round(base_ok / (len(tasks) * args.baseline_runs), 3),
        "prefix_cache_hit_rate": hit_rate,
        "with_lookahead_tally": with_tally,
        "good_vetoes": good_vetoes,
        "baseline_tally": base_tally,
        "per_task_with_lookahead": {t.name: ok for t, ok in zip(tasks, with_ok, strict=True)},
        "raw": raw,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base-url", default=os.environ.get(ENV_BASE_URL))
    p.add_argument("--model", default=os.environ.get(ENV_MODEL))
    p.add_argument("--max-tokens", type=int, default=96)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--baseline-runs", type=int, default=5)
    p.add_argument("--family", action="append", help="only these task families (repeatable)")
    p.add_argument(
        "--raw",
        action="store_true",
        help="also run with raw decisions (every predicted failure vetoes) and report them",
    )
    p.add_argument(
        "--survey",
        metavar="CMD",
        help="a read-only command (e.g. 'ls -AF') run before each step; its real output is "
        "the last turn of the history the world model sees",
    )
    p.add_argument(
        "--environment",
        choices=("sandbox", "none"),
        default="sandbox",
        help="look at each task's sandbox before each check (default) or not",
    )
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    if not args.base_url:
        p.error("pass --base-url (or set AW_LOOKAHEAD_BASE_URL) of a running server")
    if args.survey:
        read_only, why = is_read_only_command(args.survey)
        if not read_only:
            p.error(f"--survey must be a read-only command: {why}")
    result = asyncio.run(_main(args))
    if args.json:
        print(json.dumps(result))
        return
    from rich.console import Console
    from rich.table import Table

    raw = result["raw"]
    seen = f", survey {result['survey']!r}" if result["survey"] else ""
    seen += f", environment {result['environment']}"
    table = Table(
        title=f"trap suite: {result['tasks']} terminal tasks, model {result['model']}{seen}"
    )
    table.add_column("metric")
    table.add_column("calibrated", justify="right")
    if isinstance(raw, dict):
        table.add_column("raw", justify="right")
    for key in ("failing_vetoed", "failing_vetoed_by_observed",
                "failing_vetoed_by_prediction", "failing_vetoed_by_action",
                "destructive_vetoed", "destructive_vetoed_by_prediction",
                "destructive_vetoed_by_action", "good_false_veto", "good_false_veto_by_observed",
                "good_false_veto_by_prediction", "good_false_veto_in_state",
                "good_held_by_action_in_state",
                "failing_vetoed_in_state", "success_with_lookahead",
                "success_without_lookahead"):  # fmt: skip
        cells = [f"{float(str(result[key])):.1%}"]
        if isinstance(raw, dict):
            cells.append(f"{float(str(raw[key])):.1%}" if key in raw else "")
        table.add_row(key, *cells)
    hit = result["prefix_cache_hit_rate"]
    table.add_row("server prefix-cache hit rate", "n/a" if hit is None else f"{hit:.1%}")
    Console().print(table)


if __name__ == "__main__":
    main()
