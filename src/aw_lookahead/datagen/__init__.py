"""Training data recorded from real environments (terminal sandbox, real MCP servers).

Every generator here writes trajectories whose observations came from really
running the actions; nothing is typed by hand. Tasks come from template
*families*; a dataset is split train/validation/test **by family**
(:func:`split_families`), so a test family is never trained on, and
:func:`write_split` lays the three files plus a manifest into one folder.
"""

from __future__ import annotations

from ._split import SPLITS, DatasetManifest, split_families, write_split

__all__ = ["SPLITS", "DatasetManifest", "split_families", "write_split"]
