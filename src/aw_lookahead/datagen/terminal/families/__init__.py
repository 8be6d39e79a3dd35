"""The terminal task families, one module per theme.

Importing this package registers every family, always in the same order.
Each module holds ``@family``-decorated templates (see
:mod:`aw_lookahead.datagen.terminal.spec`): ``files`` (files, permissions,
archives), ``text`` (text tools, pipes, redirections), ``shell`` (shell state,
mistakes, Python one-liners, scripts) and ``dev`` (git, make, unittest).
"""

from __future__ import annotations

from . import dev, files, shell, text

__all__ = ["dev", "files", "shell", "text"]
