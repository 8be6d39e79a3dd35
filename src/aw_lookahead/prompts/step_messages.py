"""One step's rendered chat messages: the history once, and each candidate's last turn.

Made by :func:`aw_lookahead.prompts.render.render_step`; read by the world models.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from .history import Message

__all__ = ["StepMessages"]


@dataclass(frozen=True)
class StepMessages:
    """One step's chat messages: the shared history once, and each candidate's last user turn.

    ``messages(i)`` is exactly what :func:`render_messages` gives for
    candidate ``i`` with the same ``skip_turns`` / ``brief_tools``; the
    history is rendered once for all candidates of the step. An untrimmed
    rendering (``skip_turns == 0``) also carries ``history_key``, a digest of
    the history chained turn by turn (:mod:`.history`), and its size, so
    neither costs a pass over the whole history. The message dicts are shared
    with the renderer's memo and between candidates: read-only.
    """

    history: tuple[Message, ...]
    last: tuple[Message, ...]
    skip_turns: int = 0
    brief_tools: bool = False
    history_key: str | None = None
    history_size: int | None = None

    def messages(self, index: int) -> list[Message]:
        """The full request of candidate ``index``: history plus its last turn."""
        return [*self.history, self.last[index]]

    def select(self, indices: Sequence[int]) -> StepMessages:
        """The same history with the last turns of ``indices`` only (no new rendering)."""
        return StepMessages(
            self.history,
            tuple(self.last[i] for i in indices),
            self.skip_turns,
            self.brief_tools,
            self.history_key,
            self.history_size,
        )

    @functools.cached_property
    def _history_bytes(self) -> int:
        if self.history_size is not None:
            return self.history_size
        return sum(len(m["content"].encode("utf-8")) + 8 for m in self.history)

    def size_bytes(self, index: int) -> int:
        """A cheap size estimate of candidate ``index``'s request (UTF-8 bytes + 8 per message)."""
        return self._history_bytes + len(self.last[index]["content"].encode("utf-8")) + 8
