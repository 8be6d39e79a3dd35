"""Held-out gate: the default engine's decisions on recorded actions of families it never saw.

    python bench/heldout_gate.py --data runs/embedded-data/terminal/test.jsonl \\
        [--data runs/embedded-data/mcp/test.jsonl] --base-url URL [--model NAME] \\
        [--limit 600] [--sample-seed 0] [--concurrency 4] [--json]

Every non-destructive turn of the trajectories (``load_calibration_samples``,
as ``eval calibrate`` reads them) is one action whose real outcome is known:
the rule judges read its recorded observation (``failed_for_real``). Each is
checked by ``Lookahead(world_model)`` with its defaults, so the thresholds
are the ones a user gets for this model (its calibration file, shipped
beside the embedded adapter; the conservative default without one) and the
sampling is the calibration's. Run it on a split no training run saw (the
generator's ``test`` families) and the numbers say what the calibrated gate
does on work it was not fit to, on many more actions than the trap suite.

Reported for all actions, per class of action (``terminal/read-only``,
``terminal/may-change``, ``mcp/read-only``, ``mcp/may-change``: the classes
the calibration fits), and per family:

* ``failing_vetoed`` / ``good_vetoed``: vetoed by prediction, calibrated
  (what the gate does); ``raw_failing`` / ``raw_good``: the world model
  predicted a failure at all (a veto, or a run marked uncertain);
* ``agreement`` / ``raw_agreement``: the decision (vetoed or not) matches
  the real outcome (failed or not);
* ``auc``: how well ``p_failure`` ranks failing above good actions (0.5 is
  chance);
* ``unchecked``: actions the world model could not check (left out above).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from collections import defaultdict
from typing import Any

from aw_lookahead._progress import line_progress
from aw_lookahead.endpoint import ENV_BASE_URL, ENV_MODEL
from aw_lookahead.evaluation.calibration import failed_for_real, load_calibration_samples
from aw_lookahead.lookahead import Lookahead, RuleJudge
from aw_lookahead.lookahead.calibration import fit_group
from aw_lookahead.lookahead.types import veto_basis
from aw_lookahead.worldmodel import OpenAIWorldModel


def auc(scores: list[float], failed: list[bool]) -> float | None:
    """Probability that a failing action scores above a good one (ties count half)."""
    pos = [s for s, f in zip(scores, failed, strict=True) if f]
    neg = [s for s, f in zip(scores, failed, strict=True) if not f]
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return round(wins / (len(pos) * len(neg)), 3)


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The shares above for ``rows`` (one per action)."""
    checked = [r for r in rows if r["p_failure"] is not None]
    n_fail = sum(r["failed"] for r in checked)
    n_good = len(checked) - n_fail

    def count(key: str, failed: bool) -> int:
        return sum(1 for r in checked if r["failed"] is failed and r[key])

    def share(part: int, whole: int) -> float | None:
        return round(part / whole, 3) if whole else None

    return {
        "actions": len(rows),
        "unchecked": len(rows) - len(checked),
        "failing": n_fail,
        "good": n_good,
        "failing_vetoed": count("vetoed", True),
        "good_vetoed": count("vetoed", False),
        "catch_rate": share(count("vetoed", True), n_fail),
        "false_veto_rate": share(count("vetoed", False), n_good),
        "raw_failing": count("raw", True),
        "raw_good": count("raw", False),
        "agreement": share(sum(r["vetoed"] == r["failed"] for r in checked), len(checked)),
        "raw_agreement": share(sum(r["raw"] == r["failed"] for r in checked), len(checked)),
        "auc": auc([float(r["p_failure"]) for r in checked], [r["failed"] for r in checked]),
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    samples, destructive = load_calibration_samples(
        args.data, limit=args.limit, seed=args.sample_seed
    )
    wm = OpenAIWorldModel(args.model, base_url=args.base_url, timeout=300.0)
    judges = [RuleJudge()]
    rows: list[dict[str, Any]] = []
    gate = asyncio.Semaphore(args.concurrency)
    progress = line_progress("heldout_gate", "actions checked")
    async with wm:
        await wm.resolve_model()
        engine = Lookahead(wm, judges=judges, cache=False)

        async def one(sample: Any) -> None:
            async with gate:
                (d,) = await engine.gate(sample.history, [sample.action])
            read_only = engine.router.route(sample.history, sample.action).read_only
            vetoed = veto_basis(d) == "prediction"
            rows.append(
                {
                    "id": sample.id,
                    "family": str(sample.history.metadata.get("family", "?")),
                    "group": fit_group(sample.history.domain.value, read_only),
                    "failed": await failed_for_real(judges, sample),
                    "p_failure": d.p_failure,
                    "vetoed": vetoed,
                    "raw": vetoed or d.uncertain,
                }
            )
            progress(len(rows), len(samples))

        await asyncio.gather(*(one(s) for s in samples))
        threshold = engine.veto_threshold.summary()
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    families: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[r["group"]].append(r)
        families[r["family"]].append(r)
    return {
        "model": wm.model,
        "data": args.data,
        "destructive_left_out": destructive,
        "threshold": threshold,
        "all": summarize(rows),
        "by_class": {g: summarize(rs) for g, rs in sorted(groups.items())},
        "by_family": {f: _brief(summarize(rs)) for f, rs in sorted(families.items())},
    }


def _brief(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: summary[k] for k in ("failing", "failing_vetoed", "good", "good_vetoed", "auc")}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", action="append", required=True, help="trajectory JSONL (repeatable)")
    p.add_argument("--base-url", default=os.environ.get(ENV_BASE_URL))
    p.add_argument("--model", default=os.environ.get(ENV_MODEL))
    p.add_argument("--limit", type=int, default=600, help="a seeded spread of N actions")
    p.add_argument("--sample-seed", type=int, default=0)
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    if not args.base_url:
        p.error("pass --base-url (or set AW_LOOKAHEAD_BASE_URL) of a running server")
    result = asyncio.run(run(args))
    if args.json:
        print(json.dumps(result))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"held-out gate, model {result['model']} ({result['threshold']['source']})")
    columns = [("all", result["all"]), *result["by_class"].items()]
    table.add_column("metric")
    for name, _ in columns:
        table.add_column(name, justify="right")
    for key in result["all"]:
        table.add_row(key, *(str(summary[key]) for _, summary in columns))
    Console().print(table)


if __name__ == "__main__":
    main()
