"""One model server as a child process group: start, wait until ready, stop cleanly.

The lifecycle every local server of the package shares, whatever runs it
(vLLM's API server in :class:`~aw_lookahead.serving.local.LocalServer`,
llama.cpp's ``llama-server`` in :class:`~aw_lookahead.serving.llama_cpp.LlamaServer`):
subclasses only build the command line and environment. Guarantees:

* the server runs in its own session, so it and anything it spawns are
  signalled together; its stdout and stderr go to one log file;
* :meth:`ServerProcess.wait_ready` polls ``GET /health`` and ``GET /v1/models``
  (the served name must be listed) with a deadline, prints progress every
  15 s, and fails fast with the cause read from the log when the process exits;
* :meth:`ServerProcess.stop` sends SIGINT, then SIGTERM, then SIGKILL to the
  whole group and returns only when no process of it is left; an interpreter
  that exits while the server runs kills the group.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Self

import httpx

from aw_lookahead.errors import ConfigError, ServerStartError

from ._argv import client_env
from .startup import READY_TIMEOUT_ENV, log_stage, ready_timeout, startup_cause

__all__ = ["ServerProcess"]

_LOG_TAIL_LINES = 40
_POLL_S = 0.25
_PROGRESS_EVERY_S = 15.0


def _group_alive(pgid: int) -> bool:
    """True while a non-zombie process of group ``pgid`` exists."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    for name in entries:
        if not name.isdigit():
            continue
        try:
            stat = Path("/proc", name, "stat").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            return True
    return False


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _tail(path: Path, lines: int) -> str:
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 256 * 1024))
            data = handle.read()
    except OSError:
        return ""
    return "\n".join(data.decode("utf-8", errors="replace").splitlines()[-lines:])


