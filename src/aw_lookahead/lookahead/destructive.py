"""Terminal actions judged by their effect, for the rule judge and the fail-safe.

A world model that predicts ``rm -rf data`` well predicts *nothing* (rm is
silent), so no rule on the observation can see the deletion. The effect is
read from the action instead (:mod:`.shell_effects`: the text is parsed, not
pattern-matched): :class:`~.rules.RuleJudge` flags ``destroys`` effects
``risky`` when the prediction shows no failure, and the fail-safe
(:mod:`.safety`) blocks both ``destroys`` and ``overwrites`` effects when
nothing could check the action.

Keystroke actions are judged on all the text they type, whatever keys
follow it (``rm -rf data`` + ``Enter`` + ``C-c`` is still ``rm -rf data``);
keys that edit or recall the line before running it (``Tab``, ``Up``,
``C-r``, arrows) make what runs unknowable, so such an action counts as
possibly destructive.
"""

from __future__ import annotations

from aw_lookahead.trajectory import Action

from .routing import typed_text
from .shell_effects import Effect, shell_effects

__all__ = ["action_effect", "destructive_command"]


def action_effect(action: Action) -> Effect | None:
    """The most severe effect of a terminal action (``destroys`` first), or ``None``."""
    typed = typed_text(action)
    if typed is None:
        return None
    if typed.edited_keys:
        keys = ", ".join(typed.edited_keys[:3])
        return Effect(
            "destroys",
            f"the keys {keys} edit or recall the command line before it runs, "
            "so what runs cannot be read",
        )
    effects = shell_effects(typed.text) if typed.text.strip() else ()
    return effects[0] if effects else None


def destructive_command(action: Action) -> str | None:
    """Why the terminal action destroys data when it succeeds, or ``None``."""
    effect = action_effect(action)
    return effect.reason if effect is not None and effect.severity == "destroys" else None
