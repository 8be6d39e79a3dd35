"""The LLM judges of a prediction: our rubric and the reference template.

:mod:`.rubric` holds :class:`RubricJudge` (our wording, :mod:`.rubric_prompt`,
anchored on the rule verifier's summary); :mod:`.reference` holds
:class:`ReferenceJudge`, which fills the published judge templates and reads
the reply with :mod:`.verdict`.
"""

from __future__ import annotations

from .reference import ReferenceJudge, load_reference_judge_prompts
from .rubric import DIMENSIONS, JudgeOutcome, JudgeScores, RubricJudge, to_published_scale

__all__ = [
    "DIMENSIONS",
    "JudgeOutcome",
    "JudgeScores",
    "ReferenceJudge",
    "RubricJudge",
    "load_reference_judge_prompts",
    "to_published_scale",
]
