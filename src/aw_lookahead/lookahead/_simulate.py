"""The two calls of a step, under the engine's deadline: the world model's, then the judges'.

Plain functions the engine (:mod:`.engine`) schedules; each fills
:class:`~._decide.Slot` s and never raises for a failing backend: a world
model or judge that fails, times out or answers garbage leaves the slot
without a prediction or verdict, with ``error`` (text) and ``exception``
(the exception, when there was one) set, and the engine's ``on_error``
policy decides.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from aw_lookahead.errors import WorldModelError
from aw_lookahead.trajectory import Trajectory
from aw_lookahead.worldmodel.base import Prediction, Step, WorldModel, predict_step

from ._decide import Slot
from .judges import Judge, combine_verdicts

__all__ = ["judge_slot", "predict_groups"]


async def predict_groups(
    world_model: WorldModel,
    step: Step,
    groups: Sequence[Sequence[Slot]],
    *,
    deadline: float,
    deadline_s: float,
) -> None:
    """Predict ``step``'s actions (one per group, in order) in one call; fill every slot."""
    results: Sequence[object]
    failure: BaseException | None = None
    try:
        async with asyncio.timeout_at(deadline):
            results = await predict_step(world_model, step)
    except TimeoutError as exc:
        failure = exc
        results = [
            f"the world model gave no prediction within the {deadline_s:g} s deadline"
        ] * len(groups)
    except Exception as exc:  # a broken backend must not break the agent: on_error decides
        failure = exc
        results = [f"the world model failed: {type(exc).__name__}: {exc}"] * len(groups)
    if len(results) != len(groups):
        results = [
            f"the world model returned {len(results)} results for {len(groups)} actions"
        ] * len(groups)
    for group, result in zip(groups, results, strict=True):
        for slot in group:
            if isinstance(result, Prediction):
                slot.prediction = result
            elif isinstance(result, WorldModelError):
                slot.error = f"{type(result).__name__}: {result}"
                slot.exception = result
            elif isinstance(result, str):
                slot.error = result
                slot.exception = failure
            else:
                slot.error = f"the world model returned {type(result).__name__}, not a Prediction"


async def judge_slot(
    judges: Sequence[Judge],
    trajectory: Trajectory,
    slot: Slot,
    *,
    task: str | None,
    deadline: float,
    deadline_s: float,
) -> None:
    """Run every judge on ``slot``'s prediction; fill its verdict (or its error) and timing."""
    assert slot.prediction is not None
    started = time.perf_counter()
    try:
        async with asyncio.timeout_at(deadline):
            if len(judges) == 1:
                verdicts = [
                    await judges[0].judge(trajectory, slot.action, slot.prediction, task=task)
                ]
            else:
                verdicts = list(
                    await asyncio.gather(
                        *(
                            j.judge(trajectory, slot.action, slot.prediction, task=task)
                            for j in judges
                        )
                    )
                )
        slot.verdict = combine_verdicts(verdicts)
    except TimeoutError as exc:
        slot.error = f"the judges gave no verdict within the {deadline_s:g} s deadline"
        slot.exception = exc
    except Exception as exc:  # JudgeError and broken judges: on_error decides, never a pass
        slot.error = f"{type(exc).__name__}: {exc}"
        slot.exception = exc
    slot.judge_s = time.perf_counter() - started
