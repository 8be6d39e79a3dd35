"""Dense rules over values that are placeholders already (made by an earlier rule).

A match whose value is a placeholder is kept as it is; the other values of the
same rule are still replaced, and a value that only looks like a placeholder
(another case) is not taken for one.
"""

from __future__ import annotations

import pytest

from aw_lookahead.redact import Redactor

_KEY = b"dense-key-16byte"


def test_values_that_are_placeholders_leave_the_others_replaced() -> None:
    text = "API_KEY=v9999999x\nDB_PASSWORD=[REDACTED_SECRET_0a1b2c] "
    text += "".join(f"password=v{i:07d}x " for i in range(3000))
    out = Redactor(key=_KEY).text(text)
    assert out.startswith("API_KEY=[REDACTED_SECRET_")
    assert "v0002999x" not in out
    assert "DB_PASSWORD=[REDACTED_SECRET_0a1b2c] password=[REDACTED_SECRET_" in out


@pytest.mark.parametrize(
    "last",
    [
        "",  # every secret_field value is a placeholder of secret_assignment
        "api_key=[Redacted_0a1b2c]\n",  # not a placeholder: its case differs
        "x_API_KEY=hunter2hunter\n",  # after a word character: secret_field's
        "token: hunter2hunter\n",  # a name only secret_field knows
    ],
)
def test_a_rule_whose_values_are_all_placeholders_keeps_them(last: str) -> None:
    text = "".join(f"API_KEY=v{i:07d}x\n" for i in range(3000)) + last
    out = Redactor(key=_KEY).text(text)
    assert "v0002999x" not in out
    assert "hunter2hunter" not in out
    assert "[Redacted_0a1b2c" not in out
    assert out.count("[REDACTED_SECRET_") == 3000 + bool(last)


@pytest.mark.parametrize(
    "marked", [(0,), (1, 2, 2999), (5, 5, 1500, 2998), tuple(range(0, 3000, 40))]
)
def test_placeholder_values_among_distinct_ones_keep_their_places(
    marked: tuple[int, ...],
) -> None:
    """Values that are placeholders (at the start, between, at the end, the same one twice)
    are kept where they are; the distinct others get keyed placeholders up to the cap
    and the shared one past it."""
    units = [f"password=v{i:07d}x " for i in range(3000)]
    for at in marked:
        units[at] = f"password=[REDACTED_SECRET_{at % 7:06x}] "
    redactor = Redactor(key=_KEY)
    out = redactor.text("".join(units))
    assert out.count("[REDACTED_SECRET_000000]") == sum(at % 7 == 0 for at in marked)
    for at in marked:
        assert out.split(" ")[at] == f"password=[REDACTED_SECRET_{at % 7:06x}]"
    assert "v0000001x" not in out
    assert redactor.over_cap == 3000 - len(set(marked)) - 1024
