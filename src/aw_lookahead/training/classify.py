"""Turn statistics, the seven turn classes, keep ratios and retry detection.

Each turn (action, observation) is compared with its action and with the
previous observation (the initial state for turn 1) on word tokens (``\\w+``
runs, lower-cased). The verbatim echo of the action is removed from the
observation first (each line of the action's text, once), so a shell that
prints the command line before its output does not make every turn an echo:

* ``overlap``: share of the observation's distinct tokens found in the action.
* ``novelty``: share of the observation's distinct tokens found in neither the
  action nor the previous observation.
* ``jaccard``: Jaccard similarity of the observation and the previous
  observation (1.0 when both are empty).
* ``length_ratio``: observation tokens / previous-observation tokens (the
  denominator is at least 1).
* ``carried`` (a fifth, helper statistic): share of the previous
  observation's distinct tokens that reappear in the observation.

Guarantees: every share is in ``[0, 1]``, ``length_ratio`` is finite and
``>= 0``, for any text (a hypothesis test checks it). Classification is a pure
function of the statistics, the normalised texts and the domain, and the keep
decision is a pure function of (seed, trajectory key, turn index), so reruns
and resumed runs select the same turns.

Classes, in the order the rules are tried:

==============  =======================================================  =====
class           rule                                                     keep
==============  =======================================================  =====
no_change       GUI domain (android, web, os) and the observation equals  0%
                the previous one
boilerplate     no tokens, a stock reply (``ok``, ``done``, ``success``,  10%
                ...), or the same text as the previous observation
echo            ``overlap >= 0.8`` and ``novelty <= 0.2``: repeats the     5%
                action
expansion       ``carried >= 0.8`` and ``length_ratio >= 1.5``: the        100%
                previous view, grown
transform       ``jaccard >= 0.5``: the previous view, edited              50%
retrieval       ``novelty >= 0.5`` and at least 20 tokens: new content     100%
action          anything else: the effect or reply of an action           100%
==============  =======================================================  =====
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from aw_lookahead.errors import ConfigError
from aw_lookahead.trajectory import Action, Domain, Trajectory, action_text

__all__ = [
    "BOILERPLATE_REPLIES",
    "DEFAULT_KEEP_RATIOS",
    "GUI_DOMAINS",
    "ClassifyConfig",
    "TurnClass",
    "TurnDecision",
    "TurnStats",
    "action_strings",
    "classify_trajectory",
    "classify_turn",
    "keep_draw",
    "retry_turns",
    "strip_echo",
    "turn_stats",
]

_TOKEN = re.compile(r"\w+", re.UNICODE)

BOILERPLATE_REPLIES: frozenset[str] = frozenset(
    {
        "ok",
        "okay",
        "done",
        "success",
        "successful",
        "succeeded",
        "true",
        "false",
        "null",
        "none",
        "saved",
        "updated",
        "completed",
        "ack",
        "acknowledged",
        "no output",
        "command executed successfully",
        "operation completed successfully",
    }
)

GUI_DOMAINS: frozenset[Domain] = frozenset({Domain.ANDROID, Domain.WEB, Domain.OS})


class TurnClass(StrEnum):
    """What kind of information a turn's observation carries."""

    RETRIEVAL = "retrieval"
    EXPANSION = "expansion"
    ACTION = "action"
    TRANSFORM = "transform"
    BOILERPLATE = "boilerplate"
    ECHO = "echo"
    NO_CHANGE = "no_change"


DEFAULT_KEEP_RATIOS: Mapping[TurnClass, float] = {
    TurnClass.RETRIEVAL: 1.0,
    TurnClass.EXPANSION: 1.0,
    TurnClass.ACTION: 1.0,
    TurnClass.TRANSFORM: 0.5,
    TurnClass.BOILERPLATE: 0.1,
    TurnClass.ECHO: 0.05,
    TurnClass.NO_CHANGE: 0.0,
}


@dataclass(frozen=True)
class TurnStats:
    """The statistics of one turn (see the module docstring for definitions)."""

    overlap: float
    novelty: float
    jaccard: float
    length_ratio: float
    carried: float
    n_tokens: int


@dataclass(frozen=True)
class ClassifyConfig:
    """Keep ratios per class and the knobs of the rules.

    ``keep_ratios`` overrides the defaults class by class (names or
    :class:`TurnClass`); ``skip_retries`` drops exact retries (see
    :func:`retry_turns`); ``seed`` feeds the deterministic keep draw.
    """

    keep_ratios: Mapping[TurnClass | str, float] = field(default_factory=dict)
    boilerplate_replies: frozenset[str] = BOILERPLATE_REPLIES
    skip_retries: bool = True
    seed: int = 0

    def ratio(self, cls: TurnClass) -> float:
        """The keep ratio of ``cls`` (override or default)."""
        for key, value in self.keep_ratios.items():
            if TurnClass(key) is cls:
                return float(value)
        return DEFAULT_KEEP_RATIOS[cls]

    def __post_init__(self) -> None:
        valid = ", ".join(c.value for c in TurnClass)
        for key, value in self.keep_ratios.items():
            try:
                TurnClass(key)
            except ValueError:
                raise ConfigError(f"unknown turn class {key!r}; use one of: {valid}") from None
            if not 0.0 <= float(value) <= 1.0:
                raise ConfigError(f"keep ratio for {key!r} must be in [0, 1], got {value}")

    @classmethod
    def parse_ratios(cls, specs: Sequence[str], **kwargs: object) -> ClassifyConfig:
        """Build from CLI specs like ``["echo=0.2", "transform=1"]``."""
        ratios: dict[TurnClass | str, float] = {}
        for spec in specs:
            name, sep, value = spec.partition("=")
            if not sep:
                raise ConfigError(f"keep ratio {spec!r} must look like CLASS=RATIO, e.g. echo=0.2")
            try:
                ratios[name.strip()] = float(value)
            except ValueError:
                raise ConfigError(f"keep ratio {spec!r}: {value!r} is not a number") from None
        return cls(keep_ratios=ratios, **kwargs)  # type: ignore[arg-type]


