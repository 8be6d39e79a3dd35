"""The ``official`` protocol and the reference judge: exact requests, parser, failures.

Request bodies are captured by a real loopback relay in front of the real
vLLM server (tests/relay_support.py); expected messages are written out by
hand from the records, never produced by the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aw_lookahead.cli import main
from aw_lookahead.evaluation.judges.reference import load_reference_judge_prompts, parse_verdict
from aw_lookahead.evaluation.official import clean_marker, extract_observation, remove_thinking
from aw_lookahead.evaluation.records import latest_records
from relay_support import recording_relay

MARK = "**Environment Observation:**"
OWN_TEMPLATE = (
    "{context}\n\n{world_model_input}\n\n{predicted_observation}\n\n{ground_truth}\n\nGRADE"
)


# --------------------------------------------------------------------------- parser


@pytest.mark.parametrize(
    ("gen", "extracted", "judged"),
    [
        # the marker twice: everything kept, only a leading marker is cut
        (f"{MARK}\nfirst\n{MARK}\nsecond", f"{MARK}\nfirst\n{MARK}\nsecond",
         f"first\n{MARK}\nsecond"),
        # text before the marker stays; every marker is deleted
        (f"Sure.\n{MARK}\nout", f"Sure.\n{MARK}\nout", "Sure.\n\nout"),
        # upper-case tags count
        ("<PREDICTED_OBSERVATION>x</PREDICTED_OBSERVATION>", "x", "x"),
        # indented content is stripped
        ("<predicted_observation>\n    indented\n  line\n</predicted_observation>",
         "indented\n  line", "indented\n  line"),
        # the last opening tag wins, closed or not
        ("<predicted_observation>a</predicted_observation> <predicted_observation>b", "b", "b"),
        # an unclosed think stops at the observation tag
        ("<think>plan <predicted_observation>a</predicted_observation>", "a", "a"),
        # a stray close drops what came before it
        ("reasoning</think>\n<predicted_observation>b", "b", "b"),
        ("<THINK>x</THINK>\nplain answer\n", "plain answer", "plain answer"),
        ("", "No output", "No output"),
        ("<think>only thinking", "No output", "No output"),
    ],
)  # fmt: skip
def test_reference_parser_cases(gen: str, extracted: str, judged: str) -> None:
    assert extract_observation(gen) == extracted
    assert clean_marker(extract_observation(gen)) == judged


def test_nested_thinking_is_removed_whole() -> None:
    assert remove_thinking("<think>a<think>b</think>c</think>answer", "") == "answer"
    assert remove_thinking("no tags \n", "") == "no tags \n"


@pytest.mark.parametrize(
    ("raw", "scores", "total"),
    [
        ('<think>{"scores": {"format": 1}}</think>ok <final_evaluation>\n```json\n'
         '{"strengths": ["a"], "weaknesses": [], "scores": {"format": 4, "factuality": 3, '
         '"consistency": 5, "realism": 4, "quality": 4}}\n```\n</final_evaluation>',
         (4, 3, 5, 4, 4), 4.0),
        # trailing comma, unquoted keys, "4/5" strings, floats, a missing dimension
        ('{scores: {"format": "4/5", "factuality": 2.6, "consistency": 9, "realism": 0,},}',
         (4, 3, 5, 0, 0), 4.0),
    ],
)  # fmt: skip
def test_reference_verdict_parser(raw: str, scores: tuple[int, ...], total: float) -> None:
    parsed = parse_verdict(raw)
    assert parsed["success"]
    assert tuple(parsed["scores"].values()) == scores
    assert parsed["total_score"] == total


@pytest.mark.parametrize("raw", ["", "no json here", '{"verdict": 3}'])
def test_reference_verdict_parser_failures(raw: str) -> None:
    parsed = parse_verdict(raw)
    assert not parsed["success"]
    assert parsed["error"]


# --------------------------------------------------------------------------- requests


def _records() -> list[dict[str, Any]]:
    pretty = (
        '### Turn 1\n**Action:**\n```json\n{\n  "name": "write_file",\n  "arguments": '
        '{"path": "caf\\u00e9.txt"}\n}\n```\n'
    )
    current = '### Turn 2\n**Action:**\n```json\n{\n  "name": "read_file"\n}\n```\n\n'
    long_turn = "### Turn 1\n**Action:**\n" + "word " * 6000
    return [
        {"task": "mcp", "id": "pretty", "prompt": [pretty, current],
         "response": [f'{MARK}\n{{"ok": true}}\n\n', f"{MARK}\nsecond\n"],
         "current_prompt": current, "system_str": "You simulate an MCP server.\n",
         "turn_idx": 2, "total_turns": 2},
        {"task": "lwm/terminal", "id": "excerpt",
         "prompt": ["### Turn 6\n**Action:**\nls -la", "### Turn 7\n**Action:**\ncat notes.txt",
                    "### Turn 8\n**Action:**\npwd"],
         "response": [f"{MARK}\ntotal 0\n", f"{MARK}\nhello\n", f"{MARK}\n/home\n"],
         "current_prompt": "", "system_str": "Terminal.", "turn_idx": 3, "total_turns": 3},
        {"task": "terminal", "id": "string-prompt", "prompt": "echo hi",
         "response": "hi\n", "system_str": "", "turn_idx": 1},
        {"task": "terminal", "id": "too-long", "prompt": [long_turn, "### Turn 2\nls"],
         "response": [f"{MARK}\nok\n", f"{MARK}\nfile\n"], "current_prompt": "### Turn 2\nls",
         "system_str": "Terminal.", "turn_idx": 2, "total_turns": 2},
        {"task": "terminal", "id": "empty", "prompt": ["### Turn 1\nINJECT_EMPTY"],
         "response": [f"{MARK}\nx\n"], "system_str": "Terminal.", "turn_idx": 1},
        {"task": "terminal", "id": "unclosed", "prompt": ["### Turn 1\nINJECT_THINK"],
         "response": [f"{MARK}\ny\n"], "system_str": "Terminal.", "turn_idx": 1},
    ]  # fmt: skip


def _expected_messages() -> dict[str, list[dict[str, str]]]:
    pretty = (
        '### Turn 1\n**Action:**\n```json\n{\n  "name": "write_file",\n  "arguments": '
        '{"path": "caf\\u00e9.txt"}\n}\n```\n'
    )
    return {
        "pretty": [
            {"role": "system", "content": "You simulate an MCP server.\n"},
            {"role": "user", "content": pretty},
            {"role": "assistant", "content": f'{MARK}\n{{"ok": true}}\n\n'},
            {"role": "user",
             "content": '### Turn 2\n**Action:**\n```json\n{\n  "name": "read_file"\n}\n```\n\n'},
        ],
        "excerpt": [
            {"role": "system", "content": "Terminal."},
            {"role": "user", "content": "### Turn 6\n**Action:**\nls -la"},
            {"role": "assistant", "content": f"{MARK}\ntotal 0\n"},
            {"role": "user", "content": "### Turn 7\n**Action:**\ncat notes.txt"},
            {"role": "assistant", "content": f"{MARK}\nhello\n"},
            {"role": "user", "content": "### Turn 8\n**Action:**\npwd"},
        ],
        "string-prompt": [{"role": "user", "content": "echo hi"}],
        "empty": [
            {"role": "system", "content": "Terminal."},
            {"role": "user", "content": "### Turn 1\nINJECT_EMPTY"},
        ],
        "unclosed": [
            {"role": "system", "content": "Terminal."},
            {"role": "user", "content": "### Turn 1\nINJECT_THINK"},
        ],
    }  # fmt: skip


def _judge_folder(root: Path) -> Path:
    for domain in ("mcp", "terminal"):
        folder = root / "prompts" / domain
        folder.mkdir(parents=True)
        (folder / "judge_system_prompt.txt").write_text(f"Grade {domain} simulations.\n")
    configs = root / "eval" / "lwm_eval_utils"
    configs.mkdir(parents=True)
    (configs / "task_configs.py").write_text(f"X = 1\nJUDGE_USER_PROMPT = {OWN_TEMPLATE!r}\n")
    return root


def test_official_run_sends_records_verbatim_and_fails_like_the_reference(
    vllm_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "mixed_test.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in _records()), encoding="utf-8"
    )
    (data / "ignored_train.jsonl").write_text("not read: only *_test.jsonl files are\n")
    out = tmp_path / "run"
    with recording_relay(vllm_server.base_url) as relay:
        relay.inject = {"INJECT_EMPTY": "", "INJECT_THINK": "<think>planning and never closing"}
        server = ["--base-url", relay.base_url, "--model", vllm_server.model,
                  "--api-key", vllm_server.api_key]  # fmt: skip
        rc = main(["eval", "run", "--data", str(data), "--out", str(out), "--max-tokens", "8",
                   "--concurrency", "3", "--no-progress", "--json", *server])  # fmt: skip
        summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert summary["protocol"] == "official"
        assert (rc, summary["ok"], summary["failed"]) == (1, 5, 1)  # the over-long one

        bodies = relay.chat_bodies()
        by_last = {json.dumps(b["messages"][-1]["content"]): b for b in bodies}
        for sample_id, messages in _expected_messages().items():
            body = by_last[json.dumps(messages[-1]["content"])]
            assert body == {"model": vllm_server.model, "messages": messages,
                            "max_tokens": 8, "temperature": 0.6}, sample_id  # fmt: skip
        raw = [r for r in relay.raw if b"caf" in r]
        assert raw
        assert all(b"caf\\\\u00e9" in r for r in raw)

        recs = latest_records(out / "predictions.jsonl")
        assert set(recs) == {"pretty", "excerpt", "string-prompt", "too-long", "empty", "unclosed"}
        assert all(r["protocol"] == "official" for r in recs.values())
        long = recs["too-long"]
        assert (long["status"], long["failure"]) == ("error", "context_too_long")
        assert "maximum context length" in long["error"]
        assert "trimmed_turns" not in long
        assert (recs["empty"]["gen"], recs["empty"]["observation"]) == ("", None)
        assert recs["empty"]["failure"] == "empty_reply"
        assert recs["unclosed"]["observation"] == "No output"
        assert recs["pretty"]["gen"]
        assert "rule" in recs["pretty"]

        # the reference judge: its system prompts and template from a folder, its layout
        judge_dir = _judge_folder(tmp_path / "qwen-agentworld")
        relay.bodies.clear()
        relay.paths.clear()
        relay.raw.clear()
        assert main(["eval", "judge", "--out", str(out), "--judge-base-url", relay.base_url,
                     "--judge-model", vllm_server.model, "--judge-prompts", str(judge_dir),
                     "--max-tokens", "8", "--no-progress", "--json"]) == 0  # fmt: skip
        judge_bodies = relay.chat_bodies()

    judged = latest_records(out / "judged.jsonl")
    assert judged["empty"]["judge"]["error"] == "No model generation"
    assert judged["too-long"]["judge"]["error"] == "no prediction to judge"
    for rec in judged.values():
        assert rec["judge"]["kind"] == "reference"
    asked = {r["id"] for r in judged.values() if r["judge"].get("attempts")}
    assert asked == {"pretty", "excerpt", "string-prompt", "unclosed"}
    for body in judge_bodies:
        assert set(body) == {"model", "messages", "max_tokens", "temperature"}
        assert (body["max_tokens"], body["temperature"]) == (8, 0.6)
    failed_all = [r for r in judged.values() if r["judge"].get("attempts") and r["judge"]["failed"]]
    assert all(r["judge"]["attempts"] == 3 for r in failed_all)
    assert len(judge_bodies) == sum(r["judge"]["attempts"] for r in judged.values()
                                    if r["judge"].get("attempts"))  # fmt: skip

    pred = recs["pretty"]
    user = next(b for b in judge_bodies if "read_file" in b["messages"][1]["content"])
    assert user["messages"][0] == {"role": "system", "content": "Grade mcp simulations.\n"}
    content = user["messages"][1]["content"]
    context = ("# Context (Historical Interactions):\n\n" + _records()[0]["prompt"][0] + "\n"
               + f'{MARK}\n{{"ok": true}}\n\n' + "\n\n")  # fmt: skip
    current = (
        '# Current Turn:\n\n### Turn 2\n**Action:**\n```json\n{\n  "name": "read_file"\n}\n```\n\n'
    )
    simulated = f"**World Model Output (Simulated):**\n```\n{pred['observation']}\n```"
    truth = "**Ground Truth (Real Output):**\n```\nsecond\n```"
    assert content == f"{context}\n\n{current}\n\n{simulated}\n\n{truth}\n\nGRADE".strip()
    no_output = next(b for b in judge_bodies if "INJECT_THINK" in b["messages"][1]["content"])
    assert "```\nNo output\n```" in no_output["messages"][1]["content"]
    assert no_output["messages"][1]["content"].startswith("# Current Turn:")  # no context

    capsys.readouterr()
    assert main(["eval", "report", "--out", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["protocol"] == {"official": 6}
    assert report["judge"]["kinds"] == {"reference": 6}
    assert report["gap_note"] is None
    md = (out / "report.md").read_text()
    assert "Official protocol and reference judge" in md
    assert f"model {vllm_server.model}" in md
    assert "on 6 samples" in md


def test_ours_protocol_is_labelled_and_reports_trimming(
    vllm_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "one_test.jsonl"
    data.write_text(json.dumps(_records()[1]) + "\n")
    out = tmp_path / "ours"
    with recording_relay(vllm_server.base_url) as relay:
        assert main(["eval", "run", "--data", str(data), "--out", str(out), "--protocol", "ours",
                     "--max-tokens", "8", "--no-progress", "--json", "--base-url", relay.base_url,
                     "--model", vllm_server.model]) == 0  # fmt: skip
        body = relay.chat_bodies()[-1]
    assert json.loads(capsys.readouterr().out)["protocol"] == "ours"
    assert "top_p" in body  # our sampling, unlike the official body
    rec = next(iter(latest_records(out / "predictions.jsonl").values()))
    assert (rec["protocol"], rec["trimmed_turns"]) == ("ours", 0)


def test_judge_prompts_folder_layouts(tmp_path: Path) -> None:
    root = _judge_folder(tmp_path / "repo")
    loaded = load_reference_judge_prompts(root)
    assert loaded.user_template == OWN_TEMPLATE
    assert loaded.system["terminal"] == "Grade terminal simulations.\n"
    bare = load_reference_judge_prompts(root / "prompts")  # the prompts/ folder itself
    assert bare.user_template == OWN_TEMPLATE
    (root / "eval" / "lwm_eval_utils" / "task_configs.py").unlink()
    own = load_reference_judge_prompts(root)
    assert own.user_template_source == "aw-lookahead wording"
    assert "<final_evaluation>" in own.user_template
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["eval", "judge", "--out", str(tmp_path), "--judge-base-url", "http://x/v1",
                 "--judge-model", "m", "--judge-prompts", str(empty)]) == 2  # fmt: skip


def test_reference_output_budget_that_cannot_fit_stops_at_once(
    vllm_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "one_test.jsonl"
    data.write_text(json.dumps(_records()[2]) + "\n")
    argv = ["eval", "run", "--data", str(data), "--out", str(tmp_path / "o"), "--no-progress",
            "--base-url", vllm_server.base_url, "--model", vllm_server.model]  # fmt: skip
    assert main(argv) == 2  # the default 32,768 tokens exceed the 4,096-token test server
    err = capsys.readouterr().err
    assert "--max-tokens 32768 does not fit" in err
    assert not (tmp_path / "o" / "predictions.jsonl").exists()
