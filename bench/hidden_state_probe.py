"""Hidden-state probe: does the world model know more about failure than its text says?

    python bench/hidden_state_probe.py --train runs/embedded-data/terminal/train.jsonl \\
        --train runs/embedded-data/mcp/train.jsonl \\
        --validation runs/embedded-data/terminal/validation.jsonl \\
        --validation runs/embedded-data/mcp/validation.jsonl \\
        --test runs/embedded-data/terminal/test.jsonl --test runs/embedded-data/mcp/test.jsonl \\
        [--model FOLDER] [--train-limit 1500] [--limit 400] [--test-limit 600] \\
        [--threads 2] [--json]

Every non-destructive turn is one action with a known outcome (as ``eval
calibrate`` and ``bench/heldout_gate.py`` read them: the rule judges on the
recorded observation). The model (default: the embedded merged model,
``prepare_embedded_model()``) reads each action's request as the gate sends it
(the served prompt profile) and its hidden states at the position where the
prediction would begin are kept: the last layer, a middle layer, and the last
layer averaged over the last 8 positions. A logistic regression (L2 ``--l2``)
is fit on the ``--train`` actions and scored on the other splits:

* ``auc``: how well the probe ranks failing above good actions (0.5 is
  chance); compare with ``auc`` of ``bench/heldout_gate.py`` (the gate's
  ``p_failure`` on the same ``--test`` sample, same ``--sample-seed``);
* ``at_validation_budget``: the threshold that vetoes at most 5% of good
  validation actions, applied to the test actions (catch and false-veto
  rates), and ``test_at_budget``: the best a threshold can do on the test
  actions themselves at that budget.

Needs the ``train`` extra (torch, transformers). One forward pass per action:
about 0.6 s each on one idle CPU core for the embedded model.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from heldout_gate import auc

from aw_lookahead.evaluation.calibration import failed_for_real, load_calibration_samples
from aw_lookahead.lookahead import RuleJudge
from aw_lookahead.prompts import history_messages
from aw_lookahead.training.config import train_prompts
from aw_lookahead.trajectory import Turn

LAST_POSITIONS = 8


def _features(torch: Any, tok: Any, model: Any, prompts: Any, sample: Any, max_len: int) -> Any:
    turns = [*sample.history.turns, Turn(action=sample.action, observation="")]
    request = history_messages(sample.history.model_copy(update={"turns": turns}), prompts=prompts)
    ids = tok.apply_chat_template(request[:-1], add_generation_prompt=True, return_tensors="pt")
    if not isinstance(ids, torch.Tensor):
        ids = ids["input_ids"]
    with torch.no_grad():
        hidden = model(input_ids=ids[:, -max_len:], output_hidden_states=True).hidden_states
    last, middle = hidden[-1][0], hidden[len(hidden) // 2][0]
    return torch.cat([last[-1], middle[-1], last[-LAST_POSITIONS:].mean(0)]).float()


async def _split(
    torch: Any, tok: Any, model: Any, prompts: Any, files: list[str], limit: int, args: Any
) -> tuple[Any, list[bool]]:
    samples, _ = load_calibration_samples(files, limit=limit, seed=args.sample_seed)
    judges = [RuleJudge()]
    rows, failed = [], []
    began = time.monotonic()
    for i, sample in enumerate(samples, 1):
        rows.append(_features(torch, tok, model, prompts, sample, args.max_len))
        failed.append(await failed_for_real(judges, sample))
        if i % 100 == 0 or i == len(samples):
            took = time.monotonic() - began
            print(f"  {files[0]}...: {i}/{len(samples)} actions, {took:.0f} s", file=sys.stderr)
    return torch.stack(rows), failed


def _fit(torch: Any, x: Any, failed: list[bool], l2: float) -> Any:
    mean, scale = x.mean(0), x.std(0) + 1e-6
    xs = (x - mean) / scale
    y = torch.tensor(failed, dtype=torch.float32)
    w = torch.zeros(x.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    opt = torch.optim.LBFGS([w, b], max_iter=300)

    def closure() -> Any:
        opt.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(xs @ w + b, y)
        loss = loss + l2 * (w**2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    return lambda z: (((z - mean) / scale) @ w.detach() + b.detach()).tolist()


def _threshold(scores: list[float], failed: list[bool], budget: float) -> float:
    """The lowest score above which at most ``budget`` of the good actions lie."""
    good = sorted((s for s, f in zip(scores, failed, strict=True) if not f), reverse=True)
    return good[min(int(budget * len(good)), len(good) - 1)]


def _rates(scores: list[float], failed: list[bool], threshold: float) -> dict[str, float]:
    def share(want: bool) -> float:
        picked = [s > threshold for s, f in zip(scores, failed, strict=True) if f is want]
        return round(sum(picked) / len(picked), 3) if picked else 0.0

    return {"failing_vetoed": share(True), "good_vetoed": share(False)}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    import torch
    import transformers

    from aw_lookahead.embedded import prepare_embedded_model

    torch.set_num_threads(args.threads)
    folder = Path(args.model) if args.model else prepare_embedded_model()
    tok = transformers.AutoTokenizer.from_pretrained(str(folder))
    model = transformers.AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32)
    model.eval()
    prompts = train_prompts(folder, "auto", None)
    train = await _split(torch, tok, model, prompts, args.train, args.train_limit, args)
    val = await _split(torch, tok, model, prompts, args.validation, args.limit, args)
    test = await _split(torch, tok, model, prompts, args.test, args.test_limit, args)
    probe = _fit(torch, train[0], train[1], args.l2)
    scores = {name: probe(x) for name, (x, _) in (("train", train), ("val", val), ("test", test))}
    cut = _threshold(scores["val"], val[1], args.budget)
    return {
        "model": str(folder),
        "actions": {"train": len(train[1]), "validation": len(val[1]), "test": len(test[1])},
        "failing": {"train": sum(train[1]), "validation": sum(val[1]), "test": sum(test[1])},
        "l2": args.l2,
        "auc": {
            "train": auc(scores["train"], train[1]),
            "validation": auc(scores["val"], val[1]),
            "test": auc(scores["test"], test[1]),
        },
        "at_validation_budget": {
            "budget": args.budget,
            "validation": _rates(scores["val"], val[1], cut),
            "test": _rates(scores["test"], test[1], cut),
        },
        "test_at_budget": _rates(
            scores["test"], test[1], _threshold(scores["test"], test[1], args.budget)
        ),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--train", action="append", required=True, help="trajectories to fit on")
    p.add_argument("--validation", action="append", required=True)
    p.add_argument("--test", action="append", required=True)
    p.add_argument("--model", help="HF folder (default: the embedded merged model)")
    p.add_argument("--train-limit", type=int, default=1500)
    p.add_argument("--limit", type=int, default=400, help="validation actions")
    p.add_argument("--test-limit", type=int, default=600)
    p.add_argument("--sample-seed", type=int, default=0)
    p.add_argument("--l2", type=float, default=0.1)
    p.add_argument("--budget", type=float, default=0.05)
    p.add_argument("--max-len", type=int, default=2048)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    for path in [*args.train, *args.validation, *args.test]:
        if not Path(path).is_file():
            p.error(f"{path} does not exist")
    result = asyncio.run(run(args))
    if args.json:
        print(json.dumps(result))
        return
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
