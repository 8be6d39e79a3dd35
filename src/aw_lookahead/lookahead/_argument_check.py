"""A predicted "invalid arguments" error, checked against the tool's input schema.

A small world model often predicts the error a server gives for malformed
calls (``Invalid input for tool 'write_file'``, ``Input validation error``,
``missing required argument``) for calls that are well formed: measured on
the real filesystem server with the embedded model, 7 of 10 legitimate
writes and edits were blocked on such a prediction. Whether a call's
arguments match the schema the tool publishes is not a guess: the gate can
check it. When the schema is known, usable, and the arguments match it, the
prediction's only claim is false, so its failure signals are replaced by one
``mcp.arguments_valid`` signal of outcome ``unknown``: the action is judged
as if the model had not spoken (the destructive rules still apply to it),
and where it runs it is marked uncertain and counted as such.

What is guaranteed: nothing is refuted without a schema the arguments were
validated against (no ``jsonschema``, no schema, an unusable schema, or
arguments that do not match leave the prediction as it is), and only a
prediction whose first line claims invalid arguments is read so. A server
that rejects arguments its own schema allows (a semantic check the schema
does not state) is then not predicted to; that call fails at the server,
as it would have without lookahead.
"""

from __future__ import annotations

import re

from aw_lookahead._extras import matches_schema
from aw_lookahead.trajectory import Action, Trajectory

from .tool_effects import input_schema, tool_call, tool_definition
from .types import Outcome, Signal

__all__ = ["SET_ASIDE", "refuted_argument_error"]

#: the signal that sets a refuted prediction aside; the decision runs marked uncertain
SET_ASIDE = "mcp.arguments_valid"

_INVALID_ARGUMENTS = re.compile(
    r"\binvalid (?:input|arguments?|params|parameters)\b|\binput validation error\b"
    r"|\bmissing required (?:argument|parameter|property|field)s?\b"
    r"|\bis a required property\b|\brequired (?:argument|parameter|property) missing\b",
    re.IGNORECASE,
)


def refuted_argument_error(
    trajectory: Trajectory, action: Action, observation: str
) -> Signal | None:
    """The ``mcp.arguments_valid`` signal when ``observation`` says the call's arguments are
    invalid and they match the tool's input schema; ``None`` otherwise."""
    call = tool_call(trajectory, action)
    if call is None:
        return None
    first = observation.lstrip().split("\n", 1)[0][:300]
    if not _INVALID_ARGUMENTS.search(first):
        return None
    name, arguments = call
    tool = tool_definition(trajectory, name)
    if tool is None or not matches_schema(dict(arguments), input_schema(tool)):
        return None
    return Signal(
        source="rule",
        name=SET_ASIDE,
        outcome=Outcome.UNKNOWN,
        matched=first[:200],
        detail=(
            f"the prediction says the arguments are invalid, but they match {name}'s "
            "input schema, so that prediction is set aside"
        ),
    )
