"""A rule judge for MCP tool results rendered as text (how the proxy records them).

The engine's generic MCP rules read JSON results (``isError``, error
objects, HTTP statuses). Through the proxy, results are text, and a failed
call reads ``Error: ...`` (how the SDKs and most servers phrase ``isError``
results, e.g. ``Error: ENOENT: no such file or directory``). This judge
flags those, so a prediction of such an error vetoes the call.
"""

from __future__ import annotations

import re

from aw_lookahead.lookahead.types import Outcome, Signal, Verdict
from aw_lookahead.trajectory import Action, Trajectory
from aw_lookahead.worldmodel.base import Prediction

__all__ = ["MCPTextJudge"]

_ERROR = re.compile(
    r"\A\s*(?:\[?error\]?\s*[:\]]|error executing tool|tool execution failed|"
    r"access denied\b|permission denied\b|\w*(?:Error|Exception):)"
    r"|\b(?:ENOENT|EACCES|EPERM|EEXIST|ENOTDIR|EISDIR|ENOTEMPTY)\b"
    r"|\"isError\"\s*:\s*true",
    re.IGNORECASE,
)


class MCPTextJudge:
    """Failure when the predicted result text is an MCP error; otherwise no opinion."""

    async def judge(
        self,
        trajectory: Trajectory,
        action: Action,
        prediction: Prediction,
        *,
        task: str | None = None,
    ) -> Verdict:
        match = _ERROR.search(prediction.observation)
        if match is None:
            return Verdict(outcome=Outcome.UNKNOWN, reason="no MCP error in the predicted text")
        line = prediction.observation[match.start() :].split("\n", 1)[0].strip()[:200]
        signal = Signal(
            source="rule",
            name="mcp.error_text",
            outcome=Outcome.FAILURE,
            matched=line,
            detail="the predicted result is an error",
        )
        return Verdict(
            outcome=Outcome.FAILURE, reason="the tool is predicted to fail", signals=[signal]
        )