def _tokens(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(text)]


def _norm(text: str) -> str:
    return " ".join(text.split())


def turn_stats(action: str, observation: str, previous: str) -> TurnStats:
    """The statistics of one observation against its action and the previous observation."""
    obs_list = _tokens(observation)
    obs, act, prev = set(obs_list), set(_tokens(action)), set(_tokens(previous))
    n_prev = len(_tokens(previous))
    overlap = len(obs & act) / len(obs) if obs else 0.0
    novelty = len(obs - act - prev) / len(obs) if obs else 0.0
    union = obs | prev
    jaccard = len(obs & prev) / len(union) if union else 1.0
    carried = len(obs & prev) / len(prev) if prev else 0.0
    return TurnStats(
        overlap=overlap,
        novelty=novelty,
        jaccard=jaccard,
        length_ratio=len(obs_list) / max(n_prev, 1),
        carried=carried,
        n_tokens=len(obs_list),
    )


def action_strings(action: Action) -> list[str]:
    """The text leaves of an action (a string, or the string values inside JSON)."""
    if isinstance(action, str):
        return [action]
    out: list[str] = []
    values = action.values() if isinstance(action, dict) else action
    for value in values:
        if isinstance(value, str | dict | list):
            out.extend(action_strings(value))
    return out


def strip_echo(observation: str, action: Action) -> str:
    """The observation without the verbatim echo of the action (each action line once)."""
    rest = observation
    for text in action_strings(action):
        for raw in text.splitlines():
            line = raw.strip()
            if line and line in rest:
                rest = rest.replace(line, "", 1)
    return rest


def classify_turn(
    action: Action,
    observation: str,
    previous: str,
    *,
    domain: Domain | str = Domain.TERMINAL,
    config: ClassifyConfig | None = None,
) -> tuple[TurnClass, TurnStats]:
    """Place one turn in a :class:`TurnClass`; returns the class and its statistics.

    ``previous`` is the previous observation as it was returned (with its own
    echo); the statistics are those of the echo-stripped observation.
    """
    cfg = config or ClassifyConfig()
    rest = strip_echo(observation, action)
    stats = turn_stats(" ".join(action_strings(action)), rest, previous)
    same = _norm(observation) == _norm(previous)
    if Domain.parse(domain) in GUI_DOMAINS and same:
        return TurnClass.NO_CHANGE, stats
    reply = " ".join(_tokens(rest))
    if stats.n_tokens == 0 or same or reply in cfg.boilerplate_replies:
        return TurnClass.BOILERPLATE, stats
    if stats.overlap >= 0.8 and stats.novelty <= 0.2:
        return TurnClass.ECHO, stats
    if stats.carried >= 0.8 and stats.length_ratio >= 1.5:
        return TurnClass.EXPANSION, stats
    if stats.jaccard >= 0.5:
        return TurnClass.TRANSFORM, stats
    if stats.novelty >= 0.5 and stats.n_tokens >= 20:
        return TurnClass.RETRIEVAL, stats
    return TurnClass.ACTION, stats


def keep_draw(seed: int, key: str, turn_idx: int) -> float:
    """A uniform number in ``[0, 1)`` fixed by (seed, trajectory key, turn index)."""
    digest = hashlib.blake2b(f"{seed}\x00{key}\x00{turn_idx}".encode(), digest_size=8).digest()
    value = int.from_bytes(digest, "big") / 2.0**64
    return math.nextafter(1.0, 0.0) if value >= 1.0 else value


def retry_turns(trajectory: Trajectory) -> set[int]:
    """0-based indexes of exact retries: the previous turn's action, with its same observation.

    Such a turn changed nothing (the same failing command on the same state
    gives the same output), so dropping it from the sequence keeps the state
    continuous: the turn after it sees exactly the state it saw in the run.
    """
    out: set[int] = set()
    for i in range(1, len(trajectory.turns)):
        cur, prev = trajectory.turns[i], trajectory.turns[i - 1]
        if action_text(cur.action) == action_text(prev.action) and _norm(cur.observation) == _norm(
            prev.observation
        ):
            out.add(i)
    return out


@dataclass(frozen=True)
class TurnDecision:
    """The classification of one turn and whether it is a loss target.

    ``retry`` turns are dropped from the sequence altogether; other turns stay
    in the context whether or not they are ``kept`` as targets.
    """

    index: int
    turn_class: TurnClass | None
    stats: TurnStats | None
    retry: bool
    kept: bool


def classify_trajectory(
    trajectory: Trajectory, *, key: str, config: ClassifyConfig | None = None
) -> list[TurnDecision]:
    """Classify every turn of ``trajectory`` and draw its keep decision.

    ``key`` identifies the trajectory in the keep draw (its id, or file and line).
    """
    cfg = config or ClassifyConfig()
    retries = retry_turns(trajectory) if cfg.skip_retries else set()
    decisions: list[TurnDecision] = []
    previous = trajectory.initial_state or ""
    for i, turn in enumerate(trajectory.turns):
        if i in retries:
            decisions.append(TurnDecision(i, None, None, retry=True, kept=False))
            continue
        cls, stats = classify_turn(
            turn.action,
            turn.observation,
            previous,
            domain=trajectory.domain,
            config=cfg,
        )
        kept = keep_draw(cfg.seed, key, i) < cfg.ratio(cls)
        decisions.append(TurnDecision(i, cls, stats, retry=False, kept=kept))
        previous = turn.observation
    return decisions
