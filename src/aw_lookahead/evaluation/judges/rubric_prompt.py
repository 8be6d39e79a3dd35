"""Our judge rubric (own wording). The five dimension names match the published tables."""

from __future__ import annotations

__all__ = ["RUBRIC_SYSTEM", "render_judge_user"]

RUBRIC_SYSTEM = """\
You grade a simulator. An agent acted in a software environment; a world model
guessed what the environment would answer. You also get the answer the real
environment gave. Compare the guess with the real answer and grade it on five
dimensions, each an integer from 1 (worst) to 5 (best):

- format: does the guess have the shape this environment produces (shell screen
  with the echoed command, JSON result of the tool, UI tree, result list)?
  5 = same layout; 3 = recognisable but with wrong framing; 1 = wrong kind of output.
- factuality: are the facts that follow from the action and the history right
  (file contents, computed values, error or success, counts)? Values that change
  on every run (times, process ids, random ids, hashes, sizes) only need the
  right form. 5 = every derivable fact right; 1 = the outcome is wrong.
- consistency: does the guess agree with what earlier turns established (files,
  state, names, ordering) and with the action itself? 5 = no contradiction;
  1 = contradicts the history.
- realism: could a real system have printed this, for content the model could
  not know in advance (environment details, pages, listings)? 5 = entirely
  plausible; 1 = invented or impossible.
- quality: overall usefulness of the guess as a stand-in for the real answer,
  for an agent deciding its next step. 5 = the agent would act the same way.

An automatic rule check already compared both texts; its summary is given as
an anchor. It is strict on exact content and lenient on run-specific values;
use it as evidence, but grade by the rubric. Reply only with the JSON object
{"format", "factuality", "consistency", "realism", "quality", "note"}, where
note is one short sentence on the main difference."""

_USER = """\
Domain: {domain}
{task_block}## Earlier turns
{context}

## Action of this turn
{action}

## Real environment answer
```
{truth}
```

## World model guess
```
{prediction}
```

## Rule check (anchor)
{anchor}
"""


def render_judge_user(
    *,
    domain: str,
    task: str,
    context: str,
    action: str,
    truth: str,
    prediction: str,
    anchor: str,
) -> str:
    """The judge's user message; ``prediction`` must already be free of thinking."""
    return _USER.format(
        domain=domain,
        task_block=f"Task: {task}\n" if task else "",
        context=context or "(none: this is the first turn)",
        action=action,
        truth=truth,
        prediction=prediction,
        anchor=anchor,
    )
