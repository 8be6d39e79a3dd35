"""One agent task's shape, and the shell snippets its setups and checks are written with.

Apart from :mod:`.tasks` so that the family modules (:mod:`.families`) can build tasks
without importing the suite that gathers them.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

__all__ = ["AgentTask"]


@dataclass(frozen=True)
class AgentTask:
    """One closed-loop terminal task (see :mod:`.tasks` for what each field means)."""

    name: str
    family: str
    instruction: str
    setup: tuple[str, ...]
    check: str
    solution: tuple[str, ...]


def _put(path: str, text: str) -> str:
    """A setup command that writes ``text`` to ``path`` (its folder created)."""
    folder = path.rpartition("/")[0]
    mkdir = f"mkdir -p {shlex.quote(folder)} && " if folder else ""
    return f"{mkdir}printf '%s' {shlex.quote(text)} > {shlex.quote(path)}"


def _same(path: str, text: str) -> str:
    """A check: ``path`` holds exactly ``text`` (a missing final newline is forgiven)."""
    return (
        f"test -f {shlex.quote(path)} && diff <(printf '%s\\n' {shlex.quote(text.rstrip())}) "
        f'<(cat {shlex.quote(path)}; [ -n "$(tail -c1 {shlex.quote(path)})" ] && echo)'
    )


def _py(code: str) -> str:
    """A check (or step) written in Python."""
    return f"python3 -c {shlex.quote(code)}"
