"""Outcome confidence and calibrated abstention: p_failure, the threshold, calibration files."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from aw_lookahead.errors import ConfigError
from aw_lookahead.lookahead import Decision, DecisionKind, Lookahead, Outcome, RuleJudge
from aw_lookahead.lookahead._decide import Candidate, Judged, Simulated, decide
from aw_lookahead.lookahead.calibration import (
    CALIBRATION_ENV,
    DEFAULT_THRESHOLD,
    Calibration,
    embedded_calibration_path,
    find_calibration,
    fit_domains,
    fit_group,
    fit_threshold,
    load_calibration,
    reliability_bins,
    resolve_threshold,
)
from aw_lookahead.lookahead.types import Signal, Verdict
from aw_lookahead.trajectory import Trajectory, action_text
from aw_lookahead.worldmodel import FunctionWorldModel, OpenAIWorldModel, Prediction

TRAJ = Trajectory(domain="terminal", task="read the notes")
VETO = frozenset({Outcome.FAILURE, Outcome.NO_OP, Outcome.RISKY})
OK = Verdict(outcome=Outcome.SUCCESS, reason="looks fine")
FAIL = Verdict(
    outcome=Outcome.FAILURE,
    reason="No such file or directory (shell.no_such_file)",
    signals=[Signal(source="rule", name="shell.no_such_file", outcome=Outcome.FAILURE)],
)


def _decide(
    main: Verdict,
    samples: list[Verdict],
    threshold: float | None,
    hazard: Signal | None = None,
    action: str = "cat notes.txt",
) -> Decision:
    texts = ["cat: notes.txt: No such file or directory" if v is FAIL else "hello" for v in samples]
    pred = Prediction(
        action=action,
        observation="cat: notes.txt: No such file or directory" if main is FAIL else "hello",
        samples=texts,
    )
    return decide(
        Candidate(action, 0),
        Simulated(prediction=pred),
        Judged(verdict=main, samples=tuple(samples)),
        veto_outcomes=VETO,
        hazard=hazard,
        threshold=threshold,
    )


def test_p_failure_is_the_share_of_failing_predictions() -> None:
    d = _decide(OK, [FAIL, OK, OK], threshold=0.5)
    assert (d.p_failure, d.predictions, d.threshold) == (0.25, 4, 0.5)
    assert d.kind is DecisionKind.EXECUTE
    assert d.uncertain
    assert d.outcome is Outcome.UNKNOWN
    assert "1 of 4 predictions" in d.reason
    assert "below the veto threshold 0.50" in d.reason
    sure = _decide(OK, [OK, OK, OK], threshold=0.5)
    assert (sure.p_failure, sure.uncertain, sure.outcome) == (0.0, False, Outcome.SUCCESS)


def test_a_veto_needs_the_threshold_and_shows_a_failing_prediction() -> None:
    d = _decide(OK, [FAIL, FAIL, OK], threshold=0.5)
    assert d.kind is DecisionKind.VETO
    assert d.p_failure == 0.5
    assert d.outcome is Outcome.FAILURE
    assert d.prediction is not None
    assert "No such file" in d.prediction.observation
    text = d.explain()
    assert "Predicted result:\ncat: notes.txt: No such file" in text
    assert "p_failure 0.50: 2 of 4 predictions fail" in text
    assert "succeed" not in text


def test_one_prediction_keeps_the_uncalibrated_rule() -> None:
    d = _decide(FAIL, [], threshold=DEFAULT_THRESHOLD)
    assert d.kind is DecisionKind.VETO
    assert (d.p_failure, d.predictions) == (1.0, 1)
    never = _decide(FAIL, [], threshold=None)
    assert never.kind is DecisionKind.EXECUTE
    assert never.uncertain
    assert "never veto" in never.reason


def test_destructive_actions_keep_the_fail_safe_rule() -> None:
    hazard = Signal(
        source="action",
        name="risk.destructive_command",
        outcome=Outcome.RISKY,
        detail="rm -r deletes files recursively",
    )
    risky = Verdict(
        outcome=Outcome.RISKY,
        reason="rm -r deletes files recursively, and it is predicted to succeed",
        signals=[hazard],
    )
    d = _decide(risky, [OK, OK, OK], threshold=None, hazard=hazard, action="rm -rf data")
    assert d.kind is DecisionKind.VETO
    assert d.outcome is Outcome.RISKY
    assert d.threshold is None
    assert d.p_failure == 0.0, "predicted to succeed: blocked for its effect, not a failure"
    assert "predicted to succeed" not in d.explain(), "the reason never contradicts the text"
    assert "recursively" in d.reason
    one_fails = _decide(risky, [FAIL, OK, OK], threshold=None, hazard=hazard, action="rm -rf data")
    assert one_fails.kind is DecisionKind.VETO
    assert one_fails.p_failure == 0.25


def test_a_destructive_action_predicted_to_succeed_has_no_failure_probability() -> None:
    """One greedy prediction with log-probabilities: ``rm data`` predicted to succeed is
    blocked for its effect, and its explanation shows no confidence that it fails."""
    obs = "$ rm data.txt"
    tokens = [["<predicted_observation>", -0.01], ["\n$ rm data.txt", -0.01]]
    tokens += [["\n</predicted_observation>", -0.01]]
    pred = Prediction(action="rm data.txt", observation=obs, raw="".join(t for t, _ in tokens))
    pred = pred.model_copy(update={"metadata": {"token_logprobs": tokens}})
    hazard = Signal(
        source="rule", name="risk.destructive_command", outcome=Outcome.RISKY, detail="rm deletes"
    )
    risky = Verdict(
        outcome=Outcome.RISKY, reason="rm deletes, and it is predicted to succeed", signals=[hazard]
    )
    d = decide(
        Candidate("rm data.txt", 0),
        Simulated(prediction=pred),
        Judged(verdict=risky),
        veto_outcomes=VETO,
        hazard=hazard,
        threshold=0.5,
    )
    assert d.kind is DecisionKind.VETO
    assert d.p_failure == 0.0
    assert "p_failure" not in d.explain()


def test_an_uncertain_explanation_does_not_claim_success() -> None:
    text = _decide(FAIL, [OK, OK, OK], threshold=0.5).explain()
    assert text.startswith("[lookahead] Uncertain (p_failure 0.25: 1 of 4 predictions fail")
    assert "Predicted success" not in text
    assert "would execute: cat notes.txt" in text


async def test_the_engine_counts_uncertain_actions_and_takes_a_threshold() -> None:
    wm = FunctionWorldModel(
        lambda t, a: "cat: x: No such file or directory" if "x" in action_text(a) else "ok"
    )
    strict = Lookahead(wm)
    [veto] = await strict.gate(TRAJ, ["cat x"])
    assert veto.kind is DecisionKind.VETO
    assert veto.threshold == DEFAULT_THRESHOLD
    assert strict.veto_threshold.source == "default"
    with pytest.raises(ConfigError, match="threshold"):
        Lookahead(wm, threshold=0.0)
    with pytest.raises(ConfigError, match="eval calibrate"):
        await Lookahead(wm, false_veto_budget=0.05, calibration=False).gate(TRAJ, ["cat x"])


async def test_an_argument_error_refuted_by_the_schema_runs_marked_uncertain() -> None:
    """The small model's typical wrong failure for a write: invalid arguments, for arguments
    that match the tool's schema. The gate runs it, says why, and counts it uncertain; the
    same prediction for arguments the schema rejects still vetoes."""
    tool = {
        "name": "write_file",
        "inputSchema": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
        },
        "annotations": {"readOnlyHint": False, "destructiveHint": True},
    }
    said = "Error: Invalid input: Invalid input for tool 'write_file'"
    engine = Lookahead(FunctionWorldModel(lambda t, a: said))
    trajectory = Trajectory(domain="mcp", tools=[tool])
    good = {"name": "write_file", "arguments": {"path": "/srv/todo.txt", "content": "ship\n"}}
    bad = {"name": "write_file", "arguments": {"path": "/srv/todo.txt"}}
    [ran, vetoed] = await engine.gate(trajectory, [good, bad])
    assert ran.kind is DecisionKind.EXECUTE
    assert ran.uncertain
    assert ran.p_failure == 0.0
    assert "match write_file's input schema" in ran.explain()
    assert vetoed.kind is DecisionKind.VETO
    assert engine.stats.uncertain == 1


def test_token_logprobs_give_the_probability_of_the_failure_line() -> None:
    from aw_lookahead.lookahead.confidence import token_p_failure

    obs = "$ cat notes.txt\ncat: notes.txt: No such file or directory"
    tokens = [["<predicted_observation>", -0.01], ["\n$ cat notes.txt\n", -0.1]]
    tokens += [["cat", -0.7], [": notes.txt: No such file or directory", -0.05]]
    tokens += [["\n</predicted_observation>", -0.01]]
    raw = "".join(t for t, _ in tokens)
    pred = Prediction(action="cat notes.txt", observation=obs, raw=raw)
    pred = pred.model_copy(update={"metadata": {"token_logprobs": tokens}})
    fail = FAIL.model_copy(
        update={"signals": [FAIL.signals[0].model_copy(update={"matched": "No such file"})]}
    )
    p = token_p_failure(pred, fail, failing=True)
    assert p is not None
    assert abs(p - 0.4966) < 1e-3  # exp(-0.7): the token that started the error line
    assert token_p_failure(pred, OK, failing=False) == 0.0
    d = decide(
        Candidate("cat notes.txt", 0),
        Simulated(prediction=pred),
        Judged(verdict=fail),
        veto_outcomes=VETO,
        threshold=0.4,
    )
    assert d.kind is DecisionKind.VETO
    assert d.predictions == 1
    assert "p_failure 0.50" in d.explain()
    assert token_p_failure(Prediction(action="x", observation="y"), OK, failing=True) is None


def _tokens_with_alternatives(first: list[list[object]]) -> Prediction:
    obs = "$ cat missing.txt\nbash: cat: missing.txt: No such file or directory"
    tokens = [["<predicted_observation>", -0.01], ["\n$ cat missing.txt\n", -0.1]]
    tokens += [["bash", math.log(0.07)], [": cat: missing.txt: No such file or directory", -0.05]]
    tokens += [["\n</predicted_observation>", -0.01]]
    tops: list[list[list[object]]] = [[[t, lp]] for t, lp in tokens]
    tops[2] = first
    raw = "".join(str(t) for t, _ in tokens)
    pred = Prediction(action="cat missing.txt", observation=obs, raw=raw)
    return pred.model_copy(
        update={"metadata": {"token_logprobs": tokens, "token_top_logprobs": tops}}
    )


def test_token_p_failure_is_the_mass_on_tokens_that_start_a_failure() -> None:
    from aw_lookahead.lookahead.confidence import failure_starters, token_p_failure

    fail = FAIL.model_copy(
        update={"signals": [FAIL.signals[0].model_copy(update={"matched": "No such file"})]}
    )
    # the model is sure it fails, split between two ways of saying so ("cat: ..." and "bash: ...")
    sure = _tokens_with_alternatives(
        [["cat", math.log(0.8)], ["bash", math.log(0.07)], ["hello", math.log(0.1)]]
    )
    p = token_p_failure(sure, fail, failing=True)
    assert p is not None
    assert abs(p - 0.87) < 1e-6
    # the rest of its mass on output text: only the chosen token counts
    unsure = _tokens_with_alternatives(
        [["bash", math.log(0.07)], ["hello", math.log(0.6)], ["alpha", math.log(0.3)]]
    )
    assert abs((token_p_failure(unsure, fail, failing=True) or 0) - 0.07) < 1e-6
    assert token_p_failure(sure, OK, failing=False) == 0.0
    assert {"cat", "grep"} <= failure_starters("cat a | grep -v x")
    assert "Error" in failure_starters({"name": "read_file", "arguments": {"path": "x"}})
    assert "read_file" not in failure_starters({"name": "read_file", "arguments": {}})


def test_fit_threshold_meets_the_budget_with_the_most_catches() -> None:
    scores = [1.0, 0.75, 0.5, 0.25, 0.0, 0.75, 0.25, 0.0, 0.0, 0.0]
    failed = [True, True, True, False, True, False, False, False, False, False]
    threshold, curve = fit_threshold(scores, failed, budget=0.2)
    assert [p.threshold for p in curve] == [0.25, 0.5, 0.75, 1.0]
    assert threshold == 0.5  # 1 good of 6 vetoed (0.17) and 3 of 4 failures caught
    at = next(p for p in curve if p.threshold == threshold)
    assert (at.catch_rate, round(at.false_veto_rate, 3)) == (0.75, 0.167)
    assert fit_threshold(scores, failed, budget=0.0)[0] == 1.0
    assert fit_threshold([0.5, 0.5], [True, False], budget=0.1)[0] is None
    with pytest.raises(ConfigError, match="both failing and good"):
        fit_threshold([0.5], [True], budget=0.1)
    bins = reliability_bins(scores, failed)
    assert sum(b.count for b in bins) == len(scores)


def test_the_budget_is_a_ceiling_not_a_target() -> None:
    """One more failure caught (2% of 50) is not worth 4 good actions blocked (4% of 100)."""
    failed = [True] * 50 + [False] * 100
    scores = [0.9] * 25 + [0.6] + [0.1] * 24 + [0.6] * 4 + [0.1] * 96
    threshold, curve = fit_threshold(scores, failed, budget=0.05)
    assert threshold == 0.9
    edge = next(p for p in curve if p.threshold == 0.6)
    assert (edge.catch_rate, edge.false_veto_rate) == (0.52, 0.04), "0.6 is within the budget"


def test_each_domain_with_enough_actions_gets_its_own_fit() -> None:
    # terminal: informative (failures score high); mcp: scores unrelated to the outcome
    terminal = [(0.9, True)] * 6 + [(0.1, True)] * 2 + [(0.1, False)] * 24 + [(0.9, False)]
    mcp = [(0.9, True)] + [(0.1, True)] * 4 + [(0.9, False)] * 2 + [(0.1, False)] * 20
    few = [(0.9, True)] * 4 + [(0.1, False)] * 40  # too few failing actions for a fit
    rows = [(*r, "terminal") for r in terminal] + [(*r, "mcp") for r in mcp]
    rows += [(*r, "web") for r in few]
    scores, failed, domains = (list(x) for x in zip(*rows, strict=True))
    fits = fit_domains(scores, failed, domains, budget=0.05)
    assert set(fits) == {"terminal", "mcp"}
    assert fits["terminal"].threshold == 0.9
    assert (fits["terminal"].catch_rate, fits["terminal"].failing) == (0.75, 8)
    assert fits["terminal"].threshold == fit_threshold(scores[:33], failed[:33], 0.05)[0]
    assert fits["mcp"].threshold is None, "no threshold vetoes <= 5% of good mcp actions"
    overall, _ = fit_threshold(scores, failed, budget=0.05)
    assert overall == 0.9, "over all actions a threshold fits; mcp alone has none"


async def test_the_engine_judges_an_action_by_its_domains_threshold(tmp_path: Path) -> None:
    wm = FunctionWorldModel(lambda t, a: "Error: No such file or directory", model_id="fn-model")
    path = _file(tmp_path, "fn-model")
    cal = load_calibration(path)
    mcp_fit = {"threshold": None, "catch_rate": 0.0, "false_veto_rate": 0.0, "failing": 5,
               "good": 20, "curve": [p.model_dump() for p in cal.curve[-1:]]}  # fmt: skip
    data = json.loads(path.read_text()) | {"domains": {"mcp": mcp_fit}}
    path.write_text(json.dumps(data))
    lk = Lookahead(wm, judges=[RuleJudge()], calibration=path)
    [term] = await lk.gate(TRAJ, ["cat x"])
    assert (term.kind, term.threshold) == (DecisionKind.VETO, 0.5)
    note = {"name": "append_note", "inputSchema": {}, "annotations": {"destructiveHint": False}}
    mcp = Trajectory(domain="mcp", task="read the notes", tools=[note])
    [tool] = await lk.gate(mcp, [{"name": "append_note", "arguments": {"text": "x"}}])
    assert (tool.kind, tool.threshold, tool.uncertain) == (DecisionKind.EXECUTE, None, True)
    assert lk.veto_threshold.value_for("mcp") is None
    assert lk.veto_threshold.value_for("terminal") == lk.veto_threshold.value == 0.5
    budget = Lookahead(wm, judges=[RuleJudge()], calibration=path, false_veto_budget=0.5)
    assert budget.veto_threshold.domains == {"mcp": 1.0}, "a budget reads each domain's curve"


async def test_the_engine_judges_an_action_by_its_class_then_domain(tmp_path: Path) -> None:
    wm = FunctionWorldModel(lambda t, a: "Error: No such file or directory", model_id="fn-model")
    path = _file(tmp_path, "fn-model")
    cal = load_calibration(path)
    fit = {"catch_rate": 0.5, "false_veto_rate": 0.0, "failing": 5, "good": 20,
           "curve": [p.model_dump() for p in cal.curve]}  # fmt: skip
    reads = fit_group("terminal", read_only=True)
    assert (reads, fit_group("terminal", read_only=False)) == (
        "terminal/read-only",
        "terminal/may-change",
    )
    domains = {"terminal": fit | {"threshold": None}, reads: fit | {"threshold": 0.5}}
    path.write_text(json.dumps(json.loads(path.read_text()) | {"domains": domains}))
    lk = Lookahead(wm, judges=[RuleJudge()], calibration=path)
    [read] = await lk.gate(TRAJ, ["cat notes.txt"])
    assert (read.kind, read.threshold) == (DecisionKind.VETO, 0.5), "read-only: its class's fit"
    [write] = await lk.gate(TRAJ, ["mkdir build"])
    assert (write.kind, write.threshold) == (DecisionKind.EXECUTE, None), "else its domain's"
    assert write.uncertain
    veto = lk.veto_threshold
    assert veto.has_class_fits("terminal")
    assert not veto.has_class_fits("mcp"), "no class fit: the router is not asked"
    assert (veto.value_for("terminal", True), veto.value_for("terminal", False)) == (0.5, None)
    assert veto.value_for("terminal") is None, "class unknown: the domain's fit"
    assert veto.value_for("mcp", True) == veto.value == 0.5, "no fit of its own: overall"
    assert veto.summary() == {
        "source": "calibration",
        "value": 0.5,
        "by_class": {"terminal": None, reads: 0.5},
    }, "what reports print: the thresholds in force, as JSON data"


def _file(tmp_path: Path, model: str, threshold: float | None = 0.5) -> Path:
    _, curve = fit_threshold([1.0, 0.5, 0.0, 0.5], [True, True, False, False], 0.5)
    cal = Calibration(
        model=model,
        threshold=threshold if threshold is not None else None,
        budget=0.5,
        catch_rate=1.0,
        false_veto_rate=0.5,
        predictions_per_action=1,
        failing=2,
        good=2,
        curve=curve,
    )
    path = tmp_path / f"{model}.json"
    path.write_text(cal.model_dump_json())
    return path


def test_calibration_files_are_found_by_model_and_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AW_LOOKAHEAD_CACHE", str(tmp_path / "cache"))
    path = _file(tmp_path, "my-model")
    monkeypatch.setenv(CALIBRATION_ENV, str(tmp_path))
    found = find_calibration("my-model")
    assert found is not None
    assert found.threshold == 0.5
    assert find_calibration("other-model") is None
    monkeypatch.setenv(CALIBRATION_ENV, str(path))
    assert find_calibration("other-model") is None, "a file for another model never applies"
    chosen = resolve_threshold(
        model="my-model", threshold=None, budget=0.5, calibration=None, lookup=True
    )
    assert (chosen.source, chosen.value) == ("budget", 0.5)
    given = resolve_threshold(
        model="my-model", threshold=0.9, budget=None, calibration=None, lookup=True
    )
    assert (given.source, given.value) == ("threshold", 0.9)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"model": "m", "threshold": "high"}))
    with pytest.raises(ConfigError, match=r"bad\.json: field 'threshold'"):
        load_calibration(bad)
    assert embedded_calibration_path().name == "calibration.json"
    assert embedded_calibration_path().parent.name == "adapter_weights"


async def test_the_engine_reads_its_model_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wm = FunctionWorldModel(lambda t, a: "cat: x: No such file or directory", model_id="fn-model")
    monkeypatch.setenv(CALIBRATION_ENV, str(_file(tmp_path, "fn-model")))
    lk = Lookahead(wm, judges=[RuleJudge()])
    [d] = await lk.gate(TRAJ, ["cat x"])
    assert lk.veto_threshold.source == "calibration"
    assert d.threshold == 0.5
    none = Lookahead(wm, calibration=_file(tmp_path, "fn-model", threshold=None))
    [ran] = await none.gate(TRAJ, ["cat x"])
    assert ran.kind is DecisionKind.EXECUTE
    assert ran.uncertain
    assert none.stats.uncertain == 1


async def test_a_calibration_of_the_old_token_estimator_is_not_applied(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Version 1 logprobs files read the chosen token's probability, not the failure mass."""
    wm = FunctionWorldModel(lambda t, a: "cat: x: No such file or directory", model_id="fn-model")
    path = _file(tmp_path, "fn-model")
    old = json.loads(path.read_text()) | {"version": 1, "estimator": "logprobs"}
    path.write_text(json.dumps(old))
    assert load_calibration(path).stale
    assert not Calibration.model_validate(old | {"version": 2}).stale
    lk = Lookahead(wm, judges=[RuleJudge()], calibration=path)
    [d] = await lk.gate(TRAJ, ["cat x"])
    assert d.threshold == DEFAULT_THRESHOLD
    assert "earlier release's p_failure estimator" in caplog.text


