"""The two calls of a step, under the engine's deadline: the world model's, then the judges'.

Plain functions the engine (:mod:`.engine`) schedules; each returns what it
computed and never raises for a failing backend: a world model or judge that
fails, times out or answers garbage gives a :class:`~._decide.Failure` (the
error as text, the exception when there was one) in place of its value, and
the engine's ``on_error`` policy decides. :func:`default_deadline` is how long
that deadline is when the engine is not told; :func:`judge_step` judges a whole
step's predictions at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Sequence

from aw_lookahead.errors import WorldModelError
from aw_lookahead.trajectory import Action, Trajectory
from aw_lookahead.worldmodel.base import BaseWorldModel, Prediction, Step

from ._decide import Failure, Judged, Simulated
from .cache import PredictionCache, step_keys
from .judges import Judge, combine_verdicts
from .types import Verdict

__all__ = [
    "default_deadline",
    "judge_prediction",
    "judge_step",
    "predict_actions",
    "simulate_step",
]


def default_deadline(world_model: BaseWorldModel, judges: Iterable[object] = ()) -> float:
    """The engine's deadline for a world model: its ``timeout`` plus the slowest judge's, + 5 s.

    A world model without a timeout (``None``) counts 60 s, a judge without a
    ``timeout`` attribute 0 s, so the deadline is always longer than the client
    timeouts and a slow server is reported by the client, with its remedy.
    """
    wm = world_model.timeout
    base = float(wm) if wm is not None and wm > 0 else 60.0
    slowest = max(
        (float(t) for j in judges if isinstance(t := getattr(j, "timeout", None), int | float)),
        default=0.0,
    )
    return base + slowest + 5.0


async def predict_actions(
    world_model: BaseWorldModel,
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
            results = await world_model.predict_step(step)
    except TimeoutError as exc:
        failure = exc
        results = [f"the world model gave no prediction within the {deadline_s:g} s deadline"] * n
    except Exception as exc:  # a broken backend must not break the agent: on_error decides
        failure = exc
        results = [f"the world model failed: {type(exc).__name__}: {exc}"] * n
    if len(results) != n:
        results = [f"the world model returned {len(results)} results for {n} actions"] * n
    return [_settled(result, failure) for result in results]


async def simulate_step(
    world_model: BaseWorldModel,
    cache: PredictionCache | None,
    step: Step,
    *,
    deadline: float,
    deadline_s: float,
) -> tuple[list[Simulated], int, int]:
    """What each action of ``step`` is predicted to do: cache hits first, the rest in one
    world-model call (identical actions, by cache key, asked once). Also returns how many
    actions went to the model and how many the cache answered."""
    n = len(step.actions)
    sampling = step.sampling.key() if step.sampling is not None else ""
    keys, shared = [str(i) for i in range(n)], False
    if cache is not None:
        scope, shared = await cache.scope(world_model, deadline)
        keys = step_keys(scope + sampling, step)
    found: dict[int, Simulated] = {}
    misses: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        hit = cache.get(key, shared=shared) if cache is not None else None
        if hit is not None:
            found[i] = Simulated(prediction=hit, cached=True)
        else:
            misses.setdefault(key, []).append(i)
    if misses:
        firsts = [group[0] for group in misses.values()]
        asked = step.select(firsts) if len(firsts) < n else step
        results = await predict_actions(
            world_model, asked, deadline=deadline, deadline_s=deadline_s
        )
        for (key, group), result in zip(misses.items(), results, strict=True):
            if isinstance(result, Prediction):
                if cache is not None:
                    cache.put(key, result, shared=shared)
                simulated = Simulated(prediction=result)
            else:
                simulated = Simulated(failure=result)
            for i in group:
                found[i] = simulated
    return [found[i] for i in range(n)], len(misses), n - sum(len(g) for g in misses.values())


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


async def judge_step(
    judges: Sequence[Judge],
    trajectory: Trajectory,
    actions: Sequence[Action],
    predictions: Sequence[Prediction | None],
    *,
    task: str | None,
    deadline: float,
    deadline_s: float,
) -> list[Judged | None]:
    """The judges' reading of each prediction (``None`` where there is no prediction), the
    predictions judged concurrently (:func:`judge_prediction` each)."""
    asked = [(i, p) for i, p in enumerate(predictions) if p is not None]
    calls = [
        judge_prediction(
            judges,
            trajectory,
            actions[i],
            prediction,
            task=task,
            deadline=deadline,
            deadline_s=deadline_s,
        )
        for i, prediction in asked
    ]
    results = [await calls[0]] if len(calls) == 1 else await asyncio.gather(*calls)
    out: list[Judged | None] = [None] * len(predictions)
    for (i, _), judged in zip(asked, results, strict=True):
        out[i] = judged
    return out


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
