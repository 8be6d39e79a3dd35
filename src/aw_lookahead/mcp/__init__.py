"""MCP integration (extra ``aw-lookahead[mcp]``): a server exposing the world model and a
proxy that simulates calls to a real MCP server before (or instead of) running them.

* :func:`build_server` - ``simulate`` and ``lookahead`` tools (``aw-lookahead mcp``).
* :class:`LookaheadProxy` + :class:`Downstream` - ``aw-lookahead proxy`` in gate,
  preview, dryrun or shadow mode (:class:`ProxyMode`, :class:`ProxyConfig`).
* :class:`Perturbation` - deterministic fault injection for dry runs.
* :func:`serve_stdio`, :func:`serve_http` - run either over a transport.

Importing this package needs the ``mcp`` extra only when a server is built.
"""

from __future__ import annotations

from .downstream import Downstream
from .perturb import Fault, Perturbation
from .proxy import CLIENT_KEY_HEADER, CONFIRM_ARG, LookaheadProxy, ProxyConfig, ProxyMode
from .server import build_server
from .structured import fit_structured
from .transport import BearerAuth, http_app, serve_http, serve_stdio

__all__ = [
    "CLIENT_KEY_HEADER",
    "CONFIRM_ARG",
    "BearerAuth",
    "Downstream",
    "Fault",
    "LookaheadProxy",
    "Perturbation",
    "ProxyConfig",
    "ProxyMode",
    "build_server",
    "fit_structured",
    "http_app",
    "serve_http",
    "serve_stdio",
]
