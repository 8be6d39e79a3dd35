"""A real loopback HTTP relay in front of an OpenAI-compatible server, for tests.

It records every request body exactly as it arrived (bytes and parsed JSON),
forwards the request to the upstream server and returns its reply unchanged.
To inject a fault, ``inject`` maps a marker string to a reply content: a
request whose body contains the marker gets a well-formed chat completion
with that content instead of being forwarded (the only fake: the upstream
model cannot be made to return an empty reply on demand).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx


@dataclass
class Relay:
    base_url: str
    upstream: str
    bodies: list[dict[str, Any]] = field(default_factory=list)
    raw: list[bytes] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    inject: dict[str, str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def chat_bodies(self) -> list[dict[str, Any]]:
        with self.lock:
            return [b for b, p in zip(self.bodies, self.paths, strict=True) if "chat" in p]


def _completion(model: str, content: str) -> bytes:
    return json.dumps(
        {
            "id": "injected",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 0, "total_tokens": 1},
        }
    ).encode()


@contextmanager
def recording_relay(upstream: str) -> Iterator[Relay]:
    """Serve a relay to ``upstream`` (an OpenAI ``/v1`` root) on a free loopback port."""
    root = upstream.rstrip("/").removesuffix("/v1")
    client = httpx.Client(timeout=600.0)
    relay = Relay(base_url="", upstream=upstream)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def _forward(self, method: str, body: bytes | None) -> None:
            headers = {"content-type": "application/json"} if body is not None else {}
            auth = self.headers.get("authorization")
            if auth:
                headers["authorization"] = auth
            reply = client.request(method, root + self.path, content=body, headers=headers)
            self.send_response(reply.status_code)
            self.send_header("content-type", reply.headers.get("content-type", "application/json"))
            self.send_header("content-length", str(len(reply.content)))
            self.end_headers()
            self.wfile.write(reply.content)

        def do_GET(self) -> None:
            self._forward("GET", None)

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            parsed = json.loads(body) if body else {}
            with relay.lock:
                relay.raw.append(body)
                relay.bodies.append(parsed)
                relay.paths.append(self.path)
            text = body.decode("utf-8", "replace")
            for marker, content in relay.inject.items():
                if marker in text:
                    data = _completion(str(parsed.get("model", "")), content)
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
            self._forward("POST", body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    relay.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield relay
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=30)
        client.close()
