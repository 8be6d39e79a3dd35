"""The ``official`` protocol: requests, parsing and failures as the reference script.

The reference evaluation script (QwenLM/Qwen-AgentWorld, ``eval/eval.py``)
fixes how a sample is turned into a request and how a reply is read. Under
this protocol we do the same, so our numbers and theirs describe the same
thing:

* **Messages** come from the record as it is: ``system_str`` (skipped when
  empty), then ``prompt[j]`` / ``response[j]`` pairs for every turn before
  ``turn_idx``, then ``current_prompt`` (else ``prompt[turn_idx - 1]``). Nothing
  is re-rendered, compacted, renumbered or trimmed.
* **Body**: only ``model``, ``messages``, ``max_tokens`` and ``temperature``.
  Defaults are the reference's: 32,768 output tokens, temperature 0.6, and the
  OpenAI client's own 600 s timeout with 2 retries.
* **Over-long samples** fail (the server's 400 is recorded, nothing is trimmed).
* **Parsing** (:func:`extract_observation`): thinking removed (case-insensitive
  tags; an unclosed ``<think>`` stops at the next ``<predicted_observation>``),
  the last opening tag wins (case-insensitive, closed or not), the text is
  stripped; without a tag the whole remaining text counts; nothing left reads
  ``"No output"``. The judge then sees it with every
  ``**Environment Observation:**`` marker removed (:func:`clean_marker`).
* **An empty reply** is not retried and not judged: it counts as a failed
  sample, as a failed request does.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from openai import AsyncOpenAI

from aw_lookahead.agentworldbench import sample_to_record
from aw_lookahead.endpoint import UsesProvider
from aw_lookahead.errors import (
    ConfigError,
    ContextTooLongError,
    ServerUnreachableError,
    WorldModelError,
    WorldModelTimeoutError,
)
from aw_lookahead.prompts import PromptSet
from aw_lookahead.prompts.contract import OBSERVATION_MARKER
from aw_lookahead.trajectory import TurnSample
from aw_lookahead.worldmodel.base import ServedModel
from aw_lookahead.worldmodel.openai_api import ModelInfo, OpenAIWorldModel

__all__ = [
    "NO_OUTPUT",
    "PROTOCOLS",
    "REFERENCE_MAX_TOKENS",
    "REFERENCE_RETRIES",
    "REFERENCE_TEMPERATURE",
    "REFERENCE_TIMEOUT_S",
    "OfficialModel",
    "OfficialReply",
    "clean_marker",
    "default_protocol",
    "extract_observation",
    "official_messages",
    "record_lists",
    "remove_thinking",
    "subtask",
]

PROTOCOLS = ("official", "ours")
REFERENCE_MAX_TOKENS = 32768
REFERENCE_TEMPERATURE = 0.6
REFERENCE_TIMEOUT_S = 600.0  # the OpenAI client's default; the reference sets none
REFERENCE_RETRIES = 2  # the OpenAI client's default
NO_OUTPUT = "No output"
OBSERVATION_TAG = "predicted_observation"

_THINK = re.compile(r"<(/?)think>", re.IGNORECASE)


def subtask(task: Any) -> str:
    """The domain key the reference groups by: the part after the last ``/``; ``mcp`` if absent."""
    text = task if isinstance(task, str) else "mcp"
    return text.rsplit("/", 1)[-1]


def default_protocol(samples: Sequence[TurnSample]) -> str:
    """``official`` when every sample is an AgentWorldBench record, else ``ours``.

    A record imported from AgentWorldBench keeps each turn's verbatim messages;
    samples cut from our trajectory schema have none to send as they are.
    """
    records = all(
        all(t.prompt is not None and t.response is not None for t in s.trajectory.turns)
        for s in samples
    )
    return "official" if samples and records else "ours"


def record_lists(record: dict[str, Any]) -> tuple[list[str], list[str]]:
    """``prompt`` and ``response`` as lists (a single string counts as one entry)."""
    out: list[list[str]] = []
    for key in ("prompt", "response"):
        value = record.get(key, [])
        out.append([value] if isinstance(value, str) else list(value or []))
    return out[0], out[1]


def current_prompt(record: dict[str, Any]) -> str:
    """``current_prompt``, or the listed prompt of the target turn when it is missing or empty."""
    prompts, _ = record_lists(record)
    target = max(int(record.get("turn_idx", 1)) - 1, 0)
    text = record.get("current_prompt") or ""
    if not text and target < len(prompts):
        text = prompts[target]
    return str(text)


def official_messages(record: dict[str, Any]) -> list[dict[str, str]]:
    """The chat messages the reference script sends for one AgentWorldBench record."""
    prompts, responses = record_lists(record)
    target = max(int(record.get("turn_idx", 1)) - 1, 0)
    messages: list[dict[str, str]] = []
    system = record.get("system_str") or ""
    if system:
        messages.append({"role": "system", "content": system})
    for j in range(min(target, len(prompts), len(responses))):
        messages.append({"role": "user", "content": prompts[j]})
        messages.append({"role": "assistant", "content": responses[j]})
    messages.append({"role": "user", "content": current_prompt(record)})
    return messages


def remove_thinking(text: str, stop_tag: str = "") -> str:
    """Drop ``<think>`` spans the way the reference does (result stripped when any tag was seen).

    Each opening tag pairs with the next unpaired closing tag; a closing tag
    left over removes everything before it; an opening tag left over removes
    up to the next ``<stop_tag>`` (or to the end).
    """
    tags = [(m.start(), m.end(), bool(m.group(1))) for m in _THINK.finditer(text)]
    if not tags:
        return text
    used = [False] * len(tags)
    spans: list[tuple[int, int]] = []
    for i, (start, _, closing) in enumerate(tags):
        if closing or used[i]:
            continue
        for j in range(i + 1, len(tags)):
            if tags[j][2] and not used[j]:
                used[i] = used[j] = True
                spans.append((start, tags[j][1]))
                break
    for i, (_, end, closing) in enumerate(tags):
        if closing and not used[i]:
            used[i] = True
            spans.append((0, end))
    stop = re.compile(rf"<{re.escape(stop_tag)}>", re.IGNORECASE) if stop_tag else None
    for i, (start, _, closing) in enumerate(tags):
        if not closing and not used[i]:
            found = stop.search(text, start) if stop is not None else None
            spans.append((start, found.start() if found else len(text)))
    spans.sort()
    kept: list[str] = []
    pos = 0
    for start, end in spans:
        if start > pos:
            kept.append(text[pos:start])
        pos = max(pos, end)
    kept.append(text[pos:])
    return "".join(kept).strip()


def last_tagged(text: str, tag: str) -> str | None:
    """Content after the last ``<tag>`` up to the next ``</tag>`` (or the end), stripped."""
    opens = list(re.finditer(rf"<{re.escape(tag)}>", text, re.IGNORECASE))
    if not opens:
        return None
    start = opens[-1].end()
    close = re.compile(rf"</{re.escape(tag)}>", re.IGNORECASE).search(text, start)
    return text[start : close.start() if close else len(text)].strip()


def extract_observation(gen: str) -> str:
    """The reference's reading of a world-model reply (before marker cleaning)."""
    if not gen:
        return NO_OUTPUT
    cleaned = remove_thinking(gen, OBSERVATION_TAG)
    found = last_tagged(cleaned, OBSERVATION_TAG)
    if found is not None:
        return found
    return cleaned.strip() or NO_OUTPUT


