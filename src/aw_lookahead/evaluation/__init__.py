"""Fidelity evaluation: rule verifier, LLM judge, resumable runs, reports, ground-truth recording.

``predict_samples`` (``eval run``; protocol ``official`` with an
:class:`OfficialModel`, ours with any world model) -> ``judge_predictions``
(``eval judge``; :class:`RubricJudge`, our rubric, or :class:`ReferenceJudge`)
-> ``write_report`` (``eval report``); ``export_reference`` (``eval export``)
writes the reference script's layout and ``usable_records`` reads either.
``verify`` / ``verify_sample`` are the rule verifier on its own;
``record_script`` builds AgentWorldBench samples from a real sandbox
(``record terminal``).
"""

from __future__ import annotations

from ._io import finished_ids, latest_records, load_samples
from .interop import export_reference, usable_records
from .judge_run import JudgeStats, judge_predictions
from .masking import mask, normalize_ws
from .official import OfficialModel, official_messages
from .recording import parse_record_script, record_script
from .reference_judge import ReferenceJudge, load_reference_judge_prompts
from .report import PUBLISHED, build_report, render_markdown, write_report
from .rubric_judge import DIMENSIONS, JudgeOutcome, JudgeScores, RubricJudge, to_published_scale
from .runner import RunStats, predict_samples
from .verifier import RuleResult, TierResult, line_f1, masked_exact, verify, verify_sample

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
    "parse_record_script",
    "predict_samples",
    "record_script",
    "render_markdown",
    "to_published_scale",
    "usable_records",
    "verify",
    "verify_sample",
    "write_report",
]
