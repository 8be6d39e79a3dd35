"""The two calls of a step, under the engine's deadline: the world model's, then the judges'.

Plain functions the engine (:mod:`.engine`) schedules; each returns what it
computed and never raises for a failing backend: a world model or judge that
fails, times out or answers garbage gives a :class:`~._decide.Failure` (the
error as text, the exception when there was one) in place of its value, and
the engine's ``on_error`` policy decides.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from aw_lookahead.errors import WorldModelError
from aw_lookahead.trajectory import Action, Trajectory
from aw_lookahead.worldmodel.base import Prediction, Step, WorldModel, predict_step

from ._decide import Failure, Judged
from .judges import Judge, combine_verdicts
from .types import Verdict

__all__ = ["judge_prediction", "predict_actions"]


async def predict_actions(
    world_model: WorldModel,
    step: Step,
    *,
    deadline: float,
    deadline_s: float,
) -> list[Prediction | Failure]:
    """One prediction (or failure) per action of ``step``, in order, from one call."""
    n = len(step.actions)
    results: Sequence[object]
    failure: BaseException | None = None
    try:
        async with asyncio.timeout_at(deadline):
            results = await predict_step(world_model, step)
    except TimeoutError as exc:
        failure = exc
        results = [f"the world model gave no prediction within the {deadline_s:g} s deadline"] * n
    except Exception as exc:  # a broken backend must not break the agent: on_error decides
        failure = exc
        results = [f"the world model failed: {type(exc).__name__}: {exc}"] * n
    if len(results) != n:
        results = [f"the world model returned {len(results)} results for {n} actions"] * n
    return [_settled(result, failure) for result in results]


def _settled(result: object, failure: BaseException | None) -> Prediction | Failure:
    if isinstance(result, Prediction):
        return result
    if isinstance(result, WorldModelError):
        return Failure(f"{type(result).__name__}: {result}", result)
    if isinstance(result, str):
        return Failure(result, failure)
    return Failure(f"the world model returned {type(result).__name__}, not a Prediction")


async def judge_prediction(
    judges: Sequence[Judge],
    trajectory: Trajectory,
    action: Action,
    prediction: Prediction,
    *,
    task: str | None,
    deadline: float,
    deadline_s: float,
) -> Judged:
    """Every judge's reading of ``prediction`` and of each of its samples, and the time taken.

    The main prediction's verdict decides whether the action was checked: if
    its judges fail, the result is a failure. A sample whose judges fail is
    left out (``None`` in ``samples``), never read as a pass.
    """
    started = time.perf_counter()
    try:
        async with asyncio.timeout_at(deadline):
            if not prediction.samples:
                verdict = await _judge(judges, trajectory, action, prediction, task)
                samples: tuple[Verdict | None, ...] = ()
            else:
                variants = [
                    prediction.model_copy(update={"observation": text, "samples": []})
                    for text in prediction.samples
                ]
                main, *rest = await asyncio.gather(
                    _judge(judges, trajectory, action, prediction, task),
                    *(_judge(judges, trajectory, action, v, task) for v in variants),
                    return_exceptions=True,
                )
                if isinstance(main, BaseException):
                    raise main
                verdict = main
                samples = tuple(v if isinstance(v, Verdict) else None for v in rest)
    except TimeoutError as exc:
        failure = Failure(f"the judges gave no verdict within the {deadline_s:g} s deadline", exc)
        return Judged(failure=failure, seconds=time.perf_counter() - started)
    except Exception as exc:  # JudgeError and broken judges: on_error decides, never a pass
        failure = Failure(f"{type(exc).__name__}: {exc}", exc)
        return Judged(failure=failure, seconds=time.perf_counter() - started)
    return Judged(verdict=verdict, samples=samples, seconds=time.perf_counter() - started)


async def _judge(
    judges: Sequence[Judge],
    trajectory: Trajectory,
    action: Action,
    prediction: Prediction,
    task: str | None,
) -> Verdict:
    if len(judges) == 1:
        return combine_verdicts([await judges[0].judge(trajectory, action, prediction, task=task)])
    return combine_verdicts(
        await asyncio.gather(*(j.judge(trajectory, action, prediction, task=task) for j in judges))
    )
