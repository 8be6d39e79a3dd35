"""Terminal actions judged by their effect, for the rule judge and the fail-safe.

A world model that predicts ``rm -rf data`` well predicts *nothing* (rm is
silent), so no rule on the observation can see the deletion. The effect is
read from the action instead (:mod:`.shell_effects`: the text is parsed, not
pattern-matched): :class:`~.rules.RuleJudge` flags ``destroys`` effects
``risky`` when the prediction shows no failure, and the fail-safe
(:mod:`.safety`) blocks both ``destroys`` and ``overwrites`` effects when
nothing could check the action.

Keystroke actions are judged as bash's readline reads them
(:func:`~.routing.typed_text`): editing keys (``C-a``, ``C-d``, ``C-u``,
``C-w``, ESC sequences, raw control bytes) and history expansion (``!!``,
``^a^b``, ``fc -s``, ``Up``) are applied to the line against the earlier
actions of the trajectory, a line left unfinished is judged with the action
that ends it, and a line abandoned with ``C-c`` is judged too. Keys whose
result this reader cannot see (``Tab``, ``C-r``, history older than the
trajectory) make what runs unknowable, so such an action counts as possibly
destructive.
"""

from __future__ import annotations

from aw_lookahead.trajectory import Action, Trajectory

from .routing import typed_text
from .shell_effects import Effect, shell_effects

__all__ = ["action_effect", "action_effects", "destructive_command"]


def action_effects(action: Action, trajectory: Trajectory | None = None) -> list[Effect]:
    """Every effect of a terminal action, ``destroys`` first (``[]`` for none or no text).

    ``trajectory``: what ran before (the history keys recall, the line they continue).
    """
    typed = typed_text(action, trajectory if trajectory is not None else ())
    if typed is None:
        return []
    if typed.edited_keys:
        keys = ", ".join(typed.edited_keys[:3])
        return [
            Effect(
                "destroys",
                f"the keys {keys} edit or recall the command line before it runs, "
                "so what runs cannot be read",
            )
        ]
    effects = [e for text in typed.variants if text.strip() for e in shell_effects(text)]
    effects.sort(key=lambda e: e.severity != "destroys")
    return effects


def action_effect(action: Action, trajectory: Trajectory | None = None) -> Effect | None:
    """The most severe effect of a terminal action (``destroys`` first), or ``None``."""
    effects = action_effects(action, trajectory)
    return effects[0] if effects else None


def destructive_command(action: Action, trajectory: Trajectory | None = None) -> str | None:
    """Why the terminal action destroys data when it succeeds, or ``None``."""
    effect = action_effect(action, trajectory)
    return effect.reason if effect is not None and effect.severity == "destroys" else None
