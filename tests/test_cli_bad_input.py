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
        (["eval", "report", "--out", str(tmp_path)], "holds no usable"),
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
