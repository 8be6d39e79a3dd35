"""A step handed from the engine to a world model: its candidate actions, rendered once.

:class:`Step` carries a step's actions and their rendering (made on first use,
trimmed renderings shared by every action); :class:`Sampling` says how the
engine wants them predicted. Kept apart from :mod:`.base` (the protocol and the
prediction), which re-exports both, so the rendering cache reads on its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from aw_lookahead.prompts.render import PromptSet, render_step
from aw_lookahead.prompts.step_messages import StepMessages
from aw_lookahead.trajectory import Action, Trajectory

__all__ = ["Sampling", "Step"]


@dataclass(frozen=True, slots=True)
class Sampling:
    """How the engine asks a step's actions to be predicted, when it cares.

    ``n`` predictions per action (the first is the prediction, the rest its
    ``samples``), at ``temperature`` with ``seed`` (``None``: the world
    model's own), with the tokens' log-probabilities when ``logprobs``, of at
    most ``max_tokens`` tokens (``None``: the world model's own limit; a lower
    own limit wins): a calibrated gate asks for the length its calibration was
    fit on, which is all its decision reads. World models that cannot honour
    it give their usual predictions; the engine reads what it got.
    """

    n: int = 1
    temperature: float | None = None
    seed: int | None = None
    logprobs: bool = False
    max_tokens: int | None = None

    def key(self) -> str:
        """Text that tells predictions made under different samplings apart (cache keys)."""
        return (
            f"|sampling:n={self.n},t={self.temperature},seed={self.seed},lp={self.logprobs}"
            f",max={self.max_tokens}"
        )


class Step:
    """The candidate actions of one step, rendered once, handed from the engine to the world model.

    ``messages`` renders the history once and each action's last user turn
    (:func:`~aw_lookahead.prompts.render_step`) on first use, so a world
    model that never renders (a function, a replay) costs nothing unless the
    engine needs cache keys. ``fit(skip_turns, brief_tools)`` is the
    rendering trimmed to fit a context window, made once per setting and
    shared by every action of the step. ``select`` keeps some actions and
    every rendering made so far. ``states`` holds what was observed of the
    environment before each action (:meth:`with_states`), rendered into its turn.
    """

    def __init__(
        self,
        trajectory: Trajectory,
        actions: Sequence[Action],
        *,
        prompts: PromptSet | None = None,
        sampling: Sampling | None = None,
        states: Sequence[str | None] = (),
    ) -> None:
        self.trajectory = trajectory
        self.actions: tuple[Action, ...] = tuple(actions)
        self.prompts = prompts
        self.sampling = sampling
        self.states: tuple[str | None, ...] = tuple(states)
        self._renders: dict[tuple[int, bool], StepMessages] = {}

    @property
    def messages(self) -> StepMessages:
        """The untrimmed rendering: what the cache keys are derived from."""
        return self.fit(0, False)

    def fit(self, skip_turns: int, brief_tools: bool) -> StepMessages:
        """The rendering with ``skip_turns`` old turns dropped (and tool descriptions cut)."""
        key = (skip_turns, brief_tools)
        found = self._renders.get(key)
        if found is None:
            found = self._renders[key] = render_step(
                self.trajectory,
                self.actions,
                prompts=self.prompts,
                skip_turns=skip_turns,
                brief_tools=brief_tools,
                states=self.states,
            )
        return found

    def select(self, indices: Sequence[int]) -> Step:
        """A step of the actions at ``indices``, reusing this step's renderings."""
        out = Step(
            self.trajectory,
            [self.actions[i] for i in indices],
            prompts=self.prompts,
            sampling=self.sampling,
            states=[self.states[i] for i in indices] if self.states else (),
        )
        out._renders = {k: r.select(indices) for k, r in self._renders.items()}
        return out

    def with_sampling(self, sampling: Sampling | None) -> Step:
        """The same step (renderings shared) asked under ``sampling``."""
        out = Step(
            self.trajectory,
            self.actions,
            prompts=self.prompts,
            sampling=sampling,
            states=self.states,
        )
        out._renders = self._renders
        return out

    def with_states(self, states: Sequence[str | None]) -> Step:
        """The same step with what was observed before each action (rendered anew when any)."""
        if not any(states):
            return self
        return Step(
            self.trajectory,
            self.actions,
            prompts=self.prompts,
            sampling=self.sampling,
            states=states,
        )
