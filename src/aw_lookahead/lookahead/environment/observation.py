"""What a look at the environment found: facts, the folders seen, and what decides.

An :class:`Observation` is data (JSON in decisions, stream events and MCP
results). Two renderings: :meth:`Observation.explanation` for an agent whose
action was vetoed (what is missing, where it looked, the nearest existing
names), and :meth:`Observation.state_text` for the world model, which then
simulates from the observed state instead of guessing it. Both are redacted
(:func:`aw_lookahead.redact.redact_text`) before they leave the observation.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from aw_lookahead.redact import redact_text

__all__ = ["Fact", "FactKind", "Observation"]

FactKind = Literal[
    "program", "path", "parent", "absent", "fresh", "option", "repo", "ref", "target", "tool"
]

_SHOWN_ENTRIES = 30


class Fact(BaseModel):
    """One thing looked at: ``subject`` as the action wrote it, whether it was ``found``.

    ``where`` is where it was looked for (a folder relative to the root, ``PATH``,
    a makefile, a repository); ``detail`` what was seen (``file, 120 bytes``,
    ``/usr/bin/grep``); ``similar`` the nearest existing names when it was not found.
    For ``absent`` (``mkdir`` without ``-p``) and ``fresh`` (a path written onto),
    ``found`` means it already exists.
    """

    model_config = ConfigDict(extra="forbid")

    kind: FactKind
    subject: str
    found: bool
    where: str = ""
    detail: str = ""
    role: str = ""
    similar: list[str] = Field(default_factory=list)

    def line(self) -> str:
        """One line for the world model."""
        if self.kind == "program":
            return f"program `{self.subject}`: " + (
                self.detail or "found" if self.found else "not found on PATH"
            )
        if self.kind == "absent":
            state = "already exists" if self.found else "does not exist yet"
            return f"`{self.subject}`: {state}"
        if self.kind == "fresh":
            state = "exists, so it is overwritten" if self.found else "does not exist yet"
            return f"`{self.subject}` ({self.role}): {state}"
        if self.kind in ("ref", "target", "repo", "tool"):
            return f"{self.kind} `{self.subject}` ({self.where}): " + (
                "found" if self.found else self.detail or "not found"
            )
        what = f"`{self.subject}`" if self.kind == "path" else f"folder for `{self.subject}`"
        if self.found:
            return f"{what}: {self.detail or 'exists'}"
        hint = f" (similar: {', '.join(self.similar)})" if self.similar else ""
        return f"{what}: does not exist in {self.where or './'}{hint}"


class Observation(BaseModel):
    """What the environment showed for one action, read-only, before it ran.

    ``missing`` is the first need observed unmet while nothing earlier in the
    action could have met it: the action cannot succeed as written. ``complete``
    is false when the look stopped early (its time bound, a path outside the
    root, a form not read): what was not looked at is unknown, never missing.
    """

    model_config = ConfigDict(extra="forbid")

    facts: list[Fact] = Field(default_factory=list)
    listings: dict[str, list[str]] = Field(default_factory=dict)
    cwd: str = "."
    missing: Fact | None = None
    complete: bool = True
    seconds: float = 0.0

    @property
    def empty(self) -> bool:
        """Nothing was seen that the world model could use."""
        return not self.facts and not self.listings

    def absent_targets(self) -> frozenset[str]:
        """Paths written onto (as the action spells them) that every look saw absent: writing
        them creates a file and loses nothing."""
        fresh = [f for f in self.facts if f.kind == "fresh"]
        present = {f.subject for f in fresh if f.found}
        return frozenset(f.subject for f in fresh if f.subject not in present)

    def explanation(self) -> str:
        """Why the action cannot succeed, for the agent: what, where, and did-you-mean."""
        fact = self.missing
        if fact is None:
            return ""
        text = _missing_text(fact)
        if fact.similar:
            text += "; did you mean " + " or ".join(f"`{s}`" for s in fact.similar[:3]) + "?"
        return redact_text(text)

    def state_text(self) -> str:
        """The observed state, compact, for the world model's request (``""`` when empty)."""
        if self.empty:
            return ""
        lines = [f"Observed read-only just before this action (working directory {self.cwd}):"]
        for folder, entries in self.listings.items():
            shown = ", ".join(entries[:_SHOWN_ENTRIES]) or "(empty)"
            more = f" ... ({len(entries)} entries)" if len(entries) > _SHOWN_ENTRIES else ""
            lines.append(f"{folder}: {shown}{more}")
        lines.extend(f.line() for f in self.facts)
        return redact_text("\n".join(lines))


def _missing_text(fact: Fact) -> str:
    where = fact.where or "./"
    role = f" ({fact.role})" if fact.role else ""
    if fact.kind == "program":
        why = f": {fact.detail}" if fact.detail else ""
        return f"`{fact.subject}` is not a program here: nothing of that name on PATH{why}"
    if fact.kind == "absent":
        return f"`{fact.subject}` already exists in {where}{role}: {fact.detail}"
    if fact.kind == "parent":
        return f"the folder that `{fact.subject}` goes into does not exist: {fact.detail}{role}"
    if fact.kind == "option":
        return f"`{fact.role}` has no option `{fact.subject}` ({fact.detail}; read from {where})"
    if fact.kind == "ref":
        return f"`{fact.subject}` is not a branch, tag or remote branch of {where} ({fact.detail})"
    if fact.kind == "target":
        if not fact.subject:
            return f"there is no makefile in {where}, so `make` fails"
        return f"make has no rule for `{fact.subject}` in {where} ({fact.detail})"
    if fact.kind == "tool":
        return f"{fact.detail or f'`{fact.subject}` was not found'} (looked in {where})"
    if fact.detail:
        return f"`{fact.subject}` {fact.detail} (looked in {where}){role}"
    return f"`{fact.subject}` does not exist in {where}{role}"
