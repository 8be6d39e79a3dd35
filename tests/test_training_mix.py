"""Warm-up of an agent's own model: its tool-call transcripts mixed into world-model samples.

Real tokenizer (the embedded base's), real chat templates: SmolLM2's plain
ChatML drops tools (folded rendering) and a tool-aware template is used as
is (native rendering). No model weights load.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from aw_lookahead.errors import ConfigError, TrajectoryError
from aw_lookahead.training import TrainConfig
from aw_lookahead.training.data import IGNORE_INDEX, prepare_dataset
from aw_lookahead.training.mix import encode_conversation, mix_samples, read_agent_conversations

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "data"
WORLD = EXAMPLES / "terminal_trajectories.jsonl"
AGENT = EXAMPLES / "agent_sft.jsonl"

TOOL_TEMPLATE = (
    "{% if tools %}<|im_start|>system\n# Tools\n{% for t in tools %}{{ t | tojson }}\n"
    "{% endfor %}<|im_end|>\n{% endif %}{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m.get('content') %}{{ m['content'] }}{% endif %}{% if m.get('tool_calls') %}"
    "{% for c in m['tool_calls'] %}<tool_call>{{ c['function'] | tojson }}</tool_call>"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


@pytest.fixture(scope="module")
def tokenizer(embedded_model_path: Path) -> Any:
    transformers = pytest.importorskip("transformers")
    return transformers.AutoTokenizer.from_pretrained(str(embedded_model_path))


def _labelled(tokenizer: Any, enc: Any) -> str:
    return str(tokenizer.decode([t for t in enc.labels if t != IGNORE_INDEX]))


def test_mix_report_shows_both_parts_and_their_label_tokens(tokenizer: Any) -> None:
    world, report = prepare_dataset([WORLD], tokenizer, max_len=1024, targets="one")
    mixed, mix = mix_samples(world, report, [AGENT], tokenizer, mix=0.5, max_len=1024, seed=1)
    assert mix.agent_rendering == "folded"
    assert mix.agent_conversations == 8
    assert mix.agent_tool_calls == 8
    assert mix.agent_samples == len(world) == 12
    assert mix.agent_repeats == 4  # 12 drawn from a pool of 8
    assert len(mixed) == 24
    assert mix.label_tokens == report.label_tokens > 0
    drawn = mixed[len(world) :]
    assert mix.agent_label_tokens == sum(s.n_label_tokens for s in drawn) > 0
    summary = mix.summary()
    assert "world-model part:" in summary
    assert f"label tokens: world {report.label_tokens}, agent {mix.agent_label_tokens}" in summary
    data = mix.as_dict()
    assert data["agent_samples"] == 12
    assert 0 < data["agent_label_share"] < 1
    # mix 0 adds nothing; a share of 1 would leave no world-model data
    same, none = mix_samples(world, report, [AGENT], tokenizer, mix=0.0, max_len=1024)
    assert len(same) == len(world)
    assert none.agent_samples == 0
    with pytest.raises(ConfigError, match="0 <= mix < 1"):
        mix_samples(world, report, [AGENT], tokenizer, mix=1.0, max_len=1024)


def test_folded_rendering_labels_calls_and_answers_only(tokenizer: Any) -> None:
    key, conversation = next(read_agent_conversations([AGENT]))
    enc = encode_conversation(tokenizer, key, conversation, 1024)
    assert enc is not None
    text = tokenizer.decode(enc.input_ids)
    labelled = _labelled(tokenizer, enc)
    assert '"name": "shell"' in text.split("<|im_start|>system")[1]  # tools in the system turn
    assert labelled == (
        '<tool_call>\n{"name": "shell", "arguments": {"command": "wc -l notes.txt"}}\n'
        "</tool_call><|im_end|>notes.txt has 4 lines.<|im_end|>"
    )
    assert "<tool_response>\n4 notes.txt\n</tool_response>" in text  # the result: no loss


def test_native_rendering_when_the_template_knows_tools(tokenizer: Any) -> None:
    native = tokenizer.__class__.from_pretrained(tokenizer.name_or_path)
    native.chat_template = TOOL_TEMPLATE
    key, conversation = next(read_agent_conversations([AGENT]))
    enc = encode_conversation(native, key, conversation, 1024)
    assert enc is not None
    text = native.decode(enc.input_ids)
    assert text.startswith("<|im_start|>system\n# Tools\n")
    assert "<tool_response>" not in text  # the template's own tool turn
    assert _labelled(native, enc) == (
        '<tool_call>{"name": "shell", "arguments": {"command": "wc -l notes.txt"}}</tool_call>'
        "<|im_end|>notes.txt has 4 lines.<|im_end|>"
    )
    world, report = prepare_dataset([WORLD], native, max_len=1024, targets="one")
    _, mix = mix_samples(world, report, [AGENT], native, mix=0.25, max_len=1024)
    assert mix.agent_rendering == "native"
    assert mix.agent_samples == 4


def test_bad_agent_data_names_file_line_and_field(
    tmp_path: Path, embedded_model_path: Path
) -> None:
    bad = tmp_path / "agent.jsonl"
    good = AGENT.read_text().splitlines()[0]
    no_assistant = {"messages": [{"role": "user", "content": "hi"}]}
    bad.write_text(good + "\n" + json.dumps(no_assistant) + "\n")
    with pytest.raises(TrajectoryError, match=r"agent\.jsonl.*2.*no assistant message"):
        list(read_agent_conversations([bad]))
    bad.write_text(json.dumps({"messages": [{"role": "robot", "content": "x"}]}) + "\n")
    with pytest.raises(TrajectoryError, match=r"messages\[0\]\.role"):
        list(read_agent_conversations([bad]))
    with pytest.raises(ConfigError, match="--agent-data"):
        TrainConfig(model=embedded_model_path, data=[WORLD], out=tmp_path, mix=0.3)


def test_cli_report_only_shows_the_mix(embedded_model_path: Path) -> None:
    code = "import sys; from aw_lookahead.cli import main; sys.exit(main(sys.argv[1:]))"
    args = ["train", "--model", str(embedded_model_path), "--data", str(WORLD), "--out", "unused"]
    args += ["--targets", "one", "--max-len", "1024", "--agent-data", str(AGENT), "--mix", "0.3"]
    done = subprocess.run(
        [sys.executable, "-c", code, *args, "--report-only"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "world-model part:" in done.stdout
    assert "agent part (mix 0.30, folded rendering): 8 conversations, 8 tool calls" in done.stdout
    report = json.loads(done.stdout[done.stdout.index("{") :])
    assert report["agent_samples"] == 5  # round(0.3 / 0.7 * 12)
    assert report["agent_label_tokens"] > 0


def test_the_config_builds_the_lora_shape_once(embedded_model_path: Path, tmp_path: Path) -> None:
    """The SFT and GRPO trainers and the serve hint read the adapter shape from one place."""
    pytest.importorskip("peft")
    cfg = TrainConfig(model=embedded_model_path, data=[WORLD], out=tmp_path, lora_r=8)
    lora = cfg.lora_config()
    assert (lora.r, lora.lora_alpha, lora.lora_dropout) == (8, 32, 0.0)
    assert set(lora.target_modules) == set(cfg.lora_targets)
    assert cfg.served_lora_rank == 16
    cfg.lora_r = 32
    assert cfg.served_lora_rank == 32
