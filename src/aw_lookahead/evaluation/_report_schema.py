"""The fields ``eval report`` reads from a record, with their types (pydantic, strict).

A record of ours (it has ``status``) or a reference-script record converted
to ours is validated before anything is summed: a field of the wrong type
(``protocol: {"x": [1, 2]}``, a score given as text) is a one-line
:class:`~aw_lookahead.errors.TrajectoryError` naming the file, the line and
the field, never a wrong number in a table or a traceback. Fields the report
does not read are left as they are.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict

from aw_lookahead._jsonl import validate_record
from aw_lookahead.errors import TrajectoryError

from .judges.rubric import DIMENSIONS

__all__ = ["check_report_record"]

_Number = float | None


def _str_or_int(value: Any) -> Any:
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise ValueError(f"should be a string or an integer, not {type(value).__name__}")


def _flag(value: Any) -> Any:
    if isinstance(value, bool | int | float):
        return value
    raise ValueError(f"should be true/false or 0/1, not {type(value).__name__}")


# Checked by a function, not a union: a union's error names its member (``id.str``).
_Id = Annotated[Any, AfterValidator(_str_or_int)]
_Flag = Annotated[Any, AfterValidator(_flag)]


class _Verdict(BaseModel):
    """A ``judge`` entry: who judged, whether it failed, and the scores when it did not."""

    model_config = ConfigDict(extra="allow", strict=True)
    kind: str = "rubric"
    model: str | None = None
    user_template: str | None = None
    failed: _Flag = False
    total: _Number = None
    total_100: _Number = None
    format: _Number = None
    factuality: _Number = None
    consistency: _Number = None
    realism: _Number = None
    quality: _Number = None


class _Rule(BaseModel):
    """A ``rule`` entry: the rule check's verdict and its two overlap measures."""

    model_config = ConfigDict(extra="allow", strict=True)
    verdict: float
    masked_exact: float
    line_f1: float


class _ReportRecord(BaseModel):
    """One record as the report reads it."""

    model_config = ConfigDict(extra="allow", strict=True)
    id: _Id
    status: str
    domain: str = "?"
    protocol: str = "ours"
    observation: str | None = None
    judge: _Verdict | None = None
    rule: _Rule | None = None


def check_report_record(rec: dict[str, Any], *, source: str, line: int) -> None:
    """Raise a one-line TrajectoryError (file, line, field) when ``rec`` has a field of the
    wrong type for the report; a scored verdict must carry ``total`` and every dimension."""
    verdict = validate_record(_ReportRecord, rec, source, line).judge
    if verdict is None or verdict.failed or verdict.total is None:
        return
    for name in DIMENSIONS:
        if getattr(verdict, name, None) is None:
            raise TrajectoryError(
                "a scored verdict (it has 'total') needs a number for every dimension; "
                "rejudge it with `aw-lookahead eval judge`",
                source=source,
                line=line,
                field=f"judge.{name}",
            )
