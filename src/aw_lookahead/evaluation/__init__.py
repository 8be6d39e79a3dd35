"""Fidelity evaluation: rule verifier, LLM judges, resumable runs, reports.

The face holds what a user calls: the rule verifier (:func:`verify`,
:func:`verify_sample`, :class:`RuleResult`, :func:`line_f1`,
:func:`masked_exact`) and the LLM judges (:class:`RubricJudge`, our rubric, and
:class:`ReferenceJudge`). The runs are the CLI's (``eval run`` ->
``eval judge`` -> ``eval report``; ``eval export``) and live in their modules:
``runner.predict_samples`` (protocol ``official`` with an
``official.OfficialModel``, ours with any world model),
``judge_run.judge_predictions``, ``report.write_report``, and
``interop.export_reference`` / ``interop.usable_records``.

Rooms: ``rules/`` (the rule verifier and its domain rules), ``judges/`` (the
LLM judges), ``official`` (the reference protocol's prompts and replies),
``runner`` / ``judge_run`` (the resumable runs), ``records`` (their files),
``interop`` and ``report``. Recording ground truth from a sandbox lives in
:mod:`aw_lookahead.datagen.recording`.
"""

from __future__ import annotations

from .judges.reference import ReferenceJudge
from .judges.rubric import RubricJudge
from .rules.verifier import RuleResult, line_f1, masked_exact, verify, verify_sample

__all__ = [
    "ReferenceJudge",
    "RubricJudge",
    "RuleResult",
    "line_f1",
    "masked_exact",
    "verify",
    "verify_sample",
]
