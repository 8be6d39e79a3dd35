"""Token lengths of a generated dataset, rendered exactly as SFT (``--targets all``) sees it.

For each trajectory of ``train/validation/test.jsonl`` in a dataset folder:
the chat-template rendering of :func:`aw_lookahead.prompts.history_messages`
(system prompt included) counted with a tokenizer, plus the same without the
system prompt, and per-observation tokens. Prints median / p90 / max, so the
data can be sized against the model's context and the training budget.

    .venv/bin/python bench/dataset_tokens.py /work/data/terminal \
        --tokenizer ~/.cache/aw-lookahead/models/smollm2-135m-instruct [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from aw_lookahead.datagen import SPLITS
from aw_lookahead.prompts import history_messages
from aw_lookahead.trajectory import read_trajectories


def _stats(values: list[int]) -> dict[str, float]:
    ordered = sorted(values)
    if not ordered:
        return {"n": 0}
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return {"n": len(ordered), "median": statistics.median(ordered), "p90": p90, "max": ordered[-1]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="dataset folder (train/validation/test.jsonl)")
    parser.add_argument("--tokenizer", required=True, help="HF tokenizer folder or name")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(args.tokenizer)

    def count(text: object) -> int:
        return len(tok(str(text), add_special_tokens=False)["input_ids"])

    rendered: list[int] = []
    without_system: list[int] = []
    observations: list[int] = []
    system = 0
    for split in SPLITS:
        for traj in read_trajectories(args.folder / f"{split}.jsonl"):
            messages = history_messages(traj)
            total = count(tok.apply_chat_template(messages, tokenize=False))
            rendered.append(total)
            if messages and messages[0]["role"] == "system":
                head = tok.apply_chat_template(messages[:1], tokenize=False)
                system = count(head)
            without_system.append(total - system)
            observations.extend(count(t.observation) for t in traj.turns)
    report = {
        "folder": str(args.folder),
        "system_prompt_tokens": system,
        "trajectory_tokens": _stats(rendered),
        "trajectory_tokens_without_system": _stats(without_system),
        "observation_tokens": _stats(observations),
    }
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"{args.folder}: system prompt {system} tokens")
    for key in ("trajectory_tokens", "trajectory_tokens_without_system", "observation_tokens"):
        s = report[key]
        assert isinstance(s, dict)
        print(f"  {key}: n {s['n']}, median {s.get('median')}, p90 {s.get('p90')}, max {s['max']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
