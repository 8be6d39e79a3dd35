"""Bad input to every reading verb: one clean line on stderr, a non-zero exit, never a traceback.

The fuzz tests feed arbitrary bytes (and JSON-shaped lines built from the
field names our readers look at) to each verb through ``main(argv)``. None
of them may reach a world model: the base URL is a port nothing listens on,
and ``train --report-only`` names a model folder that holds no tokenizer.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aw_lookahead.cli import main

EXAMPLES = 500
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

_KEYS = ("domain", "turns", "action", "observation", "task", "prompt", "response", "turn_idx",
         "id", "status", "judge", "rule", "total", "failed", "verdict", "line_f1",
         "predicted", "real", "sample")  # fmt: skip
_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
_json = st.recursive(
    _scalars | st.sampled_from(("terminal", "mcp", "ls", "ok")),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(_KEYS) | st.text(max_size=4), inner, max_size=5)
    ),
    max_leaves=12,
)
_json_lines = st.lists(_json.map(lambda v: json.dumps(v).encode()), min_size=1, max_size=4).map(
    b"\n".join
)
ARBITRARY = st.binary(max_size=300)
JSONISH = _json_lines | st.tuples(_json_lines, st.binary(max_size=20)).map(b"".join)


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


def _assert_clean_failure(rc: int, err: str) -> None:
    assert "Traceback" not in err
    assert rc != 0, err
    assert err.endswith("\n"), repr(err)
    assert err.count("\n") == 1, repr(err)
    assert err.startswith("aw-lookahead "), err


@pytest.fixture(scope="module")
def base_url() -> str:
    return _closed_port_url()


Verb = Callable[[bytes], tuple[int, str, str]]
VERBS = ("simulate", "eval-run", "train-report", "eval-report")


@pytest.fixture(params=VERBS)
def verb(request: pytest.FixtureRequest, tmp_path: Path, base_url: str) -> Verb:
    """Each reading verb as a function of the bytes of the file it reads."""
    name = request.param
    data = tmp_path / "data.jsonl"
    no_model = tmp_path / "no-model"
    no_model.mkdir()
    argv = {
        "simulate": ["simulate", "ls", "--trajectory", str(data), "--base-url", base_url],
        "eval-run": ["eval", "run", "--data", str(data), "--out", str(tmp_path / "run"),
                     "--base-url", base_url, "--no-progress"],
        "train-report": ["train", "--report-only", "--model", str(no_model), "--data", str(data),
                         "--out", str(tmp_path / "train")],
        "eval-report": ["eval", "report", "--out", str(tmp_path), "--json"],
    }[name]  # fmt: skip
    target = tmp_path / "predictions.jsonl" if name == "eval-report" else data

    def call(content: bytes) -> tuple[int, str, str]:
        target.write_bytes(content)
        return _run(argv)

    return call


@FUZZ
@given(content=ARBITRARY)
def test_arbitrary_bytes_fail_cleanly(verb: Verb, content: bytes) -> None:
    rc, _, err = verb(content)
    _assert_clean_failure(rc, err)


@FUZZ
@given(content=JSONISH)
def test_json_shaped_lines_never_crash(verb: Verb, content: bytes) -> None:
    rc, out, err = verb(content)
    assert "Traceback" not in err
    if rc == 0:
        # only `eval report` can succeed: some lines held usable records
        report: dict[str, Any] = json.loads(out)
        assert report["rows"]["overall"]["n"] >= 1
        assert err.count("\n") <= 1
    else:
        _assert_clean_failure(rc, err)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"\xff\xfe\x00binary\n", "not UTF-8 text"),
        (b"[" * 100_000 + b"\n", "nested deeper than 100 levels"),
        (b'{"a": [' + b"[" * 150 + b"]" * 150 + b"]}\n", "nested deeper than 100 levels"),
        (b'{"a": ' + b"7" * 4301 + b"}\n", "unusable JSON number"),
        (b'{"a": "\\ud800"}\n', "lone UTF-16 surrogate"),
    ],
)
def test_each_reader_names_file_and_line(verb: Verb, content: bytes, expected: str) -> None:
    rc, _, err = verb(b"\n" + content)
    _assert_clean_failure(rc, err)
    if err.startswith("aw-lookahead eval: error:") and "holds no usable" in err:
        assert "(1 unusable lines skipped)" in err  # eval report skips, then has nothing
    else:
        assert expected in err, err
        assert ".jsonl:2:" in err, err


def test_eval_report_counts_skipped_lines(tmp_path: Path) -> None:
    good = {"id": "a", "domain": "terminal", "status": "ok", "observation": "x"}
    (tmp_path / "predictions.jsonl").write_bytes(
        json.dumps(good).encode() + b"\n\xff\xfe\n{not json\n"
        + json.dumps({"id": "b", "judge": "not a verdict"}).encode() + b"\n"
    )  # fmt: skip
    rc, out, err = _run(["eval", "report", "--out", str(tmp_path), "--json"])
    assert rc == 0
    assert json.loads(out)["skipped_lines"] == 3
    assert "skipped 3 unusable lines" in err
    assert "3 unusable lines" in (tmp_path / "report.md").read_text()


def test_output_path_problems_are_usage_errors(tmp_path: Path, base_url: str) -> None:
    script = tmp_path / "script.txt"
    script.write_text("# task: list\nls\n")
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    data = tmp_path / "data.jsonl"
    data.write_text(
        json.dumps({"domain": "terminal", "turns": [{"action": "ls", "observation": ""}]}) + "\n"
    )
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"# task: x\n\x00\xff\xfe\n")
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "terminal.md").write_bytes(b"You predict.\n\xc3\x28\n")
    cases = [
        (["record", "terminal", "--script", str(script), "--out", str(tmp_path)], "is a folder"),
        (["record", "terminal", "--script", str(binary), "--out", str(tmp_path / "o.jsonl")],
         "binary.txt:2: the record script is not UTF-8"),
        (["eval", "run", "--data", str(data), "--out", str(a_file), "--base-url", base_url],
         "--out " + str(a_file) + " is a file"),
        (["eval", "report", "--out", str(tmp_path)], "predictions.jsonl is missing"),
        (["simulate", "ls", "--prompts", str(prompts), "--base-url", base_url],
         "terminal.md:2: the prompt file is not UTF-8"),
    ]  # fmt: skip
    for argv, expected in cases:
        rc, _, err = _run(argv)
        _assert_clean_failure(rc, err)
        assert rc == 2, (argv, err)
        assert expected in err, (argv, err)


def test_record_never_replaces_an_existing_file_unasked(tmp_path: Path) -> None:
    script = tmp_path / "script.txt"
    script.write_text("# task: list\nls\n")
    out = tmp_path / "recorded.jsonl"
    out.write_text('{"earlier": "work"}\n')
    rc, _, err = _run(["record", "terminal", "--script", str(script), "--out", str(out)])
    _assert_clean_failure(rc, err)
    assert f"--out: {out} exists; pass --force to replace it or --append to add to it" in err
    assert out.read_text() == '{"earlier": "work"}\n'
    argv = ["record", "terminal", "--script", str(script), "--out", str(out), "--append"]
    assert _run(argv)[0] == 0
    lines = out.read_text().splitlines()
    assert lines[0] == '{"earlier": "work"}'
    assert len(lines) == 2
    assert _run([*argv[:-1], "--force"])[0] == 0
    assert len(out.read_text().splitlines()) == 1


def test_deep_history_argument_is_a_usage_error(base_url: str) -> None:
    rc, _, err = _run(["simulate", "[" * 100_000, "--base-url", base_url])
    _assert_clean_failure(rc, err)
    rc, _, err = _run(["simulate", "ls", "--history", "[" * 100_000, "--base-url", base_url])
    _assert_clean_failure(rc, err)


def test_a_fifo_input_is_a_one_line_error_not_a_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "data.jsonl"
    os.mkfifo(fifo)  # no writer: a plain open() would block forever
    rc, _, err = _run(
        ["train", "--data", str(fifo), "--out", str(tmp_path / "run"), "--model", "x"]
    )
    _assert_clean_failure(rc, err)
    assert f"cannot read the JSONL file {fifo}: it is not a regular file (a pipe or device)" in err
    script = tmp_path / "script.txt"
    os.mkfifo(script)
    rc, _, err = _run(["record", "terminal", "--script", str(script), "--out", str(tmp_path / "o")])
    _assert_clean_failure(rc, err)
    assert "not a regular file" in err


def _long_line(size: int) -> bytes:
    """One valid JSON object of ``size`` bytes and its newline."""
    head = b'{"domain": "terminal", "pad": "'
    return head + b"x" * (size - len(head) - 2) + b'"}\n'


@pytest.mark.parametrize("verb", VERBS, indirect=True)
def test_a_50_mb_line_is_one_line_error_naming_file_line_and_limit(verb: Verb) -> None:
    rc, _, err = verb(b"\n" + _long_line(50_000_000))
    _assert_clean_failure(rc, err)
    assert ".jsonl:2: the line is longer than 8 MiB (8388608 bytes)" in err, err
    assert "AW_LOOKAHEAD_MAX_LINE_MIB" in err


def test_the_line_limit_reads_at_most_the_limit_and_is_overridable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bounded by construction: the reader never asks the file for more than limit + 1 bytes
    of a line (plus one read-ahead buffer), whatever the line's length."""
    from aw_lookahead._jsonl import input_lines, max_line_bytes, open_input
    from aw_lookahead.errors import ConfigError, TrajectoryError

    path = tmp_path / "long.jsonl"
    path.write_bytes(b"{}\n" + _long_line(3 << 20))
    monkeypatch.setenv("AW_LOOKAHEAD_MAX_LINE_MIB", "1")
    with open_input(path) as fh:
        lines = input_lines(fh, path)
        assert next(lines) == b"{}\n"
        with pytest.raises(TrajectoryError, match=r"long.jsonl:2: the line is longer than 1 MiB"):
            next(lines)
        assert fh.tell() <= 3 + (1 << 20) + 1
        assert fh.raw.tell() <= 3 + (1 << 20) + 1 + io.DEFAULT_BUFFER_SIZE  # type: ignore[attr-defined]
    monkeypatch.setenv("AW_LOOKAHEAD_MAX_LINE_MIB", "4")
    with open_input(path) as fh:
        assert len(list(input_lines(fh, path))) == 2
    monkeypatch.setenv("AW_LOOKAHEAD_MAX_LINE_MIB", "lots")
    with pytest.raises(ConfigError, match="AW_LOOKAHEAD_MAX_LINE_MIB='lots' is not a positive"):
        max_line_bytes()


