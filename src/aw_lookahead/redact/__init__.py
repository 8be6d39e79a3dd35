"""Secret redaction: what leaves the process or lands on disk never holds a known credential.

A :class:`Redactor` replaces each secret it recognises with a placeholder
such as ``[REDACTED_OPENAI_KEY_3f9a1c]``. The six hex digits are a keyed hash
of the secret (HMAC-SHA256 with a random per-redactor key), so within one
redactor (one process, by default) the same secret always gets the same
placeholder: a trajectory that mentions a key in turn 2 and turn 9 shows the
model one consistent stand-in, candidate prompts keep a byte-identical
history, and nobody holding the placeholder can test guesses against it.

Where it runs (on by default, through :func:`default_redactor`):

* every chat request before it is sent: world-model predictions and token
  counts (:mod:`aw_lookahead.worldmodel`), both LLM judges;
* every record before it is written: :class:`~aw_lookahead.trajectory.JsonlWriter`
  (recorder, shadow logs, ``eval run`` outputs, ``record terminal``) and the
  on-disk prediction cache. Those files are created ``0600``.

What it recognises (the full table is in ``docs/secrets.md`` and
:mod:`aw_lookahead.redact.rules`): PEM private keys; provider keys and tokens
by prefix (OpenAI, Anthropic, Google, AWS, GitHub, GitLab, Slack, Stripe,
Hugging Face, npm, PyPI, …); JWTs; ``Authorization``, bearer and cookie
values; passwords in URLs, flags and password options (``--password x``,
``curl -u user:pw``, ``mysql -pPW``, ``sshpass -p``, ``.netrc``); Azure keys;
assignments and fields whose name says secret, in any case style and in
several languages, also JSON-escaped or URL-encoded; base64 runs that decode
to one of these. In JSON records a value whose key names a secret is
replaced whole. A secret replaced once is then replaced wherever it appears
again (see :meth:`Redactor.messages`).

Every pattern runs in linear time (``bench/redact.py``: adversarial inputs of
each family at 64 KiB, 256 KiB and 1 MiB, at most 1 s of CPU per MiB), and the
async servers redact large texts in a worker thread (:func:`redact_off_loop`),
so the event loop is never held by it.

Patterns are a best effort, not a guarantee: a secret with no recognisable
shape and no telling name passes through. Add your own with
:meth:`Redactor.add` (or ``extra=``), switch redaction off with
``AW_LOOKAHEAD_REDACT=off`` or ``set_default_redactor(Redactor(enabled=False))``.

We use our own small table rather than a scanner such as ``detect-secrets``:
those scan files line by line behind global plugin settings, report findings
instead of rewriting text, and their entropy detectors flag the hashes and ids
that tool outputs are full of.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar, TypeVarTuple

from .redactor import DISTINCT_CAP, PLACEHOLDER_PREFIX, Redactor
from .rules import RedactionRule, builtin_rules, secret_field

__all__ = [
    "DISTINCT_CAP",
    "ENV_REDACT",
    "OFF_LOOP_CHARS",
    "PLACEHOLDER_PREFIX",
    "RedactionRule",
    "Redactor",
    "builtin_rules",
    "default_redactor",
    "redact_messages",
    "redact_messages_off_loop",
    "redact_off_loop",
    "redact_record",
    "redact_text",
    "secret_field",
    "set_default_redactor",
]

ENV_REDACT = "AW_LOOKAHEAD_REDACT"
"""Set to ``off`` (or ``0``, ``false``, ``no``) to turn the default redactor off."""

OFF_LOOP_CHARS = 32 * 1024
"""From this many characters on, :func:`redact_off_loop` works in a worker thread."""
_T = TypeVar("_T")
_Ts = TypeVarTuple("_Ts")
_process: dict[str, Redactor] = {}


def default_redactor() -> Redactor:
    """The process-wide redactor: on unless ``AW_LOOKAHEAD_REDACT`` is ``off``/``0``/``false``."""
    if "default" not in _process:
        off = os.environ.get(ENV_REDACT, "").strip().lower() in ("0", "off", "false", "no")
        _process["default"] = Redactor(enabled=not off)
    return _process["default"]


def set_default_redactor(redactor: Redactor | None) -> None:
    """Replace the process-wide redactor; ``None`` goes back to the environment's default."""
    if redactor is None:
        _process.pop("default", None)
    else:
        _process["default"] = redactor


def redact_text(text: str) -> str:
    """:meth:`Redactor.text` with the default redactor."""
    return default_redactor().text(text)


def redact_messages(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """:meth:`Redactor.messages` with the default redactor."""
    return default_redactor().messages(messages)


def redact_record(value: Any) -> Any:
    """:meth:`Redactor.record` with the default redactor."""
    return default_redactor().record(value)


async def redact_off_loop(size: int, fn: Callable[[*_Ts], _T], *args: *_Ts) -> _T:
    """``fn(*args)``, work that redacts about ``size`` characters, for async servers.

    Redaction is linear in the text, but a big tool argument or record still
    costs milliseconds of CPU: from :data:`OFF_LOOP_CHARS` on, ``fn`` runs in a
    worker thread, so other sessions of a proxy or server keep being served
    meanwhile (``bench/redact.py`` measures the loop's longest stall while a
    MiB is redacted); below that, the hop to a thread would cost more than it saves.
    """
    if size < OFF_LOOP_CHARS:
        return fn(*args)
    return await asyncio.to_thread(fn, *args)


async def redact_messages_off_loop(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """:func:`redact_messages` for async servers: a large request is redacted in a worker thread."""
    items = list(messages)
    size = sum(len(str(m.get("content") or "")) for m in items)
    return await redact_off_loop(size, redact_messages, items)
