"""How many world-model calls risk routing saves on a mixed terminal trajectory.

Replays ``examples/data/mixed_terminal.jsonl``: at each turn the recorded action
is gated once with ``simulate="always"`` (baseline, same run) and once with
``simulate="risky"``; the world model replays the recorded observation and
counts its calls. Turns marked ``metadata.destructive`` must never be skipped.
Targets: >= 40% of calls saved, 0 destructive actions skipped.

    .venv/bin/python bench/routing.py [--data PATH] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from aw_lookahead.lookahead import DecisionKind, Lookahead
from aw_lookahead.trajectory import Action, Trajectory, action_text, read_trajectories
from aw_lookahead.worldmodel import FunctionWorldModel

DEFAULT = Path(__file__).resolve().parent.parent / "examples" / "data" / "mixed_terminal.jsonl"


async def run(path: Path) -> dict[str, object]:
    total_actions = 0
    calls = {"always": 0, "risky": 0}
    destructive = 0
    destructive_skipped: list[str] = []
    skipped_actions: list[str] = []
    for traj in read_trajectories(path):
        recorded = {action_text(t.action): t.observation for t in traj.turns}

        def replay(_t: Trajectory, a: Action, recorded: dict[str, str] = recorded) -> str:
            return recorded.get(action_text(a), "")

        for policy in ("always", "risky"):
            wm = FunctionWorldModel(replay, model_id=f"replay-{policy}")
            lk = Lookahead(wm, simulate=policy, cache=False)
            for i, turn in enumerate(traj.turns):
                [decision] = await lk.gate(traj.prefix(i), [turn.action])
                if policy == "risky" and decision.kind is DecisionKind.SKIPPED:
                    skipped_actions.append(action_text(turn.action))
                    if turn.metadata.get("destructive"):
                        destructive_skipped.append(action_text(turn.action))
            calls[policy] = calls[policy] + wm.calls
        total_actions += len(traj.turns)
        destructive += sum(1 for t in traj.turns if t.metadata.get("destructive"))
    saved = 1 - calls["risky"] / calls["always"] if calls["always"] else 0.0
    return {
        "actions": total_actions,
        "calls_always": calls["always"],
        "calls_risky": calls["risky"],
        "saved_share": round(saved, 3),
        "destructive_actions": destructive,
        "destructive_skipped": len(destructive_skipped),
        "destructive_skipped_list": destructive_skipped,
        "targets": {"saved_share": ">= 0.40", "destructive_skipped": "== 0"},
        "targets_met": saved >= 0.40 and not destructive_skipped,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    out = asyncio.run(run(args.data))
    if args.json:
        print(json.dumps(out))
    else:
        for key, value in out.items():
            print(f"{key:>26}: {value}")