def test_a_utf8_bom_is_skipped_by_every_jsonl_reader(tmp_path: Path) -> None:
    from aw_lookahead.trajectory import iter_jsonl_dicts

    rec = {"id": "a", "domain": "terminal", "status": "ok", "observation": "x"}
    (tmp_path / "predictions.jsonl").write_bytes(b"\xef\xbb\xbf" + json.dumps(rec).encode() + b"\n")
    rc, out, err = _run(["eval", "report", "--out", str(tmp_path), "--json"])
    assert rc == 0, err
    report = json.loads(out)
    assert report["rows"]["overall"]["n"] == 1
    assert report["skipped_lines"] == 0
    assert [obj for _, obj in iter_jsonl_dicts(tmp_path / "predictions.jsonl")] == [rec]


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("protocol", {"x": [1, 2]}, "field 'protocol': Input should be a valid string"),
        ("domain", 7, "field 'domain'"),
        ("judge", "not a verdict", "field 'judge'"),
        ("judge", {"total": "4.5", "failed": False}, "field 'judge.total'"),
        ("judge", {"total": 4.5, "failed": False, "format": 4}, "field 'judge.factuality'"),
        ("rule", {"verdict": 1, "masked_exact": "0.5", "line_f1": 1}, "field 'rule.masked_exact'"),
        ("observation", ["a"], "field 'observation'"),
        ("id", [1], "field 'id': Value error, should be a string or an integer, not list"),
        ("judge", {"failed": "no"}, "field 'judge.failed': Value error, should be true/false"),
    ],
)
def test_eval_report_refuses_a_field_of_the_wrong_type(
    tmp_path: Path, field: str, value: Any, named: str
) -> None:
    good = {"id": "a", "domain": "terminal", "status": "ok", "observation": "x"}
    bad = {**good, "id": "b", field: value}
    lines = [json.dumps(good), json.dumps(bad)]
    (tmp_path / "predictions.jsonl").write_text("\n".join(lines) + "\n")
    rc, _, err = _run(["eval", "report", "--out", str(tmp_path), "--json"])
    _assert_clean_failure(rc, err)
    assert f"predictions.jsonl:2, {named}" in err, err
    assert not (tmp_path / "report.md").exists()


