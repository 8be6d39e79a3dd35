"""Deadlines for slow HTTP clients of the servers we run on uvicorn (MCP streamable HTTP).

uvicorn times out an idle keep-alive connection, but not a client that is
sending: a connection that sends half a request line and then a byte now and
then is kept open for ever, so a few hundred of them hold every socket of
the server. The protocol class made here adds two deadlines, both counted
from the first byte (a trickle does not extend them):

* **headers**: a request's line and headers must arrive within
  ``header_timeout_s`` of the connection opening (or of the first byte after
  the previous response). Otherwise the client gets ``408 Request Timeout``
  and the connection is closed.
* **body**: once the headers are in, the whole body must arrive within
  ``body_timeout_s``. Otherwise the connection is closed; the application
  sees the client disconnect.

Nothing bounds the time the application takes to answer or a response
stream's length (an MCP event stream may stay open for hours): only what the
client owes the server is timed.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["BODY_TIMEOUT_S", "HEADER_TIMEOUT_S", "timed_http_protocol"]

HEADER_TIMEOUT_S = 10.0
"""Default deadline for a request's line and headers, in seconds."""

BODY_TIMEOUT_S = 30.0
"""Default deadline for a request's body once its headers are in, in seconds."""

_TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\ncontent-length: 43\r\n\r\n"
    b"request headers not received in time: bye\r\n"
)


def timed_http_protocol(header_timeout_s: float, body_timeout_s: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol with the two deadlines of the module docstring (``Config(http=)``).

    Both must be positive; they are the seconds a client has for its headers
    and for its body.
    """
    if not header_timeout_s > 0 or not body_timeout_s > 0:
        raise ValueError("header and body timeouts must be positive seconds")
    from uvicorn.protocols.http.h11_impl import H11Protocol

    deadlines = {"headers": header_timeout_s, "body": body_timeout_s}

    class TimedH11Protocol(H11Protocol):
        """h11 with a deadline on what the client still owes: headers, then body."""

        _aw_timer: asyncio.TimerHandle | None = None
        _aw_phase: str | None = None
        _aw_cycle: Any = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)  # type: ignore[arg-type]
            self._aw_update()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._aw_update()

        def connection_lost(self, exc: Exception | None) -> None:
            self._aw_cancel()
            super().connection_lost(exc)

        def _aw_cancel(self) -> None:
            if self._aw_timer is not None:
                self._aw_timer.cancel()
                self._aw_timer = None

        def _aw_owed(self) -> str | None:
            """What the client owes now: "headers", "body" or nothing (the app's turn)."""
            cycle = self.cycle
            if cycle is None or cycle.response_complete:
                return "headers"
            return "body" if cycle.more_body else None

        def _aw_update(self) -> None:
            """Start the deadline of what is owed when that changed; a same debt keeps its own."""
            if self.transport is None or self.transport.is_closing():
                return
            phase, cycle = self._aw_owed(), self.cycle
            if phase == self._aw_phase and cycle is self._aw_cycle:
                return
            self._aw_cancel()
            self._aw_phase, self._aw_cycle = phase, cycle
            if phase is not None:
                self._aw_timer = self.loop.call_later(deadlines[phase], self._aw_expire)

        def _aw_expire(self) -> None:
            self._aw_timer = None
            if self.transport.is_closing():
                return
            if (self._aw_owed(), self.cycle) != (self._aw_phase, self._aw_cycle):
                self._aw_phase = self._aw_cycle = None
                self._aw_update()
                return
            if self._aw_phase == "headers":
                self.transport.write(_TIMEOUT_RESPONSE)
            self.transport.close()

    return TimedH11Protocol