def clean_marker(text: str) -> str:
    """Remove ``**Environment Observation:**`` as the reference does before judging.

    A leading marker is cut off; otherwise every occurrence is deleted. Stripped.
    """
    if text.startswith(OBSERVATION_MARKER):
        return text[len(OBSERVATION_MARKER) :].strip()
    return text.replace(OBSERVATION_MARKER, "").strip()


@dataclass(frozen=True)
class OfficialReply:
    """One completed request under the official protocol (``content`` may be empty)."""

    content: str
    reasoning: str | None
    finish_reason: str | None
    usage: dict[str, int]
    latency_s: float
    model: str


def failure_kind(exc: WorldModelError) -> str:
    """A short code for why a request failed (``context_too_long``, ``timeout``, ...)."""
    if isinstance(exc, ContextTooLongError):
        return "context_too_long"
    if isinstance(exc, WorldModelTimeoutError):
        return "timeout"
    if isinstance(exc, ServerUnreachableError):
        return "unreachable"
    return "server_error"


class OfficialModel(UsesProvider):
    """Sends records to an OpenAI-compatible server exactly as the reference script does.

    Only ``model``, ``messages``, ``max_tokens`` and ``temperature`` go in the
    body. ``timeout`` and ``retries`` default to the OpenAI client's (600 s, 2
    retries on connection errors, 408/409/429 and 5xx), which the reference
    relies on. Failures raise :class:`~aw_lookahead.errors.WorldModelError`
    subclasses; a context overflow is :class:`ContextTooLongError`, never trimmed.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: AsyncOpenAI | None = None,
        max_tokens: int = REFERENCE_MAX_TOKENS,
        temperature: float = REFERENCE_TEMPERATURE,
        timeout: float = REFERENCE_TIMEOUT_S,
        retries: int = REFERENCE_RETRIES,
        prompts: PromptSet | None = None,
    ) -> None:
        if max_tokens < 1:
            raise ConfigError(f"max_tokens must be >= 1, got {max_tokens}")
        if retries < 0:
            raise ConfigError(f"retries must be >= 0, got {retries}")
        self._lookup = OpenAIWorldModel(
            model, base_url=base_url, api_key=api_key, client=client, timeout=timeout
        )
        self.provider = self._lookup.provider
        self.base_url = self.provider.base_url
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.timeout = timeout
        self.retries = retries
        self.prompts = prompts
        self._client = self.provider.client.with_options(max_retries=retries)

    @property
    def model(self) -> str:
        return self._lookup.model

    async def resolve_model(self) -> str:
        """Check the model is served (pick the only one when unset)."""
        return await self._lookup.resolve_model()

    @property
    def served(self) -> ServedModel | None:
        """What :meth:`resolve_model` learnt of the server (its context length)."""
        return self._lookup.served

    async def list_models(self) -> list[ModelInfo]:
        """The models the server serves, with their context length where it says."""
        return await self._lookup.list_models()

    def messages(self, sample: TurnSample) -> list[dict[str, str]]:
        """The request messages for ``sample``: its AgentWorldBench record, as it is.

        Only a sample without its own system prompt (our trajectory schema) gets
        one, from ``prompts`` (else the packaged set).
        """
        system = None
        if sample.trajectory.system_prompt is None and self.prompts is not None:
            traj = sample.trajectory
            system = self.prompts.system(traj.domain, tools=traj.tools)
        return official_messages(sample_to_record(sample, system_str=system))

    async def complete(self, messages: list[dict[str, str]]) -> OfficialReply:
        """One request with the reference body; the reply's content as sent (maybe empty)."""
        started = time.perf_counter()
        completion = await self.provider.chat(
            messages,
            model=self.model,
            timeout_s=self.timeout,
            client=self._client,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
        )
        latency = time.perf_counter() - started
        if not completion.choices:
            return OfficialReply("", None, None, {}, latency, self.model)
        choice = completion.choices[0]
        extra = choice.message.model_extra or {}
        reasoning = extra.get("reasoning_content") or extra.get("reasoning")
        usage: dict[str, int] = {}
        if completion.usage is not None:
            usage = {
                "prompt_tokens": completion.usage.prompt_tokens or 0,
                "completion_tokens": completion.usage.completion_tokens or 0,
            }
        return OfficialReply(
            choice.message.content or "",
            reasoning if isinstance(reasoning, str) else None,
            choice.finish_reason,
            usage,
            latency,
            self.model,
        )
