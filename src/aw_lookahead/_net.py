"""Small network facts shared by the HTTP servers we start (MCP transport, vLLM)."""

from __future__ import annotations

import ipaddress

__all__ = ["WILDCARD_BINDS", "is_loopback"]

WILDCARD_BINDS = ("0.0.0.0", "::", "")
"""Bind addresses that listen on every interface."""


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps a server reachable from this machine only."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
