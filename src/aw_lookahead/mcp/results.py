"""How a real MCP tool result reads as an observation: one text, shared by every recorder.

The proxy (gate, shadow), the mirror and the MCP data generator
(:mod:`aw_lookahead.datagen.mcp`) all write a ``CallToolResult`` into a
trajectory with :func:`result_text`, so the world model is trained on and
compared against the same text it sees at run time.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp.types import CallToolResult

__all__ = ["result_text"]


def result_text(result: CallToolResult) -> str:
    """The text of a ``CallToolResult`` as the world model should see it."""
    parts = [
        getattr(c, "text", None) or f"[{getattr(c, 'type', 'content')}]" for c in result.content
    ]
    text = "\n".join(parts)
    if not text and result.structured_content is not None:
        text = json.dumps(result.structured_content, ensure_ascii=False)
    return f"Error: {text}" if result.is_error and not text.lower().startswith("error") else text
