"""The agent task suite's families, grouped by what the agent works on.

:mod:`.reports` reads data files and writes a summary, :mod:`.configs` edits
configuration and text in place, :mod:`.files` archives, moves and scripts files.
:mod:`..tasks` gathers them into the suite in a fixed order.
"""
