"""Rule signals read from a predicted observation, and :class:`RuleJudge` that combines them.

Each rule family looks for text the real environment prints when an action
fails, does nothing, or destroys something. Every :class:`Signal` names the
matched text (the whole line it sits on, at most 200 characters), so a veto
can show its evidence. The patterns themselves (and each domain's default
families) live in :mod:`._rule_patterns`; this module applies them.

Families and the domains they apply to by default:

=========  ==========================================  =========================
family     what it reads                               domains
=========  ==========================================  =========================
shell      command not found, missing file, permission  terminal, swe, os
           denied, non-zero exit, tracebacks, syntax
           errors, git ``fatal:``
swe        pytest / unittest failures, patch rejects   swe, terminal
mcp        ``isError``, JSON-RPC error objects, HTTP    mcp, search, web
           4xx/5xx status or body; plain-text tool
           errors (``ENOENT: ...``, ``Error executing
           tool ...``, ``Access denied ...``)
search     no results                                  search
gui        element not found; tree unchanged (no-op)   android, web, os
risk       deleted / overwritten data, killed          all
           processes, force pushes, dropped tables
=========  ==========================================  =========================
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable

from aw_lookahead.trajectory import Action, Domain, Trajectory
from aw_lookahead.worldmodel.base import Prediction

from ._argument_check import refuted_argument_error
from ._json_signals import json_payload as _json_payload
from ._json_signals import json_signals as _json_signals
from ._rule_patterns import DOMAIN_FAMILIES as _DOMAIN_FAMILIES
from ._rule_patterns import FAMILIES
from .destructive import destructive_command
from .routing import terminal_command_text
from .shell_parse import program_names
from .tool_effects import tool_call, tool_definition, tool_risk
from .types import SEVERITY, Outcome, Signal, Verdict

__all__ = ["FAMILIES", "RuleJudge", "rule_signals", "verdict_from_signals"]

F, N = Outcome.FAILURE, Outcome.NO_OP
_GUI_DOMAINS = frozenset({Domain.ANDROID, Domain.WEB, Domain.OS})


def _line_of(text: str, start: int, end: int) -> str:
    left = text.rfind("\n", 0, start) + 1
    right = text.find("\n", end)
    line = text[left : right if right != -1 else len(text)].strip()
    return line[:200]


_SHELL_DOMAINS = frozenset({Domain.TERMINAL, Domain.SWE, Domain.OS})


def _normalise(text: str) -> str:
    return " ".join(text.split())


@functools.lru_cache(maxsize=256)
def _program_error_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(n) for n in names)
    return re.compile(
        rf"^(?:-?[a-z]*sh: (?:line \d+: )?)?(?:{alternatives}): "
        r"(?!.*\b(?:warning|Removing leading)\b)",
        re.MULTILINE | re.IGNORECASE,
    )


def _program_error(action: Action, observation: str) -> Signal | None:
    """A line in the ``prog: message`` form of a program the action runs: its error report
    (``sed: -e expression #1, char 9: unterminated `s' command``); warnings excepted."""
    text = terminal_command_text(action)
    names = program_names(text) if text and ": " in observation else frozenset()
    if not names:
        return None
    m = _program_error_pattern(tuple(sorted(names))).search(observation)
    if m is None:
        return None
    return Signal(
        source="rule",
        name="shell.program_error",
        outcome=F,
        matched=_line_of(observation, m.start(), m.end()),
        detail="the program reported an error",
    )


def rule_signals(
    trajectory: Trajectory,
    action: Action,
    observation: str,
    *,
    families: Iterable[str] | None = None,
) -> list[Signal]:
    """All rule signals for ``observation`` (one per rule, first match)."""
    names = tuple(families) if families is not None else _DOMAIN_FAMILIES[trajectory.domain]
    signals: list[Signal] = []
    for family in names:
        for rule in FAMILIES[family]:
            m = rule.pattern.search(observation)
            if m:
                signals.append(
                    Signal(
                        source="rule",
                        name=rule.name,
                        outcome=rule.outcome,
                        matched=_line_of(observation, m.start(), m.end()),
                        detail=rule.detail,
                    )
                )
    if "shell" in names and not any(s.outcome is F for s in signals):
        signal = _program_error(action, observation)
        if signal is not None:
            signals.append(signal)
    if "mcp" in names:
        signals.extend(_json_signals(_json_payload(observation)))
    if "gui" in names and trajectory.domain in _GUI_DOMAINS and trajectory.turns:
        before = trajectory.turns[-1].observation
        if before.strip() and _normalise(before) == _normalise(observation):
            signals.append(
                Signal(
                    source="rule",
                    name="gui.unchanged",
                    outcome=N,
                    matched=_line_of(observation, 0, 0),
                    detail="the screen is predicted unchanged by the action",
                )
            )
    if "search" in names:
        payload = _json_payload(observation)
        if isinstance(payload, dict):
            for key in ("results", "items", "hits", "documents", "organic_results"):
                if payload.get(key) == []:
                    signals.append(
                        Signal(
                            source="rule",
                            name="search.no_results",
                            outcome=N,
                            matched=json.dumps({key: []}),
                            detail="nothing found",
                        )
                    )
                    break
    if trajectory.domain is Domain.SEARCH and not observation.strip():
        signals.append(
            Signal(
                source="rule",
                name="search.empty",
                outcome=N,
                matched="",
                detail="the search returns nothing",
            )
        )
    return signals


def verdict_from_signals(signals: list[Signal]) -> Verdict:
    """The rule judge's verdict: the most severe signal's outcome (``unknown`` without any:
    rules cannot prove success), the reasons of the most severe ones."""
    if not signals:
        return Verdict(outcome=Outcome.UNKNOWN, reason="no rule matched")
    worst = max(signals, key=lambda s: SEVERITY[s.outcome])
    bad = [s for s in signals if s.outcome is worst.outcome]
    reason = "; ".join(f"{s.detail} ({s.name})" for s in bad[:3])
    return Verdict(outcome=worst.outcome, reason=reason, signals=signals)


class RuleJudge:
    """Judges a prediction by the rule signals it contains.

    The outcome is the most severe signal's; with no signal it is ``unknown``
    (rules cannot prove success). ``families`` overrides the per-domain
    choice of rule families. ``destructive_actions`` (on by default) also
    flags actions that destroy data when they succeed, since their success
    is silent: terminal commands by their effect (:mod:`.destructive`) and
    tool calls without annotations whose name, description or arguments
    say they destroy (:mod:`.tool_effects`). A prediction that a tool
    call's arguments are invalid, when they match the tool's input schema,
    is set aside (:mod:`._argument_check`). Never calls a model; never
    raises on odd text.
    """

    def __init__(
        self, *, families: Iterable[str] | None = None, destructive_actions: bool = True
    ) -> None:
        if families is not None:
            families = tuple(families)
            unknown = [f for f in families if f not in FAMILIES]
            if unknown:
                from aw_lookahead.errors import ConfigError

                raise ConfigError(
                    f"unknown rule families {unknown}; choose from {sorted(FAMILIES)}"
                )
        self.families: tuple[str, ...] | None = families
        self.destructive_actions = destructive_actions

    async def judge(
        self,
        trajectory: Trajectory,
        action: Action,
        prediction: Prediction,
        *,
        task: str | None = None,
    ) -> Verdict:
        signals = rule_signals(trajectory, action, prediction.observation, families=self.families)
        refuted = refuted_argument_error(trajectory, action, prediction.observation)
        if refuted is not None:
            signals = [s for s in signals if s.outcome is not Outcome.FAILURE] + [refuted]
        hazard = self._action_signal(trajectory, action) if self.destructive_actions else None
        if hazard is not None and not any(
            s.outcome in (Outcome.FAILURE, Outcome.RISKY) for s in signals
        ):
            signals.append(hazard)
        return verdict_from_signals(signals)

    @staticmethod
    def _action_signal(trajectory: Trajectory, action: Action) -> Signal | None:
        """The action's own destroying effect: terminal text, or a tool call whose name,
        description or arguments say it destroys (unless its annotations say otherwise)."""
        call = tool_call(trajectory, action)
        if call is not None:
            name, arguments = call
            tool = tool_definition(trajectory, name)
            risk = tool_risk(tool, name, arguments)
            if risk.kind != "destroys" or not risk.inferred:
                return None
            return Signal(  # read from the action, not the prediction (see .evidence)
                source="action",
                name="risk.destructive_tool",
                outcome=Outcome.RISKY,
                matched=name,
                detail=f"{risk.reason}, and it is predicted to succeed",
            )
        if trajectory.domain not in _SHELL_DOMAINS:
            return None
        why = destructive_command(action, trajectory)
        if why is None:
            return None
        return Signal(
            source="rule",
            name="risk.destructive_command",
            outcome=Outcome.RISKY,
            matched=(terminal_command_text(action) or "")[:200],
            detail=f"{why}, and it is predicted to succeed",
        )
