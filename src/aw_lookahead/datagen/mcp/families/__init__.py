"""The MCP task families, one module per real server: ``fs``, ``git`` and ``memory``.

Each module plans calls against a fresh workspace it builds itself (see
:mod:`aw_lookahead.datagen.mcp.session` for the shared pieces).
"""
