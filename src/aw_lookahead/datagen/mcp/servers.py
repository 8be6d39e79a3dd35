"""Where the real MCP servers come from: npm packages in a private prefix, a console script.

The Node servers (``@modelcontextprotocol/server-filesystem``,
``@modelcontextprotocol/server-memory``) are installed with ``npm install
--prefix`` into a folder we own (by default the repository's git-ignored
``.cache/node``), never globally; :func:`npm_mcp_server` installs on first use
and returns the executable. ``mcp-server-git`` is a Python console script from
PyPI, found beside the running interpreter or on ``PATH``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from aw_lookahead.errors import ConfigError, DownstreamError

__all__ = [
    "FILESYSTEM_PACKAGE",
    "MEMORY_PACKAGE",
    "default_node_prefix",
    "git_mcp_server",
    "npm_install",
    "npm_mcp_server",
]

FILESYSTEM_PACKAGE = "@modelcontextprotocol/server-filesystem"
MEMORY_PACKAGE = "@modelcontextprotocol/server-memory"
ENV_NODE_PREFIX = "AW_LOOKAHEAD_NODE_PREFIX"


def default_node_prefix() -> Path:
    """``$AW_LOOKAHEAD_NODE_PREFIX``, else ``.cache/node`` in the current directory."""
    return Path(os.environ.get(ENV_NODE_PREFIX) or Path.cwd() / ".cache" / "node")


def npm_mcp_server(package: str, prefix: str | Path | None = None, *, install: bool = True) -> Path:
    """The executable of an npm MCP server package, installed into ``prefix`` if missing.

    The executable is ``node_modules/.bin/mcp-<last part of the package name>``
    (the naming every ``@modelcontextprotocol/server-*`` package uses).
    Raises :class:`ConfigError` when it is missing and npm cannot install it.
    """
    root = Path(prefix) if prefix is not None else default_node_prefix()
    exe = root / "node_modules" / ".bin" / f"mcp-{package.rsplit('/', 1)[-1]}"
    if not exe.exists() and not install:
        raise ConfigError(
            f"{exe} is missing; install it with: npm install --prefix {root} {package}"
        )
    return npm_install(package, root, exe)


def npm_install(package: str, prefix: str | Path, installed: Path) -> Path:
    """``npm install --prefix PREFIX PACKAGE`` unless ``installed`` exists; returns ``installed``.

    ``installed`` is a file the package brings (its executable, its
    ``package.json``): its presence after the install is the proof that it
    worked. Raises :class:`ConfigError` without npm, :class:`DownstreamError`
    when the install fails or takes over 600 s.
    """
    if installed.exists():
        return installed
    npm = shutil.which("npm")
    if npm is None:
        raise ConfigError(f"npm is not installed; {package} needs Node.js 18+ and npm on PATH")
    args = [npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix), package]
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=600, check=False)
    except subprocess.TimeoutExpired as exc:
        raise DownstreamError(f"`{' '.join(args)}` did not finish within 600 s") from exc
    if done.returncode != 0 or not installed.exists():
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise DownstreamError(
            f"`npm install --prefix {prefix} {package}` failed ({tail[0]}); "
            "run it by hand to see why"
        )
    return installed


def git_mcp_server() -> Path:
    """The ``mcp-server-git`` console script (PyPI), beside this interpreter or on ``PATH``."""
    beside = Path(sys.executable).with_name("mcp-server-git")
    if beside.exists():
        return beside
    found = shutil.which("mcp-server-git")
    if found is None:
        raise ConfigError(
            "mcp-server-git is not installed; install it with: pip install mcp-server-git"
        )
    return Path(found)
