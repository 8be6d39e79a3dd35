"""Exceptions raised by aw-lookahead.

Two roots separate whose move it is:

    AwLookaheadError
    ├── UsageError              the caller's mistake: fix the input or the config
    │   ├── TrajectoryError     a malformed trajectory / sample (names file, line, field)
    │   ├── ConfigError         a bad option or combination of options
    │   └── MissingExtraError   an optional dependency is not installed (also ImportError)
    └── RunError                something failed while running: retry, start a server, ...
        ├── WorldModelError     the world model could not give a prediction
        │   ├── ServerUnreachableError   nothing answers at the base URL
        │   ├── WorldModelTimeoutError   the server accepted but did not answer in time
        │   ├── ModelNotServedError      the server runs, but not that model
        │   ├── ContextTooLongError      history does not fit even after trimming
        │   ├── ServerError              the server answered with an error status
        │   └── ReplyParseError          empty or unusable reply (keeps the raw text)
        ├── JudgeError          a feasibility judge gave no usable verdict
        ├── ServerStartError    a local model server did not start (has the log tail)
        └── DownstreamError     a real tool server (MCP, sandbox) failed

Every message says what to do next. Library exceptions are chained with
``raise ... from`` so the original cause stays visible.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

__all__ = [
    "AwLookaheadError",
    "ConfigError",
    "ContextTooLongError",
    "DownstreamError",
    "JudgeError",
    "MissingExtraError",
    "ModelNotServedError",
    "ReplyParseError",
    "RunError",
    "ServerError",
    "ServerStartError",
    "ServerUnreachableError",
    "TrajectoryError",
    "UsageError",
    "WorldModelError",
    "WorldModelTimeoutError",
]


class AwLookaheadError(Exception):
    """Base of every exception this package raises on purpose."""


class UsageError(AwLookaheadError, ValueError):
    """The caller passed something invalid; the message says what and how to fix it."""


class RunError(AwLookaheadError, RuntimeError):
    """A run-time failure outside the caller's control (server down, bad reply, ...)."""


class TrajectoryError(UsageError):
    """A trajectory, turn or benchmark sample is malformed.

    ``source`` is the file (or another label), ``line`` the 1-based line of a
    JSONL record and ``field`` the dotted path of the offending field, when known.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.source = source
        self.line = line
        self.field = field
        where = []
        if source is not None:
            where.append(source if line is None else f"{source}:{line}")
        elif line is not None:
            where.append(f"line {line}")
        if field:
            where.append(f"field {field!r}")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class ConfigError(UsageError):
    """An option has an invalid value or options conflict."""


class MissingExtraError(UsageError, ImportError):
    """An optional dependency group is not installed; the message has the pip line."""

    def __init__(self, extra: str, module: str, *, hint: str = "") -> None:
        self.extra = extra
        self.module = module
        self.pip_command = f"pip install 'aw-lookahead[{extra}]'"
        super().__init__(
            f"this feature needs the optional dependency {module!r}; "
            f"install it with: {self.pip_command}{hint}"
        )


class WorldModelError(RunError):
    """The world model did not produce a usable prediction."""


class ServerUnreachableError(WorldModelError):
    """No server answers at ``base_url``."""

    def __init__(self, base_url: str, detail: str = "") -> None:
        self.base_url = base_url
        extra = f" ({detail})" if detail else ""
        super().__init__(
            f"no world-model server answers at {base_url}{extra}. Start one with "
            "`aw-lookahead serve --local` (embedded CPU model) or `aw-lookahead serve "
            "--model <hf id>` on a GPU, or point --base-url / AW_LOOKAHEAD_BASE_URL "
            "at a running OpenAI-compatible server."
        )


class WorldModelTimeoutError(WorldModelError):
    """The server did not answer within the configured timeout."""

    def __init__(self, base_url: str, timeout_s: float) -> None:
        self.base_url = base_url
        self.timeout_s = timeout_s
        super().__init__(
            f"the world-model server at {base_url} did not answer within {timeout_s:g} s; "
            "raise the timeout, lower max_tokens, or check that the server is not overloaded"
        )


class ModelNotServedError(WorldModelError):
    """The server is up but does not serve the requested model."""

    def __init__(self, model: str, served: Sequence[str], base_url: str) -> None:
        self.model = model
        self.served = list(served)
        listing = ", ".join(repr(m) for m in self.served) or "(none)"
        super().__init__(
            f"the server at {base_url} does not serve model {model!r}; it serves: {listing}. "
            "Pass one of these with --model / AW_LOOKAHEAD_MODEL."
        )


class ContextTooLongError(WorldModelError):
    """The prompt exceeds the server's context even with the history trimmed."""

    def __init__(self, prompt_tokens: int | None, limit: int | None, detail: str = "") -> None:
        self.prompt_tokens = prompt_tokens
        self.limit = limit
        sizes = ""
        if prompt_tokens is not None and limit is not None:
            sizes = f" ({prompt_tokens} prompt tokens, budget {limit})"
        super().__init__(
            f"the prompt does not fit the server's context even after trimming the history"
            f"{sizes}. {detail}Shorten the first turn or the action, lower max_tokens, "
            "or serve the model with a larger --max-model-len."
        )


class ServerError(WorldModelError):
    """The server answered with an error status that retries did not fix."""

    def __init__(self, base_url: str, status: int | None, detail: str) -> None:
        self.base_url = base_url
        self.status = status
        code = f"HTTP {status}" if status is not None else "an error"
        super().__init__(f"the world-model server at {base_url} answered {code}: {detail}")


class ReplyParseError(WorldModelError):
    """The reply holds no usable observation. ``raw`` keeps the full reply text."""

    def __init__(self, message: str, raw: str) -> None:
        self.raw = raw
        preview = raw if len(raw) <= 300 else raw[:300] + "..."
        super().__init__(f"{message}; raw reply: {preview!r}")


class JudgeError(RunError):
    """A feasibility judge returned no usable verdict. ``raw`` keeps its reply."""

    def __init__(self, message: str, raw: str = "") -> None:
        self.raw = raw
        super().__init__(message)


class DownstreamError(RunError):
    """A real tool server or executor failed (crashed, hung, refused)."""


class ServerStartError(RunError):
    """A local model server exited or timed out while starting.

    ``log_path`` is its log file and ``log_tail`` its last lines (also in the
    message), ``returncode`` the exit code when the process exited.
    """

    def __init__(
        self,
        message: str,
        *,
        log_path: os.PathLike[str] | str | None = None,
        log_tail: str = "",
        returncode: int | None = None,
    ) -> None:
        self.log_path = None if log_path is None else os.fspath(log_path)
        self.log_tail = log_tail
        self.returncode = returncode
        parts = [message]
        if self.log_path is not None:
            parts.append(f"full log: {self.log_path}")
        if log_tail:
            parts.append(f"--- last lines of the server log ---\n{log_tail}")
        super().__init__("\n".join(parts))
