"""The installed distribution's version, read once from its metadata.

Every module that reports a version (the CLI, the MCP server and proxy, the
package face) imports it from here, so none of them has to import the package
face and the number is written in one place, ``pyproject.toml``.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ["__version__"]

try:
    __version__ = version("aw-lookahead")
except PackageNotFoundError:  # a source tree on sys.path without an install
    __version__ = "0.0.0+unknown"