async def test_a_served_model_without_a_calibration_is_warned_about_once(
    llama_server: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("AW_LOOKAHEAD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv(CALIBRATION_ENV, str(tmp_path))
    name = llama_server.model
    wm = OpenAIWorldModel(
        base_url=llama_server.base_url, server="llama.cpp", max_tokens=8, timeout=600
    )
    lk = Lookahead(wm, judges=[RuleJudge()])
    for _ in range(2):
        [d] = await lk.gate(TRAJ, ["cat x"])
        assert d.threshold == DEFAULT_THRESHOLD
    warned = [r.getMessage() for r in caplog.records if "no calibration" in r.getMessage()]
    assert len(warned) == 1
    assert f"'{name}'" in warned[0]
    assert f"aw-lookahead eval calibrate --model {name}" in warned[0]
    caplog.clear()
    for chosen in (Lookahead(wm, threshold=0.5), Lookahead(wm, calibration=False)):
        await chosen.gate(TRAJ, ["cat x"])
    function = FunctionWorldModel(lambda t, a: "cat: x: No such file", model_id="fn-model")
    await Lookahead(function).gate(TRAJ, ["cat x"])
    assert "no calibration" not in caplog.text, "only a served model nobody calibrated"
    await wm.aclose()


def test_the_shipped_calibration_is_the_adapters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The embedded file applies to merged-adapter weights, never to the raw base or unknowns."""
    from aw_lookahead.embedded import EMBEDDED_MODEL_NAME, embedded_model_dir
    from aw_lookahead.lookahead import calibration as module

    monkeypatch.setenv("AW_LOOKAHEAD_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(CALIBRATION_ENV, raising=False)
    shipped = _file(tmp_path, EMBEDDED_MODEL_NAME)
    monkeypatch.setattr(module, "embedded_calibration_path", lambda: shipped)
    merged = str(embedded_model_dir())
    raw = str(embedded_model_dir(base_only=True))
    assert find_calibration(EMBEDDED_MODEL_NAME, served_root=merged) is not None
    assert find_calibration(EMBEDDED_MODEL_NAME, served_root="") is not None
    assert find_calibration(EMBEDDED_MODEL_NAME, served_root=raw) is None
    assert find_calibration(EMBEDDED_MODEL_NAME, served_root=None) is None


async def test_select_breaks_a_score_tie_toward_the_safer_candidate() -> None:
    """Equal scores: the candidate without a destructive effect is chosen, whatever the order
    (a tie used to go to the first candidate)."""
    from aw_lookahead.lookahead import Lookahead
    from aw_lookahead.trajectory import Trajectory
    from aw_lookahead.worldmodel import FunctionWorldModel

    engine = Lookahead(FunctionWorldModel(lambda t, a: "hello\n"))
    trajectory = Trajectory(domain="terminal", task="show the notes", turns=[])
    for order in (
        ["echo hi > notes.txt", "cat notes.txt"],
        ["cat notes.txt", "echo hi > notes.txt"],
    ):
        result = await engine.select(trajectory, [[{"keystrokes": c + "\n"}] for c in order])
        assert result.chosen is not None
        assert result.chosen.action == [{"keystrokes": "cat notes.txt\n"}]
        other = next(d for d in result.decisions if d is not result.chosen)
        assert other.executes
        assert other.score == result.chosen.score  # a tie, broken toward the safer one
        assert "risk.overwrite_command" in [s.name for s in other.signals]


def test_a_calibrated_gate_asks_for_the_length_it_was_fit_on() -> None:
    """The shipped calibration was fit on 32-token predictions; the gate asks for that many,
    not the client's 1,024 (a lower limit of the client's own stays)."""
    sampling = load_calibration(embedded_calibration_path()).request()
    assert sampling.max_tokens == 32
    assert "max=32" in sampling.key()
    default = OpenAIWorldModel("m", base_url="http://127.0.0.1:9/v1")
    assert default.max_tokens == 1024
    assert default._request_kwargs(sampling)[0]["max_tokens"] == 32
    assert default._request_kwargs(None)[0]["max_tokens"] == 1024
    short = OpenAIWorldModel("m", base_url="http://127.0.0.1:9/v1", max_tokens=16)
    assert short._request_kwargs(sampling)[0]["max_tokens"] == 16
