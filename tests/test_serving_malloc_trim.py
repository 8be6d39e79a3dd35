"""The heap-trimming vLLM plugin: off unless its environment asks; one thread per process."""

from __future__ import annotations

import threading
from importlib.metadata import entry_points

import pytest

from aw_lookahead.serving import _malloc_trim as trim
from aw_lookahead.serving.embedded_server import EMBEDDED_SERVER_ENV


def _trimmers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == trim.THREAD_NAME]


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.setattr(trim, "_started_in", set())
    return monkeypatch


@pytest.mark.parametrize("value", [None, "", "0", "-5", "soon"])
def test_without_a_positive_period_nothing_starts(
    fresh: pytest.MonkeyPatch, value: str | None
) -> None:
    if value is None:
        fresh.delenv(trim.PERIOD_ENV, raising=False)
    else:
        fresh.setenv(trim.PERIOD_ENV, value)
    before = len(_trimmers())
    trim.register()
    assert len(_trimmers()) == before
    assert trim._started_in == set()


def test_a_period_starts_one_thread_per_process(fresh: pytest.MonkeyPatch) -> None:
    fresh.setenv(trim.PERIOD_ENV, "3600")
    before = len(_trimmers())
    trim.register()
    trim.register()
    assert len(_trimmers()) == before + 1
    assert all(t.daemon for t in _trimmers())


def test_vllm_finds_the_plugin_and_the_embedded_server_asks_for_it() -> None:
    found = {ep.name: ep.value for ep in entry_points(group="vllm.general_plugins")}
    assert found.get("aw_lookahead_malloc_trim") == "aw_lookahead.serving._malloc_trim:register"
    assert float(EMBEDDED_SERVER_ENV[trim.PERIOD_ENV]) > 0
