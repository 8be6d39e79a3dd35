"""Reading untrusted text files: JSONL lines and UTF-8 text, every failure a one-line error.

Whatever a user points us at (a trajectory file, a result file edited by
hand, a prompt or script file) may be binary, invalid UTF-8, JSON nested
100,000 deep or hold a 5,000-digit number. These helpers turn each of those
into a :class:`~aw_lookahead.errors.UsageError` (``TrajectoryError`` for
JSONL) that names the file and line, never a traceback.

A line longer than :func:`max_line_bytes` (8 MiB unless
``$AW_LOOKAHEAD_MAX_LINE_MIB`` says otherwise) is refused after reading at
most that many bytes of it, so a 50 MB line costs neither the time nor the
memory of parsing it. A UTF-8 byte-order mark before the first line is
skipped (editors on Windows write one).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, TypeVar

from pydantic import BaseModel, ValidationError

from .errors import ConfigError, TrajectoryError, UsageError

__all__ = [
    "DEFAULT_MAX_LINE_MIB",
    "MAX_JSON_DEPTH",
    "MAX_LINE_ENV",
    "decode_jsonl_line",
    "input_lines",
    "jsonl_files",
    "max_line_bytes",
    "open_input",
    "read_text_file",
    "validate_record",
]

ModelT = TypeVar("ModelT", bound=BaseModel)

MAX_JSON_DEPTH = 100
"""Deepest nesting of arrays / objects a JSONL record may have (real records stay far below)."""

DEFAULT_MAX_LINE_MIB = 8
"""Longest JSONL line read by default, in MiB."""

MAX_LINE_ENV = "AW_LOOKAHEAD_MAX_LINE_MIB"
"""Environment variable that raises (or lowers) the line limit, in MiB."""

_BOM = b"\xef\xbb\xbf"


def max_line_bytes() -> int:
    """The longest JSONL line any reader accepts, in bytes: ``$AW_LOOKAHEAD_MAX_LINE_MIB`` or 8 MiB.

    A value that is not a positive number is a one-line ConfigError.
    """
    raw = os.environ.get(MAX_LINE_ENV)
    if raw is None or not raw.strip():
        return DEFAULT_MAX_LINE_MIB << 20
    try:
        mib = float(raw)
    except ValueError:
        mib = 0.0
    if not mib > 0 or mib == float("inf"):
        raise ConfigError(f"{MAX_LINE_ENV}={raw!r} is not a positive number of MiB, e.g. 64")
    return max(1, min(int(mib * (1 << 20)), 1 << 62))


def _mib(n: int) -> str:
    return f"{n / (1 << 20):g} MiB"


def _check_json_value(value: Any) -> str | None:
    """Why ``value`` is unusable (too deep, a lone surrogate), or None; iterative, no recursion."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return "a string holds a lone UTF-16 surrogate (\\ud800-\\udfff escape)"
        elif isinstance(item, dict | list):
            if depth >= MAX_JSON_DEPTH:
                return f"nested deeper than {MAX_JSON_DEPTH} levels"
            children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
            stack.extend((c, depth + 1) for c in children)
    return None


def decode_jsonl_line(raw: bytes | str, *, source: str, line: int | None = None) -> Any:
    """Parse one JSONL line; every way it can be unusable is a one-line error naming file and line.

    Invalid UTF-8, bad JSON, nesting past :data:`MAX_JSON_DEPTH` (or past
    Python's recursion limit), integers longer than Python converts (4,300
    digits) and lone surrogates all raise :class:`~aw_lookahead.errors.TrajectoryError`.
    """
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TrajectoryError(
                f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at byte {exc.start + 1}); "
                "JSONL files must be UTF-8",
                source=source,
                line=line,
            ) from None
    else:
        text = raw
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        hint = "; each line must hold one JSON object" if line is not None else ""
        raise TrajectoryError(
            f"not valid JSON ({exc.msg} at column {exc.colno}){hint}", source=source, line=line
        ) from None
    except RecursionError:
        raise TrajectoryError(
            f"nested deeper than {MAX_JSON_DEPTH} levels", source=source, line=line
        ) from None
    except ValueError as exc:  # an integer longer than sys.get_int_max_str_digits()
        detail = str(exc).split(";", 1)[0]
        raise TrajectoryError(
            f"unusable JSON number ({detail}); write such values as strings",
            source=source,
            line=line,
        ) from None
    problem = _check_json_value(obj)
    if problem is not None:
        raise TrajectoryError(problem, source=source, line=line)
    return obj


