"""The lookahead engine: simulate actions with a world model, judge, prune, rank.

Guarantees:

* Every call returns one :class:`Decision` per action, in the caller's order,
  within ``deadline_s`` (per ``gate``/``select`` call, per step of
  ``rollout``) plus scheduling noise: the world-model call and the judges run
  under ``asyncio.timeout``. Nothing hangs on a dead server.
* The actions that need a simulation go to the world model in ONE call
  (its ``predict_step``), so the server batches them
  and shares the prefix.
* The history is rendered ONCE per step (:meth:`Step.messages
  <aw_lookahead.worldmodel.base.Step>`): the cache keys and the world
  model's requests are derived from that one rendering.
* ``world_model`` is checked against the protocol when made (a ``ConfigError`` names a gap;
  :func:`~aw_lookahead.worldmodel.conform.conform` gives a bare one the contract's defaults).
* A world model that is unreachable, times out, is out of context or answers
  garbage (any exception from it) leaves the action *unchecked*; so does a
  judge that fails. ``on_error`` decides (one definition, :mod:`.safety`):
  ``fail_safe`` (default) executes it as ``unsimulated`` unless an
  action-level judge calls it destructive, which vetoes it as "could not be
  checked"; ``fail_open`` executes every one; ``fail_closed`` vetoes every
  one. Never silent: each carries its cause in ``metadata["unchecked"]``, is
  counted in :attr:`Lookahead.stats`, and each cause is logged once as a
  WARNING on the ``aw_lookahead`` logger with its remedy.
* ``deadline_s`` defaults to the world model's own ``timeout`` plus the
  slowest judge's, plus 5 s, so a slow server surfaces as the client's
  timeout error (with its remedy) before the engine gives up on it.
* Cache hits (:mod:`.cache`) cost no model call; identical actions of a call are asked once.

Ranking in :meth:`Lookahead.select` (survivors by score, unchecked ones last):
see :mod:`.selection`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from aw_lookahead._sync import run_sync
from aw_lookahead.errors import ConfigError, UsageError
from aw_lookahead.trajectory import Action, Trajectory
from aw_lookahead.worldmodel.base import Step, WorldModel
from aw_lookahead.worldmodel.conform import conform

from ._decide import Candidate, EngineStats, Judged, Simulated, decide, heuristic_score
from ._simulate import default_deadline, judge_step, simulate_step
from .abstention import Abstention
from .cache import PredictionCache
from .calibration import Calibration, VetoThreshold
from .environment import EnvironmentLike, Observation, as_environment
from .grounded import ground_hazard, observe_actions, observed_metadata, observed_veto
from .judges import Judge
from .options import SimulatePolicy, check_options
from .routing import RiskRouter, Route
from .rules import RuleJudge
from .safety import ErrorPolicy, WarnOnce, action_hazard, classify_error, unchecked_decision
from .selection import ranked_selection, unsimulated_selection
from .types import Decision, DecisionKind, Outcome, RolloutResult, SelectResult, Signal

__all__ = [
    "EngineStats",
    "Lookahead",
    "default_deadline",
    "heuristic_score",
]

_DEFAULT_VETO = frozenset({Outcome.FAILURE, Outcome.NO_OP, Outcome.RISKY})


class Lookahead:
    """Simulate before execute: ``gate``, ``select`` and ``rollout`` over any world model.

    ``judges`` default to ``[RuleJudge()]``; ``router`` to :class:`RiskRouter`.
    ``simulate="risky"`` skips actions the router calls read-only; ``"never"``
    simulates nothing (every action is ``skipped``). ``cache=None`` makes an
    in-memory :class:`PredictionCache`; ``False`` disables caching.
    ``on_error`` is ``"fail_safe"`` (default), ``"fail_open"`` or
    ``"fail_closed"`` (see :mod:`.safety`). ``deadline_s=None`` derives the
    deadline from the world model's and judges' ``timeout`` (see
    :func:`default_deadline`).

    Confidence (:mod:`.calibration`): a non-destructive action is vetoed only
    when its ``p_failure`` reaches the veto threshold: ``threshold`` if
    given, else the one ``false_veto_budget`` reads off the model's
    calibration curve, else the model's calibration file (``calibration``: a
    :class:`~.calibration.Calibration` or a path; ``None`` looks the served
    model's file up; ``False`` uses none), else
    :data:`~.calibration.DEFAULT_THRESHOLD`. Below it the action runs,
    marked ``uncertain`` and counted in :attr:`stats`.

    Grounded (:mod:`.environment`): with an ``environment`` (a folder, a ``TerminalSandbox``,
    any :class:`~.environment.Environment`) each action is first looked at, read-only: a need
    observed missing vetoes it (basis ``observed``, no model call), what was seen goes into its
    request, a write onto a path seen absent is not destructive (:func:`.grounded.ground_hazard`).
    :meth:`rollout` looks only at its first step.
    """

    def __init__(
        self,
        world_model: WorldModel,
        *,
        judges: Iterable[Judge] | None = None,
        router: RiskRouter | None = None,
        simulate: SimulatePolicy = "always",
        on_error: ErrorPolicy = "fail_safe",
        deadline_s: float | None = None,
        cache: PredictionCache | Literal[False] | None = None,
        veto_outcomes: Iterable[Outcome] = _DEFAULT_VETO,
        threshold: float | None = None,
        false_veto_budget: float | None = None,
        calibration: Calibration | str | os.PathLike[str] | Literal[False] | None = None,
        environment: EnvironmentLike | None = None,
    ) -> None:
        model = conform(world_model)
        check_options(
            simulate=simulate,
            on_error=on_error,
            threshold=threshold,
            false_veto_budget=false_veto_budget,
        )
        judges = list(judges) if judges is not None else [RuleJudge()]
        if deadline_s is None:
            deadline_s = default_deadline(model, judges)
        if not deadline_s > 0:
            raise ConfigError(f"deadline_s must be > 0 seconds, got {deadline_s!r}")
        self.world_model = model
        self.judges: list[Judge] = judges
        self.router = router or RiskRouter()
        self.simulate: SimulatePolicy = simulate
        self.on_error: ErrorPolicy = on_error
        self.deadline_s = float(deadline_s)
        self.cache: PredictionCache | None = (
            PredictionCache() if cache is None else None if cache is False else cache
        )
        self.veto_outcomes = frozenset(Outcome(o) for o in veto_outcomes)
        self.environment = as_environment(environment)
        self.stats = EngineStats()
        self._warn = WarnOnce()
        self._abstention = Abstention(
            model, threshold=threshold, budget=false_veto_budget, calibration=calibration
        )

    @property
    def veto_threshold(self) -> VetoThreshold:
        """The veto threshold in force, and the calibration behind it (see :mod:`.calibration`).

        Resolved once the served model's name is known (an ``OpenAIWorldModel``
        learns it on its first call); until then the default applies.
        """
        return self._abstention.current()

    # ------------------------------------------------------------------ public API

    async def gate(
        self, trajectory: Trajectory, actions: Sequence[Action], *, task: str | None = None
    ) -> list[Decision]:
        """One decision per action (same order; ``Decision.index`` is the position)."""
        actions = list(actions)
        self.stats.actions += len(actions)
        decisions: list[Decision | None] = [None] * len(actions)
        todo: list[Candidate] = []
        seen = await self._observe(trajectory, actions)
        for i, (action, observation) in enumerate(zip(actions, seen, strict=True)):
            if observation is not None and observation.missing is not None:
                decisions[i] = self._observed(action, i, observation)
                continue
            if self.simulate == "never":
                skipped = self._skipped(action, i, "simulate='never'")
                decisions[i] = self._not_simulated(trajectory, skipped)
                continue
            route = self.router.route(trajectory, action) if self.simulate == "risky" else None
            if route is not None and route.read_only:
                decisions[i] = self._skipped(action, i, route.reason, route)
                continue
            todo.append(Candidate(action, i, route, observation))
        for candidate, decision in zip(todo, await self._run(trajectory, todo, task), strict=True):
            decisions[candidate.index] = decision
        return [d for d in decisions if d is not None]

    async def select(
        self, trajectory: Trajectory, candidates: Sequence[Action], task: str | None = None
    ) -> SelectResult:
        """Simulate all candidates together, prune, rank survivors; ``chosen`` is the best."""
        candidates = list(candidates)
        if not candidates:
            raise UsageError("select() needs at least one candidate action")
        self.stats.actions += len(candidates)
        seen = await self._observe(trajectory, candidates)
        observed = {
            i: self._observed(a, i, o)
            for i, (a, o) in enumerate(zip(candidates, seen, strict=True))
            if o is not None and o.missing is not None
        }
        if self.simulate == "never":
            return unsimulated_selection(
                [
                    observed.get(i)
                    or self._not_simulated(trajectory, self._skipped(a, i, "simulate='never'"))
                    for i, a in enumerate(candidates)
                ]
            )
        todo = [
            Candidate(a, i, None, seen[i]) for i, a in enumerate(candidates) if i not in observed
        ]
        decisions = [*observed.values(), *await self._run(trajectory, todo, task)]
        return ranked_selection(sorted(decisions, key=lambda d: d.index), len(candidates))

    async def rollout(
        self,
        trajectory: Trajectory,
        plan: Sequence[Action],
        depth: int | None = None,
        *,
        task: str | None = None,
    ) -> RolloutResult:
        """Simulate a plan step by step, feeding each prediction back as history.

        Every step is simulated (routing does not apply: the next step needs an
        observation). Stops at the first vetoed step (``failed_at``) or at the first step
        without a prediction (when ``on_error`` lets it pass: ``failed_at`` stays ``None``
        and ``reason`` says where it stopped). ``deadline_s`` applies per step. The
        returned trajectory holds the predicted turns, the failing one included, each
        marked ``metadata["predicted"]``.
        """
        if depth is not None and depth < 0:
            raise UsageError(f"depth must be >= 0, got {depth}")
        steps_plan = list(plan) if depth is None else list(plan)[:depth]
        self.stats.actions += len(steps_plan)
        traj = trajectory
        steps: list[Decision] = []
        first = (await self._observe(trajectory, steps_plan[:1]))[0] if steps_plan else None
        for i, action in enumerate(steps_plan):
            if i == 0 and first is not None and first.missing is not None:
                decision = self._observed(action, i, first)
            else:
                [decision] = await self._run(
                    traj, [Candidate(action, i, observation=first if i == 0 else None)], task
                )
            steps.append(decision)
            if decision.prediction is not None:
                traj = traj.with_turn(action, decision.prediction.observation, predicted=True)
            if decision.kind is DecisionKind.VETO:
                return RolloutResult(
                    steps=steps,
                    failed_at=i,
                    trajectory=traj,
                    reason=f"step {i} is predicted to fail: {decision.reason}",
                )
            if decision.prediction is None:
                return RolloutResult(
                    steps=steps,
                    trajectory=traj,
                    reason=f"stopped at step {i}: no prediction ({decision.error})",
                )
        return RolloutResult(
            steps=steps,
            trajectory=traj,
            reason=f"all {len(steps_plan)} steps are predicted feasible",
        )

    def gate_sync(
        self, trajectory: Trajectory, actions: Sequence[Action], *, task: str | None = None
    ) -> list[Decision]:
        """Blocking :meth:`gate`."""
        return run_sync(self.gate(trajectory, actions, task=task))

    def select_sync(
        self, trajectory: Trajectory, candidates: Sequence[Action], task: str | None = None
    ) -> SelectResult:
        """Blocking :meth:`select`."""
        return run_sync(self.select(trajectory, candidates, task))

    def rollout_sync(
        self,
        trajectory: Trajectory,
        plan: Sequence[Action],
        depth: int | None = None,
        *,
        task: str | None = None,
    ) -> RolloutResult:
        """Blocking :meth:`rollout`."""
        return run_sync(self.rollout(trajectory, plan, depth, task=task))

    # ------------------------------------------------------------------ the step

    async def _run(
        self, trajectory: Trajectory, candidates: list[Candidate], task: str | None
    ) -> list[Decision]:
        """One step: simulate the candidates, judge their predictions, decide each."""
        if not candidates:
            return []
        deadline = asyncio.get_running_loop().time() + self.deadline_s
        veto = await self._abstention.resolve(deadline)
        domain = trajectory.domain.value
        step = self.world_model.prepare_step(trajectory, [c.action for c in candidates])
        step = step.with_states(
            [c.observation.state_text() if c.observation else None for c in candidates]
        )
        if veto.calibration is not None:
            step = step.with_sampling(veto.calibration.request())
        simulated = await self._simulate(step, deadline)
        judged = await judge_step(
            self.judges,
            trajectory,
            [c.action for c in candidates],
            [s.prediction for s in simulated],
            task=task or trajectory.task,
            deadline=deadline,
            deadline_s=self.deadline_s,
        )
        classed = veto.has_class_fits(domain)  # else the router's parse is not needed
        read_only = [
            (c.route or self.router.route(trajectory, c.action)).read_only if classed else None
            for c in candidates
        ]
        return [
            self._decision(trajectory, c, s, j, self._abstention.threshold_for(veto, s, domain, r))
            for c, s, j, r in zip(candidates, simulated, judged, read_only, strict=True)
        ]

    async def _simulate(self, step: Step, deadline: float) -> list[Simulated]:
        """What each action of ``step`` is predicted to do (see :func:`simulate_step`)."""
        found, calls, hits = await simulate_step(
            self.world_model, self.cache, step, deadline=deadline, deadline_s=self.deadline_s
        )
        self.stats.model_calls += calls
        self.stats.cache_hits += hits
        return found

    # ------------------------------------------------------------------ decisions

    async def _observe(
        self, trajectory: Trajectory, actions: Sequence[Action]
    ) -> list[Observation | None]:
        seen, failed = await observe_actions(
            self.environment, trajectory, actions, timeout_s=self.deadline_s
        )
        self.stats.observe_errors += failed
        return seen

    def _observed(self, action: Action, index: int, observation: Observation) -> Decision:
        self.stats.observed_vetoes += 1
        return observed_veto(action, index, observation)

    def _skipped(
        self, action: Action, index: int, reason: str, route: Route | None = None
    ) -> Decision:
        self.stats.skipped += 1
        meta: dict[str, Any] = {"route": route.model_dump()} if route is not None else {}
        return Decision(
            action=action, kind=DecisionKind.SKIPPED, reason=reason, index=index, metadata=meta
        )

    def _not_simulated(self, trajectory: Trajectory, decision: Decision) -> Decision:
        hazard = action_hazard(self.router, trajectory, decision.action)
        return self._unchecked(decision, "not_simulated", hazard)

    def _unchecked(self, decision: Decision, cause: str, hazard: Signal | None) -> Decision:
        out = unchecked_decision(decision, hazard=hazard, policy=self.on_error, cause=cause)
        if out.executes:
            self.stats.unchecked += 1
        else:
            self.stats.blocked_unchecked += 1
        self.stats.causes[cause] = self.stats.causes.get(cause, 0) + 1
        self._warn.warn(out)
        return out

    def _decision(
        self,
        trajectory: Trajectory,
        candidate: Candidate,
        simulated: Simulated,
        judged: Judged | None,
        threshold: float | None,
    ) -> Decision:
        hazard = action_hazard(self.router, trajectory, candidate.action)
        hazard, judged = ground_hazard(hazard, judged, candidate, trajectory)
        decision = decide(
            candidate,
            simulated,
            judged,
            veto_outcomes=self.veto_outcomes,
            hazard=hazard,
            threshold=threshold,
        )
        decision.metadata.update(observed_metadata(candidate.observation))
        if judged is None or judged.verdict is None:
            self.stats.errors += 1
            cause = classify_error(decision.error, judged=simulated.prediction is not None)
            return self._unchecked(decision, cause, hazard)
        if decision.uncertain:
            self.stats.uncertain += 1
        return decision