def test_eval_report_calls_a_missing_file_missing(tmp_path: Path) -> None:
    rc, _, err = _run(["eval", "report", "--out", str(tmp_path)])
    _assert_clean_failure(rc, err)
    assert f"{tmp_path / 'predictions.jsonl'} is missing (and so is judged.jsonl)" in err
    rc, _, err = _run(["eval", "report", "--out", str(tmp_path / "nowhere")])
    _assert_clean_failure(rc, err)
    assert f"{tmp_path / 'nowhere'} is missing (no such folder)" in err


def test_eval_run_refuses_a_foreign_out_file_without_append(tmp_path: Path, base_url: str) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text(
        json.dumps({"domain": "terminal", "turns": [{"action": "ls", "observation": "a\n"}]}) + "\n"
    )
    out = tmp_path / "run"
    out.mkdir()
    other = {"id": "elsewhere#1", "domain": "terminal", "turn_idx": 1, "protocol": "ours",
             "sample": {}, "status": "ok", "observation": "x"}  # fmt: skip
    theirs = {"id": "trajectory#1", "prompt": "p", "response": "r", "gen": "hi"}
    argv = ["eval", "run", "--data", str(data), "--out", str(out), "--base-url", base_url,
            "--no-progress"]  # fmt: skip
    for rec, why in [(other, "which --data does not have (other inputs)"),
                     (theirs, "did not write (not ours)")]:  # fmt: skip
        content = json.dumps(rec) + "\n"
        (out / "predictions.jsonl").write_text(content)
        rc, _, err = _run(argv)
        _assert_clean_failure(rc, err)
        assert "predictions.jsonl:1 holds a" in err, err
        assert why in err, err
        assert "--append to add to it anyway" in err
        assert (out / "predictions.jsonl").read_text() == content
        rc, _, err = _run([*argv, "--append"])  # goes on: fails only on the closed port
        _assert_clean_failure(rc, err)
        assert "not ours" not in err, err
        assert "other inputs" not in err, err
    rc, _, err = _run([*argv, "--append", "--no-resume"])
    _assert_clean_failure(rc, err)
    assert "pick one" in err


