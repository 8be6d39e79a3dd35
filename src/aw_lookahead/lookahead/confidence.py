"""``p_failure`` from one greedy prediction: the probability of the token that chose the failure.

Two estimators serve the engine (:mod:`._decide`), both chosen by what the
prediction carries:

* **samples** (``Prediction.samples``, e.g. ``OpenAIWorldModel(samples=4)``):
  the share of the predictions the judges read as a veto outcome.
* **token log-probabilities** (``Prediction.metadata["token_logprobs"]``, e.g.
  ``OpenAIWorldModel(logprobs=True, temperature=0)``): when the prediction
  fails, the probability the model gave the token where the failure was
  decided (this function); when it does not fail, 0.

Without either, ``p_failure`` is 1 for a failing prediction and 0 otherwise.

The decision token is the first token of the line that shows the failure
(the line holding a rule's matched text, else the first line of output after
a terminal's echoed ``$ command`` line). Greedy decoding (temperature 0)
makes it repeatable for the same inputs: on vLLM's CPU build that is the one
way, since seeded sampling can fail that server (see
:class:`~aw_lookahead.worldmodel.OpenAIWorldModel`). ``docs/engine.md`` has
the measurements behind the choice.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from aw_lookahead.worldmodel.base import Prediction

from .types import Verdict

__all__ = ["token_p_failure"]


def _decision_offset(observation: str, verdict: Verdict) -> int:
    """Where in ``observation`` the failure shows: the start of its evidence line."""
    lines = observation.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    first = 1 if len(lines) > 1 and lines[0].startswith("$ ") else 0
    for signal in verdict.signals:
        if signal.matched:
            for i in range(first, len(lines)):
                if signal.matched.strip() and signal.matched.strip()[:60] in lines[i]:
                    return starts[i]
    return starts[first] if first < len(starts) else 0


def token_p_failure(prediction: Prediction, verdict: Verdict, failing: bool) -> float | None:
    """The decision token's probability when ``failing``, 0 when not; ``None`` when the
    prediction has no token log-probabilities that line up with its text."""
    tokens = prediction.metadata.get("token_logprobs")
    if not isinstance(tokens, Sequence) or not tokens:
        return None
    if not failing:
        return 0.0
    texts: list[str] = []
    logprobs: list[float] = []
    for item in tokens:
        if not (isinstance(item, Sequence) and len(item) == 2):
            return None
        text, logprob = item
        if not isinstance(text, str) or not isinstance(logprob, int | float):
            return None
        texts.append(text)
        logprobs.append(float(logprob))
    joined = "".join(texts)
    observation = prediction.observation
    start = joined.rfind(observation) if observation else -1
    if start < 0:
        return None
    position = start + _decision_offset(observation, verdict)
    end = 0
    for text, logprob in zip(texts, logprobs, strict=True):
        end += len(text)
        if end > position and text.strip():
            return math.exp(logprob)
    return None