class ServerProcess:
    """One OpenAI-compatible model server on this machine, owned by this object.

    ``argv`` and ``env`` are the exact command and (complete) environment;
    ``runtime`` names the server in messages ("vLLM", "llama.cpp");
    ``model_label`` is what the server was asked to load (for messages);
    ``served_name`` is the model id clients send, which must be listed by
    ``/v1/models`` before the server counts as ready. Use it as a context
    manager (start, wait until ready, always stop) or call :meth:`start`,
    :meth:`wait_ready` and :meth:`stop` yourself.
    """

    def __init__(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        runtime: str,
        model_label: str,
        served_name: str,
        host: str,
        port: int,
        api_key: str | None = None,
        log_path: str | os.PathLike[str] | None = None,
    ) -> None:
        self._argv = list(argv)
        self._env = dict(env)
        self._runtime = runtime
        self._model_path = model_label
        self._served_name = served_name
        self._host = host
        self._port = port
        self._api_key = api_key
        self._log_path = Path(log_path) if log_path is not None else None
        self._proc: subprocess.Popen[bytes] | None = None
        self._finalizer: weakref.finalize[[int, int], ServerProcess] | None = None
        self._stopped = False

    @property
    def host(self) -> str:
        return self._host

    @property
    def port(self) -> int:
        return self._port

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL, ``http://HOST:PORT/v1``."""
        return f"http://{self._host}:{self._port}/v1"

    @property
    def model(self) -> str:
        """The served model name clients must send."""
        return self._served_name

    @property
    def api_key(self) -> str:
        """The key clients send; ``"EMPTY"`` when the server checks none."""
        return self._api_key or "EMPTY"

    @property
    def server_kind(self) -> str:
        """What the client calls this server (``vllm``, ``llama.cpp``): pass it as
        ``OpenAIWorldModel(server=...)``, which then knows what the server offers beyond
        the OpenAI API (see :mod:`aw_lookahead.worldmodel.servers`)."""
        return self._runtime.lower()

    def client_env(self) -> dict[str, str]:
        """The ``AW_LOOKAHEAD_*`` variables a client process reads to use this server."""
        return client_env(self.base_url, self.model, self.server_kind, self._api_key)

    @property
    def log_path(self) -> Path | None:
        """The server's combined stdout/stderr log (set once started)."""
        return self._log_path

    @property
    def pid(self) -> int | None:
        """The server's pid, also the id of its process group."""
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        """True while the server process has not exited."""
        return self._proc is not None and self._proc.poll() is None

    def command(self) -> list[str]:
        """The argv :meth:`start` runs (a copy; useful for a dry run)."""
        return list(self._argv)

    def env(self) -> dict[str, str]:
        """The environment :meth:`start` passes (a copy)."""
        return dict(self._env)

    def log_tail(self, lines: int = _LOG_TAIL_LINES) -> str:
        """The last ``lines`` lines of the log, or "" when there is none."""
        return _tail(self._log_path, lines) if self._log_path is not None else ""

    def start(self) -> Self:
        """Launch the server process and return at once; see :meth:`wait_ready`.

        Raises :class:`~aw_lookahead.errors.ServerStartError` if the process
        cannot be spawned. A server object starts at most once.
        """
        if self._proc is not None:
            raise ConfigError(f"this {type(self).__name__} was already started; create a new one")
        if self._log_path is None:
            tag = self._runtime.lower().replace(".", "")
            fd, name = tempfile.mkstemp(prefix=f"aw-lookahead-{tag}-{self._port}-", suffix=".log")
            os.close(fd)
            self._log_path = Path(name)
        self._log_path.parent.mkdir(parents=True, exist_ok=True)
        with self._log_path.open("ab") as log:
            try:
                self._proc = subprocess.Popen(
                    self._argv,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=self._env,
                    start_new_session=True,
                )
            except OSError as exc:
                raise ServerStartError(
                    f"could not launch the {self._runtime} server ({self._argv[0]}): {exc}",
                    log_path=self._log_path,
                ) from exc
        self._finalizer = weakref.finalize(self, _signal_group, self._proc.pid, signal.SIGKILL)
        return self

    def wait_ready(
        self,
        timeout: float | None = None,
        *,
        progress: Callable[[str], None] | None = None,
    ) -> None:
        """Block until ``GET /health`` answers 200 and the model is listed, or fail.

        ``timeout`` defaults to ``$AW_LOOKAHEAD_READY_TIMEOUT``, else 300 s.
        ``progress`` gets a line every 15 s while waiting (elapsed time and the
        server's latest log line), so a slow start on a busy machine is never
        silent. Fails fast with :class:`~aw_lookahead.errors.ServerStartError`
        when the process exits (the message leads with the cause found in the
        log, then the last log lines), and after ``timeout`` seconds
        otherwise; the process is left running on timeout so the caller
        decides (``with`` stops it).
        """
        proc = self._proc
        if proc is None:
            raise ConfigError("call start() before wait_ready()")
        limit = ready_timeout(300.0) if timeout is None else timeout
        root = f"http://{self._host}:{self._port}"
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        began = time.monotonic()
        deadline, next_note = began + limit, began + _PROGRESS_EVERY_S
        with httpx.Client(timeout=5.0, trust_env=False, headers=headers) as client:
            while True:
                code = proc.poll()
                if code is not None:
                    tail = self.log_tail(400)
                    cause = startup_cause(tail)
                    because = f": {cause}" if cause else "; see the log below"
                    raise ServerStartError(
                        f"the {self._runtime} server for {self._model_path!r} exited with "
                        f"code {code} while starting{because}",
                        log_path=self._log_path,
                        log_tail=self.log_tail(),
                        returncode=code,
                    )
                if self._is_ready(client, root):
                    return
                now = time.monotonic()
                if now >= deadline:
                    raise ServerStartError(
                        f"the {self._runtime} server for {self._model_path!r} was not ready "
                        f"after {limit:g} s; a busy machine can need longer: raise the timeout "
                        f"(--ready-timeout, or {READY_TIMEOUT_ENV}=SECONDS for make demo and "
                        "the tests) or check the log below",
                        log_path=self._log_path,
                        log_tail=self.log_tail(),
                    )
                if progress is not None and now >= next_note:
                    next_note = now + _PROGRESS_EVERY_S
                    progress(
                        f"waiting for the server: {now - began:.0f} s of {limit:g} s "
                        f"({log_stage(self.log_tail(20))})"
                    )
                time.sleep(_POLL_S)

    def _is_ready(self, client: httpx.Client, root: str) -> bool:
        try:
            if client.get(f"{root}/health").status_code != 200:
                return False
            listing = client.get(f"{root}/v1/models")
        except httpx.HTTPError:
            return False
        if listing.status_code != 200:
            return False
        try:
            ids = {item.get("id") for item in listing.json().get("data", [])}
        except (ValueError, AttributeError):
            return False
        return self._served_name in ids and self.running

    def stop(self, timeout: float = 30.0) -> int | None:
        """Stop the whole process group; return the server's exit code.

        Sends SIGINT (graceful shutdown, up to ``timeout`` s), then SIGTERM
        (10 s), then SIGKILL. Returns when no process of the group is left.
        Calling it again, or before :meth:`start`, is harmless.
        """
        proc = self._proc
        if proc is None:
            return None
        if self._stopped:
            return proc.returncode
        pgid = proc.pid
        for sig, grace in (
            (signal.SIGINT, timeout),
            (signal.SIGTERM, 10.0),
            (signal.SIGKILL, 10.0),
        ):
            proc.poll()
            if not _group_alive(pgid):
                break
            _signal_group(pgid, sig)
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline:
                proc.poll()
                if not _group_alive(pgid):
                    break
                time.sleep(0.1)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5.0)
        if self._finalizer is not None:
            self._finalizer.detach()
        self._stopped = True
        return proc.returncode

    def __enter__(self) -> Self:
        """Start (unless already started, e.g. by :func:`start_embedded_server`) and wait."""
        if self._proc is None:
            self.start()
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else ("stopped" if self._stopped else "not started")
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r}, {state})"
