"""Counting history renders: every rendering path (render_step, render_messages,
history_messages) goes through ``aw_lookahead.prompts.render._history``."""

from __future__ import annotations

from typing import Any

import pytest

from aw_lookahead.prompts import render


class RenderCounter:
    """Wraps the history renderer for the test's duration and counts its calls."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        real = render._history

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(render, "_history", counted)

    def take(self) -> int:
        """The calls since the last ``take``."""
        calls, self.calls = self.calls, 0
        return calls
