"""Fidelity evaluation: rule verifier, LLM judges, resumable runs, reports.

``predict_samples`` (``eval run``; protocol ``official`` with an
:class:`OfficialModel`, ours with any world model) -> ``judge_predictions``
(``eval judge``; :class:`RubricJudge`, our rubric, or :class:`ReferenceJudge`)
-> ``write_report`` (``eval report``); ``export_reference`` (``eval export``)
writes the reference script's layout and ``usable_records`` reads either.
``verify`` / ``verify_sample`` are the rule verifier on its own.

Rooms: ``rules/`` (the rule verifier and its domain rules), ``judges/`` (the
LLM judges), ``official`` (the reference protocol's prompts and replies),
``runner`` / ``judge_run`` (the resumable runs), ``records`` (their files),
``interop`` and ``report``. Recording ground truth from a sandbox lives in
:mod:`aw_lookahead.datagen.recording`.
"""

from __future__ import annotations

from .interop import export_reference, usable_records
from .judge_run import JudgeStats, judge_predictions
from .judges.reference import ReferenceJudge, load_reference_judge_prompts
from .judges.rubric import DIMENSIONS, JudgeOutcome, JudgeScores, RubricJudge, to_published_scale
from .official import OfficialModel, official_messages
from .records import finished_ids, latest_records, load_samples
from .report import PUBLISHED, build_report, render_markdown, write_report
from .rules.masking import mask, normalize_ws
from .rules.verifier import RuleResult, TierResult, line_f1, masked_exact, verify, verify_sample
from .runner import RunStats, predict_samples

__all__ = [
    "DIMENSIONS",
    "PUBLISHED",
    "JudgeOutcome",
    "JudgeScores",
    "JudgeStats",
    "OfficialModel",
    "ReferenceJudge",
    "RubricJudge",
    "RuleResult",
    "RunStats",
    "TierResult",
    "build_report",
    "export_reference",
    "finished_ids",
    "judge_predictions",
    "latest_records",
    "line_f1",
    "load_reference_judge_prompts",
    "load_samples",
    "mask",
    "masked_exact",
    "normalize_ws",
    "official_messages",
    "predict_samples",
    "render_markdown",
    "to_published_scale",
    "usable_records",
    "verify",
    "verify_sample",
    "write_report",
]
