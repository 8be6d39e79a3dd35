"""Small network facts shared by the HTTP servers we start (MCP transport, vLLM)."""

from __future__ import annotations

import ipaddress

from .errors import ConfigError

__all__ = ["MIN_TOKEN_CHARS", "WILDCARD_BINDS", "check_server_token", "is_loopback"]

WILDCARD_BINDS = ("0.0.0.0", "::", "")
"""Bind addresses that listen on every interface."""

MIN_TOKEN_CHARS = 16
"""Shortest bearer token / API key a server of ours accepts (a short one is guessed in minutes)."""


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps a server reachable from this machine only."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_server_token(token: str, *, origin: str, variable: str) -> None:
    """Refuse a token a server would accept but an attacker could guess: empty, blank or short.

    ``origin`` names where the token came from (``--auth-token``, an
    environment variable); ``variable`` is the environment variable to set
    instead. The message never contains the token itself.
    """
    fix = f"`export {variable}=$(openssl rand -hex 32)`"
    if not token.strip():
        raise ConfigError(
            f"{origin} is empty (an unset variable?); give a long random token, e.g. {fix}"
        )
    n = len(token.strip())
    if n < MIN_TOKEN_CHARS:
        raise ConfigError(
            f"{origin} is {n} character{'' if n == 1 else 's'} long; a token must have at "
            f"least {MIN_TOKEN_CHARS}, e.g. {fix}"
        )