def open_input(path: str | Path, *, what: str = "file") -> IO[bytes]:
    """``path`` opened for reading, when it is a regular file; otherwise a one-line UsageError.

    A FIFO, device or socket would block or never end, so it is refused before the
    first read (it is opened non-blocking, so even a FIFO without a writer returns).
    """
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise UsageError(f"cannot read the {what} {p}: {exc.strerror}") from exc
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file (a pipe or device)"
            raise UsageError(f"cannot read the {what} {p}: it is {kind}; give a file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def input_lines(
    fh: IO[bytes], path: str | Path, *, what: str = "file", max_bytes: int | None = None
) -> Iterator[bytes]:
    """The lines of ``fh``, a leading UTF-8 BOM dropped; bad lines are one-line errors.

    An I/O error while reading is a UsageError naming the line. A line longer
    than ``max_bytes`` (default :func:`max_line_bytes`) is a TrajectoryError
    naming the file, the line and the limit, raised after reading at most
    ``max_bytes + 1`` bytes of that line: memory stays bounded by the limit.
    """
    limit = max_line_bytes() if max_bytes is None else max_bytes
    lineno = 0
    while True:
        try:
            raw = fh.readline(limit + 1)
        except OSError as exc:
            raise UsageError(
                f"cannot read the {what} {path} after line {lineno}: {exc.strerror}"
            ) from exc
        if not raw:
            return
        lineno += 1
        if len(raw) > limit and not raw.endswith(b"\n"):
            raise TrajectoryError(
                f"the line is longer than {_mib(limit)} ({limit} bytes), the limit on one "
                f"record; split it, or raise the limit with {MAX_LINE_ENV}=<MiB>",
                source=str(path),
                line=lineno,
            )
        yield raw[len(_BOM) :] if lineno == 1 and raw.startswith(_BOM) else raw


def read_text_file(path: str | Path, *, what: str) -> str:
    """The UTF-8 text of ``path``; unreadable or non-UTF-8 files raise a UsageError.

    ``what`` names the file's role in the message (``"record script"``).
    """
    p = Path(path)
    with open_input(p, what=what) as fh:
        try:
            data = fh.read()
        except OSError as exc:
            raise UsageError(f"cannot read the {what} {p}: {exc.strerror}") from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UsageError(
            f"{p}:{line}: the {what} is not UTF-8 text (byte 0x{data[exc.start]:02x}); "
            "save it as UTF-8"
        ) from None


def jsonl_files(path: str | Path, pattern: str = "*.jsonl") -> list[Path]:
    """``path`` itself, or the files of the folder ``path`` matching ``pattern`` (sorted)."""
    p = Path(path)
    if p.is_dir():
        files = sorted(p.glob(pattern))
        if not files:
            raise TrajectoryError(f"the folder holds no {pattern} files", source=str(p))
        return files
    return [p]


def validate_record(model: type[ModelT], obj: dict[str, Any], source: str, line: int) -> ModelT:
    """``model`` validated from one JSONL object; a failure names the file, line and field."""
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "<record>"
        raise TrajectoryError(str(err["msg"]), source=source, line=line, field=field) from exc
    except TrajectoryError as exc:
        raise TrajectoryError(
            str(exc).split(": ", 1)[-1], source=source, line=line, field=exc.field
        ) from exc
