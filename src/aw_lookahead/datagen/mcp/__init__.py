"""MCP training data recorded from real MCP servers over real stdio sessions.

``session`` holds what every family shares (a planned call, a family, a live
server session), ``content`` the randomised workspace contents, ``servers``
where the real servers come from, ``families/`` one module per server, and
``generator`` drives them and writes the split dataset (see its docstring for
the guarantees): :func:`generate_mcp` (async) and :func:`generate_mcp_sync`
(blocking).
"""

from __future__ import annotations

from .generator import (
    MCP_FAMILIES,
    MCP_SERVERS,
    families_for,
    generate_mcp,
    generate_mcp_sync,
    record_mcp,
)

__all__ = [
    "MCP_FAMILIES",
    "MCP_SERVERS",
    "families_for",
    "generate_mcp",
    "generate_mcp_sync",
    "record_mcp",
]
