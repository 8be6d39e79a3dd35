"""RL warm-up: the hybrid reward, one turn per trajectory, and real GRPO steps on the CPU base.

The judge is the real embedded vLLM server (``vllm_server``); "judge down" is
a closed local port. Training runs two steps with tiny completions to fit
the 2-core budget.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from aw_lookahead.errors import ConfigError
from aw_lookahead.training import HybridReward
from aw_lookahead.training.grpo_data import grpo_dataset
from aw_lookahead.training.reward import rule_score
from aw_lookahead.trajectory import read_trajectories, write_trajectories

pytestmark = [
    pytest.mark.filterwarnings("ignore:TRL currently supports vLLM:UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore:'pin_memory':UserWarning"),
]

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "data"
TRAJECTORIES = EXAMPLES / "terminal_trajectories.jsonl"
BENCH = EXAMPLES / "agentworldbench_terminal.jsonl"
SHORT_SYSTEM = "You simulate a Linux terminal. Reply with the exact output of each command."
OBS = "$ ls\nnotes.txt\n"


def _short_data(path: Path, n: int) -> Path:
    trajs = [
        t.model_copy(update={"system_prompt": SHORT_SYSTEM})
        for t in read_trajectories(TRAJECTORIES)
    ]
    write_trajectories(path, trajs[:n])
    return path


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


# ----------------------------------------------------------------------------- prompts


def test_one_turn_per_trajectory_no_batch_shares_a_trajectory() -> None:
    trl = pytest.importorskip("trl")
    rows, report = grpo_dataset([TRAJECTORIES, BENCH], seed=3)
    groups = [r["trajectory"] for r in rows]
    # 12 trajectory records + the AgentWorldBench samples grouped by how they start (4).
    assert report.trajectories == 16
    assert len(groups) == len(set(groups)) == 16
    assert report.candidates > len(rows)  # there were more kept turns to choose from
    # TRL's own sampler: every generation batch of 4 prompts x 2 completions.
    sampler = trl.trainer.utils.RepeatSampler(
        rows, mini_repeat_count=2, batch_size=4, repeat_count=1, shuffle=True, seed=0
    )
    order = list(sampler)
    for start in range(0, len(order), 8):
        batch = order[start : start + 8]
        prompts = sorted(set(batch))
        assert len({rows[i]["trajectory"] for i in prompts}) == len(prompts)
    # Asked for more, a trajectory gives more (and then batches may share one).
    more, report3 = grpo_dataset([TRAJECTORIES, BENCH], seed=3, turns_per_trajectory=3)
    assert len(more) > len(rows)
    assert max(sum(1 for r in more if r["trajectory"] == g) for g in groups) == 3
    assert report3.trajectories == 16
    # Each row carries what the reward needs: the real observation and the sample.
    row = rows[0]
    assert row["prompt"][-1]["role"] == "user"
    assert json.loads(row["sample"])["trajectory"]["turns"][-1]["observation"] == row["observation"]


# ----------------------------------------------------------------------------- reward


def test_rule_only_reward_and_weights() -> None:
    with pytest.raises(ConfigError, match="needs a judge"):
        HybridReward(None)
    with pytest.raises(ConfigError, match="not both 0"):
        HybridReward(None, rubric_weight=0, rule_weight=0)
    reward = HybridReward(None, rubric_weight=0.0, rule_weight=1.0)
    logged: dict[str, float] = {}
    right = f"<think>ls lists files</think><predicted_observation>\n{OBS}</predicted_observation>"
    partial = "<predicted_observation>\n$ ls\nother.txt\n</predicted_observation>"
    scores = reward(
        prompts=[[{"role": "user", "content": "### Turn 1\n**Action:**\nls"}]] * 3,
        completions=[[{"role": "assistant", "content": right}], partial, "no idea"],
        observation=[OBS] * 3,
        domain=["terminal"] * 3,
        log_metric=logged.__setitem__,
    )
    assert scores[0] == 1.0
    assert 0.0 < scores[1] < 0.5  # half credit for the matching echo line, below a pass
    assert scores[2] == 0.0
    assert logged["hybrid/rule"] == pytest.approx(sum(scores) / 3)
    assert logged["hybrid/judge_failed"] == 0.0
    assert "hybrid/rubric" not in logged
    assert reward.stats.samples == 3
    assert reward.stats.judged == 0


def test_judge_down_gives_the_rule_score_counted() -> None:
    from aw_lookahead.evaluation import RubricJudge, verify_sample
    from aw_lookahead.prompts import parse_reply
    from aw_lookahead.trajectory import Trajectory, TurnSample

    judge = RubricJudge("any", base_url=_closed_port_url(), api_key="EMPTY", retries=0)
    reward = HybridReward(judge)
    completion = "<predicted_observation>\n$ ls\nother.txt\n</predicted_observation>"
    scores = reward(
        prompts=["ls", "ls"],
        completions=[completion, completion],
        observation=[OBS, OBS],
        domain=["terminal", "terminal"],
    )
    sample = TurnSample(
        trajectory=Trajectory(domain="terminal", turns=[{"action": "ls", "observation": OBS}]),
        turn_idx=1,
    )
    rule = rule_score(verify_sample(sample, parse_reply(completion).observation))
    assert 0.0 < rule < 0.5
    assert scores == [pytest.approx(rule)] * 2
    assert reward.stats.judge_failed == 2
    assert reward.stats.judged == 0
    assert reward.stats.judge_cached == 0  # a shared failed request is not a cache hit
    assert "ServerUnreachableError" in reward.stats.failures[-1]
    assert reward.last["hybrid/judge_failed"] == 2.0


def test_a_judge_that_never_answers_costs_at_most_the_deadline() -> None:
    from aw_lookahead.evaluation import RubricJudge

    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        judge = RubricJudge("any", base_url=url, api_key="EMPTY", timeout=300.0)
        reward = HybridReward(judge, deadline_s=1.0)
        scores = reward(
            prompts=["ls"], completions=["$ ls"], observation=[OBS], domain=["terminal"]
        )
    assert len(scores) == 1
    assert reward.stats.judge_failed == 1
    assert "no verdict within 1.0 s" in reward.stats.failures[-1]


# ----------------------------------------------------------------------------- real steps


@pytest.mark.integration
@pytest.mark.slow
def test_grpo_trainer_two_steps_with_the_real_judge(
    tmp_path: Path, vllm_server: Any, embedded_model_path: Path
) -> None:
    torch = pytest.importorskip("torch")
    trl = pytest.importorskip("trl")
    datasets = pytest.importorskip("datasets")
    transformers = pytest.importorskip("transformers")
    from aw_lookahead.evaluation import RubricJudge

    torch.set_num_threads(1)
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(embedded_model_path))
    tokenizer.padding_side = "left"
    rows, _ = grpo_dataset([_short_data(tmp_path / "d.jsonl", 2)], tokenizer=tokenizer)
    judge = RubricJudge(
        vllm_server.model, base_url=vllm_server.base_url, api_key=vllm_server.api_key
    )
    reward = HybridReward(judge, rubric_weight=0.9, rule_weight=0.1)
    args = trl.GRPOConfig(
        output_dir=str(tmp_path / "out"),
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=8,
        max_steps=2,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        disable_tqdm=True,
        bf16=False,
        seed=0,
    )
    trainer = trl.GRPOTrainer(
        model=str(embedded_model_path),
        reward_funcs=[reward],
        args=args,
        train_dataset=datasets.Dataset.from_list(rows),
        processing_class=tokenizer,
    )
    trainer.train()
    assert trainer.state.global_step == 2
    assert reward.stats.samples == 4  # 2 steps x 1 prompt x 2 completions
    assert reward.stats.judge_failed == 0, reward.stats.failures
    assert reward.stats.judged == 4
    steps = [e for e in trainer.state.log_history if "reward" in e]
    assert len(steps) == 2
    for entry in steps:
        assert 0.0 <= entry["hybrid/rubric"] <= 1.0
        assert 0.0 <= entry["hybrid/rule"] <= 1.0
        expected = 0.9 * entry["hybrid/rubric"] + 0.1 * entry["hybrid/rule"]
        assert entry["reward"] == pytest.approx(expected, abs=1e-5)


def _train_cli(*args: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from aw_lookahead.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, "train", *args],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env=None,
    )


@pytest.mark.integration
@pytest.mark.slow
def test_cli_grpo_judge_down_stop_after_and_resume(
    tmp_path: Path, embedded_model_path: Path
) -> None:
    data = _short_data(tmp_path / "d.jsonl", 2)
    out = tmp_path / "run"
    common = [
        "--method", "grpo", "--model", str(embedded_model_path), "--data", str(data),
        "--out", str(out), "--max-len", "512", "--max-steps", "2", "--num-generations", "2",
        "--max-completion-length", "8", "--lora-r", "8", "--lora-alpha", "16",
        "--save-every", "50", "--no-progress", "--judge-model", "any",
        "--judge-base-url", _closed_port_url(),
    ]  # fmt: skip
    first = _train_cli(*common, "--stop-after", "1")
    assert first.returncode == 0, first.stderr[-3000:]
    assert "judge failed 2" in first.stdout
    assert "continue with --resume" in first.stdout
    assert (out / "checkpoints" / "checkpoint-1").is_dir()
    assert not (out / "adapter").exists()
    again = _train_cli(*common)
    assert again.returncode != 0
    assert "--resume" in again.stderr
    second = _train_cli(*common, "--resume")
    assert second.returncode == 0, second.stderr[-3000:]
    lines = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [x["step"] for x in lines] == [1, 2]
    for x in lines:
        assert x["hybrid/judge_failed"] == 2.0
        assert x["reward"] == pytest.approx(x["hybrid/rule"])  # rule score on failure
    result = json.loads((out / "train_result.json").read_text())
    assert result["method"] == "grpo"
    assert result["finished"] is True
    assert result["resumed_from"] == 1
    assert result["reward"]["judge_failed"] == 2  # this invocation's step
    assert result["generation"]["use_vllm"] is False
    assert result["vllm_args"].startswith("--enable-lora")
    assert (out / "adapter" / "adapter_config.json").is_file()
    assert (out / "loss.png").stat().st_size > 1000
    assert (out / "reward.png").stat().st_size > 1000
