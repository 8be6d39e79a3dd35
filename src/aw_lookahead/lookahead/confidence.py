"""``p_failure`` from one greedy prediction: the probability mass on failure where it is decided.

Two estimators serve the engine (:mod:`._decide`), both chosen by what the
prediction carries:

* **samples** (``Prediction.samples``, e.g. ``OpenAIWorldModel(samples=4)``):
  the share of the predictions the judges read as a veto outcome.
* **token log-probabilities** (``Prediction.metadata["token_logprobs"]`` and
  ``["token_top_logprobs"]``, e.g. ``OpenAIWorldModel(logprobs=True,
  temperature=0)``): when the prediction fails, the probability mass the
  model put on tokens that *start* a failure at the position where the
  output begins (this function); when it does not fail, 0.

Why mass and not the chosen token's probability: a model that is sure
``cat missing.txt`` fails still splits its mass between ways of saying so
(``cat: missing.txt: No such file`` or ``bash: cat: ...``); the chosen
token alone then read 0.07 for a failure the model gave ~0.9. A token
starts a failure when it is the name of a program the action runs (the
shell's ``prog: message`` form), a shell's name, or an error word
(``Error``, ``fatal``, ``Traceback``, ``usage``); where the failure shows
on a later line, or starts with a token of another kind, the probability of
the token where that line begins counts (the mass is never below it).

The decision position is the first token of the output: after a terminal's
echoed ``$ command`` line, else the observation's start. Greedy decoding
(temperature 0) makes it repeatable for the same inputs: on vLLM's CPU
build that is the one way, since seeded sampling can fail that server (see
:class:`~aw_lookahead.worldmodel.OpenAIWorldModel`). ``docs/engine.md`` has
the measurements behind the choice.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from aw_lookahead.prompts import output_start
from aw_lookahead.trajectory import Action
from aw_lookahead.worldmodel.base import Prediction

from .routing import terminal_command_text
from .shell_parse import program_names
from .types import Verdict

__all__ = ["failure_starters", "token_p_failure"]

_ERROR_WORDS = frozenset(
    {"Error", "ERROR", "error", "fatal", "Fatal", "Traceback", "usage", "Usage",
     "bash", "sh", "zsh", "dash", "FAILED", "FAIL", "Exception"}
)  # fmt: skip


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


def failure_starters(action: Action) -> frozenset[str]:
    """Words that begin a failure line for ``action``: error words, plus the programs it runs."""
    if isinstance(action, dict) and "name" in action and "keystrokes" not in action:
        return _ERROR_WORDS
    text = terminal_command_text(action)
    return _ERROR_WORDS | program_names(text) if text else _ERROR_WORDS


def _starts_failure(token: str, starters: frozenset[str]) -> bool:
    word = token.strip()
    if not word:
        return False
    return any(s == word or (len(word) >= 3 and s.startswith(word)) for s in starters)


def _token_at(texts: Sequence[str], position: int) -> int | None:
    end = 0
    for i, text in enumerate(texts):
        end += len(text)
        if end > position and text.strip():
            return i
    return None


def _mass(top: object, starters: frozenset[str]) -> float | None:
    if not isinstance(top, Sequence) or not top:
        return None
    total = 0.0
    for item in top:
        if not (isinstance(item, Sequence) and len(item) == 2):
            return None
        text, logprob = item
        if not isinstance(text, str) or not isinstance(logprob, int | float):
            return None
        if _starts_failure(text, starters):
            total += math.exp(logprob)
    return min(1.0, total)


def token_p_failure(prediction: Prediction, verdict: Verdict, failing: bool) -> float | None:
    """The failure mass at the decision position when ``failing`` (see the module docstring),
    0 when not; ``None`` when the prediction has no token log-probabilities that line up
    with its text."""
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
    at_line = _token_at(texts, start + _decision_offset(observation, verdict))
    if at_line is None:
        return None
    chosen = math.exp(logprobs[at_line])
    first = _token_at(texts, start + output_start(observation))
    tops = prediction.metadata.get("token_top_logprobs")
    if first is None or not isinstance(tops, Sequence) or len(tops) != len(texts):
        return chosen
    mass = _mass(tops[first], failure_starters(prediction.action))
    return chosen if mass is None else max(chosen, mass)
