"""Fidelity evaluation: rule verifier, LLM judge, resumable runs, reports, ground-truth recording.

``predict_samples`` (``eval run``) -> ``judge_predictions`` (``eval judge``)
-> ``write_report`` (``eval report``); ``verify`` / ``verify_sample`` are the
rule verifier on its own; ``record_script`` builds AgentWorldBench samples
from a real sandbox (``record terminal``).
"""

from __future__ import annotations

from ._io import finished_ids, latest_records, load_samples
from .judge import DIMENSIONS, JudgeOutcome, JudgeScores, LLMJudge, to_published_scale
from .judging import JudgeStats, judge_predictions
from .masking import mask, normalize_ws
from .recording import parse_record_script, record_script
from .report import PUBLISHED, build_report, render_markdown, write_report
from .rules import RuleResult, TierResult, line_f1, masked_exact, verify, verify_sample
from .runner import RunStats, predict_samples

__all__ = [
    "DIMENSIONS",
    "PUBLISHED",
    "JudgeOutcome",
    "JudgeScores",
    "JudgeStats",
    "LLMJudge",
    "RuleResult",
    "RunStats",
    "TierResult",
    "build_report",
    "finished_ids",
    "judge_predictions",
    "latest_records",
    "line_f1",
    "load_samples",
    "mask",
    "masked_exact",
    "normalize_ws",
    "parse_record_script",
    "predict_samples",
    "record_script",
    "render_markdown",
    "to_published_scale",
    "verify",
    "verify_sample",
    "write_report",
]
