"""Dense rules over values that are placeholders already (made by an earlier rule).

A match whose value is a placeholder is kept as it is; the other values of the
same rule are still decided at once, and a rule whose every value is a
placeholder leaves the text without reading it match by match. Outputs are
compared with deciding each distinct match text (``splice_lowered``).
"""

from __future__ import annotations

import pytest

from aw_lookahead import _dense_split
from aw_lookahead.redact import Redactor

_KEY = b"dense-key-16byte"


def _per_match(text: str, monkeypatch: pytest.MonkeyPatch) -> str:
    redactor = Redactor(key=_KEY)
    monkeypatch.setattr(redactor, "_by_split", lambda *a: None)
    monkeypatch.setattr(redactor, "_by_values", lambda *a: None)
    return redactor.text(text)


def test_values_that_are_placeholders_leave_the_others_decided_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = "API_KEY=v9999999x\nDB_PASSWORD=[REDACTED_SECRET_0a1b2c] "
    text += "".join(f"password=v{i:07d}x " for i in range(3000))
    calls: list[str] = []
    one = Redactor._stand_in
    monkeypatch.setattr(Redactor, "_stand_in", lambda self, *a: calls.append("") or one(self, *a))
    out = Redactor(key=_KEY).text(text)
    assert out.startswith("API_KEY=[REDACTED_SECRET_")
    assert "v0002999x" not in out
    assert "DB_PASSWORD=[REDACTED_SECRET_0a1b2c] password=[REDACTED_SECRET_" in out
    assert len(calls) < 8  # not one call per match


@pytest.mark.parametrize(
    ("last", "kept"),
    [
        ("", True),  # every secret_field value is a placeholder of secret_assignment
        ("api_key=[Redacted_0a1b2c]\n", False),  # not a placeholder: its case differs
        ("x_API_KEY=hunter2hunter\n", False),  # after a word character: secret_field's
        ("token: hunter2hunter\n", False),  # a name only secret_field knows
    ],
)
def test_a_rule_whose_values_are_all_placeholders_keeps_the_text(
    last: str, kept: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "".join(f"API_KEY=v{i:07d}x\n" for i in range(3000)) + last
    told: list[bool] = []
    all_kept = _dense_split._all_kept
    monkeypatch.setattr(_dense_split, "_all_kept", lambda *a: told.append(all_kept(*a)) or told[-1])
    out = Redactor(key=_KEY).text(text)
    assert told[-1] is kept
    assert out == _per_match(text, monkeypatch)
    assert "v0002999x" not in out
    assert "hunter2hunter" not in out
    assert "[Redacted_0a1b2c" not in out


@pytest.mark.parametrize(
    "marked", [(0,), (1, 2, 2999), (5, 5, 1500, 2998), tuple(range(0, 3000, 40))]
)
def test_placeholder_values_among_distinct_ones_keep_their_places(
    marked: tuple[int, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Values that are placeholders (at the start, between, at the end, the same one twice,
    or more than are looked up by place) are kept where they are; the distinct others
    get keyed placeholders up to the cap and the shared one past it, as match by match."""
    units = [f"password=v{i:07d}x " for i in range(3000)]
    for at in marked:
        units[at] = f"password=[REDACTED_SECRET_{at % 7:06x}] "
    text = "".join(units)
    out = Redactor(key=_KEY).text(text)
    assert out == _per_match(text, monkeypatch)
    assert out.count("[REDACTED_SECRET_000000]") == sum(at % 7 == 0 for at in marked)