def test_train_report_with_a_model_folder_without_tokenizer_is_one_line(tmp_path: Path) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text(
        json.dumps({"domain": "terminal", "turns": [{"action": "ls", "observation": "a\n"}]}) + "\n"
    )
    (tmp_path / "no-model").mkdir()
    argv = ["train", "--report-only", "--model", str(tmp_path / "no-model"), "--data", str(data),
            "--out", str(tmp_path / "train")]  # fmt: skip
    rc, _, err = _run(argv)
    _assert_clean_failure(rc, err)
    assert "cannot load its tokenizer" in err


def test_eval_run_with_a_smaller_limit_resumes_its_own_file(tmp_path: Path, base_url: str) -> None:
    turns = [{"action": "ls", "observation": "a\n"}, {"action": "pwd", "observation": "/\n"}]
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"domain": "terminal", "turns": turns}) + "\n")
    out = tmp_path / "run"
    out.mkdir()
    second = {"id": "trajectory#2", "domain": "terminal", "turn_idx": 2, "protocol": "ours",
              "sample": {}, "status": "ok", "observation": "/\n"}  # fmt: skip
    (out / "predictions.jsonl").write_text(json.dumps(second) + "\n")
    argv = ["eval", "run", "--data", str(data), "--out", str(out), "--base-url", base_url,
            "--no-progress", "--protocol", "ours"]  # fmt: skip
    rc, _, err = _run([*argv, "--limit", "1"])  # the id is in --data, past the limit
    _assert_clean_failure(rc, err)
    assert "other inputs" not in err, err
    data.write_text(json.dumps({"domain": "terminal", "turns": turns[:1]}) + "\n")
    rc, _, err = _run(argv)
    _assert_clean_failure(rc, err)
    assert "which --data does not have (other inputs)" in err, err
