"""Calibration: the ``p_failure`` at which a model's prediction is trusted enough to veto.

A prediction is evidence, not a fact; a small model is often wrong. The engine
estimates ``p_failure`` per simulated action (the share of its predictions
that the judges read as a veto outcome, see :mod:`.confidence`) and vetoes a
non-destructive action only when ``p_failure`` reaches a *threshold*. The
threshold is fit on held-out actions with known outcomes
(``aw-lookahead eval calibrate``) so that at most a *false-veto budget* of the
good actions is blocked; this module holds that fit and the file it writes.

Where the engine's threshold comes from (first that applies,
:func:`resolve_threshold`):

1. ``Lookahead(threshold=...)``;
2. ``Lookahead(false_veto_budget=...)``, read off the model's calibration curve;
3. the model's calibration file: ``Lookahead(calibration=path)``, else the file
   for the served model name found by :func:`find_calibration`
   (``$AW_LOOKAHEAD_CALIBRATION``, a file or a folder of ``<model>.json``; then
   ``~/.cache/aw-lookahead/calibration/<model>.json``; then the embedded
   model's, shipped beside its adapter, :func:`embedded_calibration_path`);
4. :data:`DEFAULT_THRESHOLD` (1.0) for an uncalibrated model: veto only when
   every prediction of the action says it fails. With one prediction per
   action that is the engine's rule without calibration; with several it
   lets a doubtful model run the action, never block it.

A model can be informative in one domain and not in another (the embedded
model's terminal predictions catch failures; its MCP ones, on held-out
servers, do not), and for one class of action and not another: the embedded
model reads a directory listing well enough to tell a ``cat`` of a missing
file from one of a listed file, but scores many good writes near 1. So a
calibration also holds one fit per domain of its data and one per class of
action within a domain (:func:`fit_group`: the router's read-only actions and
the rest, e.g. ``terminal/read-only``), each where it had at least
:data:`DOMAIN_MIN_FAILING` failing and :data:`DOMAIN_MIN_GOOD` good actions
(:class:`DomainFit`). An action is judged by its class's threshold, else its
domain's, else the overall one (:meth:`VetoThreshold.value_for`). A file
written before classes were fit has domain fits only and is read as before.

A calibration holds only for the sampling it was fit with (predictions per
action, temperature, seed): when one applies, the engine asks the world model
for that sampling (:class:`~aw_lookahead.worldmodel.base.Sampling`); a world
model that gives a single prediction anyway is judged by the default
threshold, and the log says so once. A fitted ``threshold`` of ``None``
means no threshold meets the budget: that model's predictions never veto.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from aw_lookahead.errors import ConfigError
from aw_lookahead.worldmodel.base import Sampling

from ._calibration_fit import (
    DOMAIN_MIN_FAILING,
    DOMAIN_MIN_GOOD,
    CurvePoint,
    DomainFit,
    ReliabilityBin,
    best_threshold,
    fit_domains,
    fit_summary,
    fit_threshold,
    reliability_bins,
)

__all__ = [
    "CALIBRATION_ENV",
    "DEFAULT_THRESHOLD",
    "DOMAIN_MIN_FAILING",
    "DOMAIN_MIN_GOOD",
    "Calibration",
    "CurvePoint",
    "DomainFit",
    "ReliabilityBin",
    "VetoThreshold",
    "embedded_calibration_path",
    "find_calibration",
    "fit_domains",
    "fit_group",
    "fit_summary",
    "fit_threshold",
    "load_calibration",
    "reliability_bins",
    "resolve_threshold",
    "uncalibrated_note",
    "user_calibration_path",
]

DEFAULT_THRESHOLD = 1.0
CALIBRATION_ENV = "AW_LOOKAHEAD_CALIBRATION"
FILE_VERSION = 2


class Calibration(BaseModel):
    """A model's calibration file (``aw-lookahead eval calibrate`` writes it).

    ``threshold`` is the smallest ``p_failure`` level whose false-veto rate on
    the calibration data is within ``budget`` (``None``: none is);
    ``catch_rate`` / ``false_veto_rate`` are what it achieved there; ``curve``
    holds every level; ``predictions_per_action``, ``estimator`` (how
    ``p_failure`` was read: the share of ``samples``, token ``logprobs``, or a
    ``single`` prediction's verdict) and ``temperature`` are the sampling it
    applies to. ``domains`` holds the fit per domain (see the module docstring);
    and per class of action within a domain (keys from :func:`fit_group`);
    ``threshold`` and ``curve`` are the fit on all actions.
    """

    model_config = ConfigDict(extra="forbid")

    version: int = FILE_VERSION
    model: str
    adapter_sha256: str | None = None
    threshold: float | None
    budget: float = Field(ge=0.0, le=1.0)
    catch_rate: float
    false_veto_rate: float
    predictions_per_action: int = Field(ge=1)
    estimator: Literal["samples", "logprobs", "single"] = "single"
    temperature: float | None = None
    sampling: dict[str, Any] = Field(default_factory=dict)
    failing: int
    good: int
    skipped: int = 0  # actions the world model could not check (left out of the fit)
    destructive: int = 0  # destructive actions in the data, left to the fail-safe rule
    curve: list[CurvePoint]
    domains: dict[str, DomainFit] = Field(default_factory=dict)
    reliability: list[ReliabilityBin] = Field(default_factory=list)
    data: list[str] = Field(default_factory=list)
    created: str = ""
    command: str = ""

    @property
    def stale(self) -> bool:
        """Fit on token log-probabilities before version 2, when ``p_failure`` was the chosen
        token's probability (now the failure mass): its threshold no longer means the same."""
        return self.estimator == "logprobs" and self.version < 2

    def threshold_for(self, budget: float) -> float | None:
        """The threshold on the curve for ``budget`` (see :func:`fit_threshold`)."""
        return best_threshold(self.curve, budget)

    def domain_thresholds(self, budget: float | None = None) -> dict[str, float | None]:
        """Each fitted domain's threshold: as fit, or read off its curve for ``budget``."""
        return {
            name: fit.threshold if budget is None else best_threshold(fit.curve, budget)
            for name, fit in self.domains.items()
        }

    def request(self) -> Sampling:
        """The sampling it was fit with, as the engine asks the world model for it."""
        seed = self.sampling.get("seed")
        limit = self.sampling.get("max_tokens")
        return Sampling(
            n=self.predictions_per_action,
            temperature=self.temperature,
            seed=seed if isinstance(seed, int) else None,
            logprobs=self.estimator == "logprobs",
            max_tokens=limit if isinstance(limit, int) and limit > 0 else None,
        )


def fit_group(domain: str, read_only: bool) -> str:
    """The key of a class of action within ``domain`` in :attr:`Calibration.domains`:
    ``<domain>/read-only`` for what the engine's router calls read-only, else
    ``<domain>/may-change``. Calibration and the engine class an action the same way, with
    :meth:`~aw_lookahead.lookahead.routing.RiskRouter.route`."""
    return f"{domain}/{'read-only' if read_only else 'may-change'}"


def load_calibration(path: str | os.PathLike[str]) -> Calibration:
    """Read a calibration file; a bad one is a ``ConfigError`` naming the file and field."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read calibration file {p}: {exc.strerror}") from exc
    except ValueError as exc:
        raise ConfigError(f"calibration file {p} is not JSON: {exc}") from exc
    try:
        return Calibration.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "(top level)"
        raise ConfigError(
            f"calibration file {p}: field {where!r}: {first['msg']}; write it again with "
            "`aw-lookahead eval calibrate`"
        ) from exc


def embedded_calibration_path() -> Path:
    """The embedded model's calibration file, shipped beside its adapter (the one place)."""
    from aw_lookahead.prompts.profiles import SHIPPED_ADAPTER_DIR

    return SHIPPED_ADAPTER_DIR / "calibration.json"


def _file_name(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("._") or "model"


def user_calibration_path(model: str) -> Path:
    """Where ``eval calibrate`` puts a model's file by default, and where it is looked up."""
    from aw_lookahead.embedded import default_cache_dir

    return default_cache_dir() / "calibration" / f"{_file_name(model)}.json"


def uncalibrated_note(model: str) -> str:
    """What a user of ``model`` should know when it has no calibration file, and what to run."""
    return (
        f"no calibration for model {model!r} (looked in ${CALIBRATION_ENV} and "
        f"{user_calibration_path(model)}): its predictions veto at the default threshold "
        f"{DEFAULT_THRESHOLD:g}, when every prediction of an action says it fails, which from a "
        "failure-prone model blocks good work too; fit one with `aw-lookahead eval calibrate "
        f"--model {model} --data VALIDATION.jsonl`"
    )


def _embedded_names() -> frozenset[str]:
    from aw_lookahead.embedded import EMBEDDED_ADAPTER_NAME, EMBEDDED_MODEL_NAME

    return frozenset({EMBEDDED_MODEL_NAME, EMBEDDED_ADAPTER_NAME})


def find_calibration(
    model: str | None,
    environ: Mapping[str, str] | None = None,
    *,
    served_root: str | None = None,
) -> Calibration | None:
    """The calibration file for the served model name ``model``, if there is one.

    Looks in ``$AW_LOOKAHEAD_CALIBRATION`` (a file, used when its ``model``
    matches, or a folder of ``<model>.json``), then in the user's cache, then
    for the embedded model the file shipped beside its adapter. That last one
    is the adapter's: it applies only once the served weights are known
    (``served_root``: vLLM's ``root``, ``""`` when the server reports none),
    and not to a server that reports the raw base model's folder (as
    ``serve --local --base-only`` and the tests' server do).
    """
    if not model:
        return None
    env = (os.environ if environ is None else environ).get(CALIBRATION_ENV)
    candidates: list[Path] = []
    if env:
        where = Path(env).expanduser()
        candidates.append(where / f"{_file_name(model)}.json" if where.is_dir() else where)
    candidates.append(user_calibration_path(model))
    embedded = model in _embedded_names()
    if embedded and served_root is not None and not _serves_raw_base(served_root):
        candidates.append(embedded_calibration_path())
    for path in candidates:
        if path.is_file():
            found = load_calibration(path)
            if found.model == model or (embedded and found.model in _embedded_names()):
                return found
    return None


def _serves_raw_base(served_root: str) -> bool:
    from aw_lookahead.prompts.profiles import EMBEDDED_SERVED_NAME

    # the raw base's folder is named after the served name; the merged one adds "-aw"
    return bool(served_root) and Path(served_root).name == EMBEDDED_SERVED_NAME


@dataclass(frozen=True, slots=True)
class VetoThreshold:
    """The engine's threshold (``None``: predictions never veto), where it came from, the
    calibration behind it, and the thresholds of the domains it fit on their own."""

    value: float | None
    source: str  # "threshold", "budget", "calibration" or "default"
    calibration: Calibration | None = None
    domains: Mapping[str, float | None] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """``source``, ``value`` and ``by_class`` (the fitted classes' and domains' thresholds)
        as plain JSON data, for reports that say which thresholds were in force."""
        return {"source": self.source, "value": self.value, "by_class": dict(self.domains)}

    def has_class_fits(self, domain: str) -> bool:
        """Whether ``domain``'s actions are judged by class (:func:`fit_group`), so that the
        caller must tell :meth:`value_for` whether an action is read-only."""
        return any(fit_group(domain, r) in self.domains for r in (True, False))

    def value_for(self, domain: str | None, read_only: bool | None = None) -> float | None:
        """The threshold for an action of ``domain``: its class's fit's (``read_only`` as the
        router says; ``None``: not known), else its domain's, else :attr:`value`."""
        if domain is not None and read_only is not None:
            group = fit_group(domain, read_only)
            if group in self.domains:
                return self.domains[group]
        if domain is not None and domain in self.domains:
            return self.domains[domain]
        return self.value


def resolve_threshold(
    *,
    model: str | None,
    threshold: float | None,
    budget: float | None,
    calibration: Calibration | None,
    lookup: bool,
    served_root: str | None = None,
) -> VetoThreshold:
    """The threshold by the order in the module docstring.

    ``calibration`` is a file the caller gave; with ``lookup`` the model's file
    is searched (:func:`find_calibration`) when none was given. A budget
    without a curve to read it from is a :class:`ConfigError`.
    """
    if threshold is not None:
        return VetoThreshold(threshold, "threshold")
    found = (
        calibration
        if calibration is not None
        else find_calibration(model, served_root=served_root)
        if lookup
        else None
    )
    if budget is not None:
        if found is None:
            raise ConfigError(
                f"false_veto_budget={budget:g} needs a calibration curve for model {model!r} "
                "and there is none: run `aw-lookahead eval calibrate --data VALIDATION "
                f"--budget {budget:g}` for it, or pass threshold=... instead"
            )
        return VetoThreshold(
            found.threshold_for(budget), "budget", found, found.domain_thresholds(budget)
        )
    if found is not None:
        return VetoThreshold(found.threshold, "calibration", found, found.domain_thresholds())
    return VetoThreshold(DEFAULT_THRESHOLD, "default")
