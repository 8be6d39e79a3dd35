"""Training data recorded from real environments (terminal sandbox, real MCP servers).

Every generator here writes trajectories whose observations came from really
running the actions; nothing is typed by hand. Tasks come from template
*families*; a dataset is split train/validation/test **by family**
(:func:`split_families`), so a test family is never trained on, and
:func:`write_split` lays the three files plus a manifest into one folder.

Rooms: ``terminal/`` (task families run in bash sandboxes), ``mcp/`` (task
families run against real MCP servers), ``split`` (the family split and the
dataset layout), ``recording`` (AgentWorldBench samples from a user's own
record script, ``aw-lookahead record terminal``).
"""

from __future__ import annotations

from .recording import parse_record_script, record_script
from .split import SPLITS, DatasetManifest, split_families, write_split

__all__ = [
    "SPLITS",
    "DatasetManifest",
    "parse_record_script",
    "record_script",
    "split_families",
    "write_split",
]
