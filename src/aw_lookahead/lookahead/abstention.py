"""The engine's veto threshold: resolved once per engine, applied per action.

See :mod:`.calibration`. Kept apart from :mod:`.engine` so the scheduling of
a step and the choice of its threshold read separately. :class:`Abstention`
holds the caller's choice
(``threshold``, ``false_veto_budget``, ``calibration``), resolves it once the
served model's name is known, and says per action which threshold holds: the
calibrated one only when the world model gave what the calibration was fit on.
"""

from __future__ import annotations

import os
from typing import Literal

from aw_lookahead.worldmodel.base import BaseWorldModel

from ._decide import Simulated
from .cache import learn_served_model
from .calibration import (
    DEFAULT_THRESHOLD,
    Calibration,
    VetoThreshold,
    load_calibration,
    resolve_threshold,
    uncalibrated_note,
)
from .safety import logger

__all__ = ["Abstention"]


class Abstention:
    """One engine's threshold state: the caller's choice, resolved once, warned about once.

    A served model found without a calibration file is warned about once, on the
    ``aw_lookahead`` logger: its predictions veto at the default threshold, which the user
    did not choose (a world model without a server, e.g. a function, is not).
    """

    def __init__(
        self,
        world_model: BaseWorldModel,
        *,
        threshold: float | None,
        budget: float | None,
        calibration: Calibration | str | os.PathLike[str] | Literal[False] | None,
    ) -> None:
        self.world_model = world_model
        self._threshold_arg = threshold
        self._budget = budget
        self._calibration: Calibration | Literal[False] | None = (
            calibration
            if isinstance(calibration, Calibration) or calibration is None or calibration is False
            else load_calibration(calibration)
        )
        self._veto: VetoThreshold | None = None
        self._sampling_warned = False

    def current(self) -> VetoThreshold:
        """The threshold in force (cached once the model's name is known)."""
        if self._veto is not None:
            return self._veto
        wm = self.world_model
        model, served = wm.model_name, wm.served
        found = resolve_threshold(
            model=model,
            threshold=self._threshold_arg,
            budget=self._budget,
            calibration=self._calibration or None,
            lookup=self._calibration is None,
            served_root=served.root if served is not None else None,
        )
        weights_known = served is not None or not wm.has_server
        if (
            self._calibration is not None
            or self._threshold_arg is not None
            or (model is not None and weights_known)
        ):
            self._veto = found  # once: later calls return it above
            uncalibrated = found.source == "default" and self._calibration is None
            if uncalibrated and model is not None and wm.has_server:
                logger.warning("aw-lookahead: %s.", uncalibrated_note(model))
        return found

    async def resolve(self, deadline: float) -> VetoThreshold:
        """:meth:`current`, after asking the server which model it serves (name and weights,
        the shipped embedded calibration depends on both) when that is not known yet and
        matters (the caller gave no threshold and no calibration file)."""
        wm = self.world_model
        unknown = wm.model_name is None or (wm.has_server and wm.served is None)
        given = self._threshold_arg is not None or isinstance(self._calibration, Calibration)
        if self._veto is None and unknown and not given:
            await learn_served_model(wm, deadline)
        return self.current()

    def threshold_for(
        self,
        veto: VetoThreshold,
        simulated: Simulated,
        domain: str | None = None,
        read_only: bool | None = None,
    ) -> float | None:
        """The veto threshold for one action of ``domain`` (read-only or not, as the router
        says): the calibrated one (its class's or its domain's where those were fit alone)
        only when the world model gave what it was fit on (samples, token log-probabilities)."""
        fit, pred = veto.calibration, simulated.prediction
        if fit is None or pred is None:
            return veto.value_for(domain, read_only)
        wanted = fit.request()
        missing = (wanted.n > 1 and not pred.samples) or (
            wanted.logprobs and "token_logprobs" not in pred.metadata
        )
        if not missing and not fit.stale:
            return veto.value_for(domain, read_only)
        if fit.stale and not self._sampling_warned:
            self._sampling_warned = True
            logger.warning(
                "aw-lookahead: the calibration for %r was fit with an earlier release's "
                "p_failure estimator; its actions use the default threshold %g until you run "
                "`aw-lookahead eval calibrate` for it again.",
                fit.model,
                DEFAULT_THRESHOLD,
            )
        elif not self._sampling_warned:
            self._sampling_warned = True
            logger.warning(
                "aw-lookahead: the calibration for %r was fit on %s, which %s did not give; "
                "those actions use the default threshold %g (a world model that honours "
                "Step.sampling, e.g. OpenAIWorldModel, gives them).",
                fit.model,
                "token log-probabilities" if wanted.logprobs else f"{wanted.n} predictions",
                type(self.world_model).__name__,
                DEFAULT_THRESHOLD,
            )
        return DEFAULT_THRESHOLD
