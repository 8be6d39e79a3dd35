"""Warm-up of an agent's own model: world-model samples mixed with the agent's SFT data.

In the unified paradigm the agent and the world model are one model, so its
warm-up must not cost it its agent skills. :func:`mix_samples` adds the
agent's own chat transcripts (OpenAI messages JSONL: one ``{"messages": [...],
"tools": [...]}`` object per line, assistant messages with ``content`` and/or
``tool_calls``, ``tool`` messages with the results) to the world-model
samples at a given share.

Guarantees:

* ``mix`` is the agent share of the training sequences: with ``W``
  world-model samples, ``round(mix / (1 - mix) * W)`` agent sequences are
  drawn (seeded; the pool is repeated when it is smaller, and the repeats are
  counted). ``mix=0`` adds nothing.
* Every assistant message of a transcript is a target (its content and tool
  calls through the end-of-turn token); system, user and tool messages carry
  no loss. Sequences longer than ``max_len`` are cut.
* Rendering: a chat template that renders ``tools`` and ``tool_calls`` (Qwen3,
  Llama 3.1 and most agent models) is used as is, so the model learns the
  exact form its server's tool parser reads. A template that drops them
  (plain ChatML such as SmolLM2's) gets them folded into text: the tool
  definitions in the system message, each call as a ``<tool_call>`` JSON
  block after the content, each result as a user turn in
  ``<tool_response>``; :attr:`MixReport.agent_rendering` says which was used.
* :class:`MixReport` shows both parts: the world-model report as before plus
  the agent part's conversations, sequences, tool calls, tokens and label
  tokens, and each part's share of the label tokens.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aw_lookahead._jsonl import jsonl_files
from aw_lookahead.errors import ConfigError, TrajectoryError
from aw_lookahead.trajectory import iter_jsonl_dicts

from .classify import TurnClass
from .data import ChatSample, DataReport, EncodedSample, encode_sample

__all__ = ["MixReport", "encode_conversation", "mix_samples", "read_agent_conversations"]

_ROLES = ("system", "user", "assistant", "tool")
Conversation = tuple[list[dict[str, Any]], list[dict[str, Any]] | None]


def read_agent_conversations(paths: Iterable[str | Path]) -> Iterator[tuple[str, Conversation]]:
    """Stream ``(file:line, (messages, tools))`` from OpenAI messages JSONL files or folders."""
    for path in paths:
        for file in jsonl_files(path):
            for lineno, obj in iter_jsonl_dicts(file):
                yield f"{file}:{lineno}", _conversation(obj, str(file), lineno)


def _conversation(obj: dict[str, Any], source: str, line: int) -> Conversation:
    def bad(message: str) -> TrajectoryError:
        return TrajectoryError(message, source=source, line=line)

    messages = obj.get("messages")
    if not isinstance(messages, list) or not messages:
        raise bad("field 'messages' must be a non-empty list of chat messages (OpenAI format)")
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in _ROLES:
            raise bad(f"messages[{i}].role must be one of {', '.join(_ROLES)}")
        content = m.get("content")
        if content is not None and not isinstance(content, str):
            raise bad(f"messages[{i}].content must be a string (or null with tool_calls)")
        calls = m.get("tool_calls")
        if calls is not None and not (
            isinstance(calls, list)
            and all(isinstance(c, dict) and isinstance(c.get("function"), dict) for c in calls)
        ):
            raise bad(f"messages[{i}].tool_calls must be a list of {{'function': {{...}}}}")
    if not any(m["role"] == "assistant" for m in messages):
        raise bad("'messages' holds no assistant message, so there is nothing to learn")
    tools = obj.get("tools")
    if tools is not None and not isinstance(tools, list):
        raise bad("field 'tools' must be a list of tool definitions")
    return messages, tools


def _arguments(function: Mapping[str, Any]) -> Any:
    args = function.get("arguments", {})
    if isinstance(args, str):
        try:
            return json.loads(args)
        except ValueError:
            return args
    return args


def _call_block(function: Mapping[str, Any]) -> str:
    body = {"name": function.get("name"), "arguments": _arguments(function)}
    return f"<tool_call>\n{json.dumps(body, ensure_ascii=False)}\n</tool_call>"


def _fold(messages: Sequence[dict[str, Any]], tools: list[dict[str, Any]] | None) -> list[Any]:
    """Tools and tool calls as plain text, for templates that drop them."""
    out: list[dict[str, str]] = []
    for m in messages:
        role, content = m["role"], m.get("content") or ""
        if role == "assistant" and m.get("tool_calls"):
            blocks = [_call_block(c["function"]) for c in m["tool_calls"]]
            content = "\n".join([content, *blocks] if content else blocks)
        elif role == "tool":
            role, content = "user", f"<tool_response>\n{content}\n</tool_response>"
        out.append({"role": role, "content": content})
    if tools:
        listing = "\n".join(json.dumps(t, ensure_ascii=False) for t in tools)
        note = (
            "Tools you can call; to call one, answer with a <tool_call> block holding "
            f'{{"name": ..., "arguments": {{...}}}}:\n{listing}'
        )
        if out and out[0]["role"] == "system":
            out[0] = {"role": "system", "content": f"{out[0]['content']}\n\n{note}"}
        else:
            out.insert(0, {"role": "system", "content": note})
    return out


def _native(message: dict[str, Any]) -> dict[str, Any]:
    """A copy whose tool-call arguments are objects (chat templates dump them as JSON)."""
    out = dict(message)
    if out.get("tool_calls"):
        out["tool_calls"] = [
            {**c, "function": {**c["function"], "arguments": _arguments(c["function"])}}
            for c in out["tool_calls"]
        ]
    return out


class _WithTools:
    """A tokenizer whose chat template always receives ``tools`` (for native rendering)."""

    def __init__(self, tokenizer: Any, tools: list[dict[str, Any]] | None) -> None:
        self._tokenizer = tokenizer
        self._tools = tools

    def apply_chat_template(self, messages: Any, **kwargs: Any) -> Any:
        return self._tokenizer.apply_chat_template(messages, tools=self._tools, **kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._tokenizer(*args, **kwargs)


def renders_tools(tokenizer: Any) -> bool:
    """Whether the chat template renders both tool definitions and assistant tool calls."""
    probe_tool = "zz_probe_tool_zz"
    call = {"type": "function", "function": {"name": probe_tool, "arguments": {"q": "zz_arg"}}}
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": [call]}]
    tools = [{"type": "function", "function": {"name": "zz_def_tool_zz", "parameters": {}}}]
    try:
        text = str(tokenizer.apply_chat_template(messages, tools=tools, tokenize=False))
    except Exception:  # a template that rejects the probe does not render tools natively
        return False
    return probe_tool in text and "zz_arg" in text and "zz_def_tool_zz" in text


def encode_conversation(
    tokenizer: Any,
    key: str,
    conversation: Conversation,
    max_len: int,
    *,
    native: bool | None = None,
) -> EncodedSample | None:
    """Tokenize one transcript with every assistant message a target (module docstring)."""
    messages, tools = conversation
    if native is None:
        native = renders_tools(tokenizer)
    if native:
        rendered: list[Any] = [_native(m) for m in messages]
        tok: Any = _WithTools(tokenizer, tools)
    else:
        rendered, tok = _fold(messages, tools), tokenizer
    targets = tuple(i for i, m in enumerate(rendered) if m["role"] == "assistant")
    sample = ChatSample(key, rendered, targets, (TurnClass.ACTION,) * len(targets))
    return encode_sample(tok, sample, max_len)


@dataclass
class MixReport(DataReport):
    """The world-model report (the inherited fields) plus the agent part of the mix."""

    mix: float = 0.0
    agent_rendering: str = ""
    agent_conversations: int = 0
    agent_tool_calls: int = 0
    agent_pool: int = 0
    agent_samples: int = 0
    agent_repeats: int = 0
    agent_dropped: int = 0
    agent_tokens: int = 0
    agent_label_tokens: int = 0

    def as_dict(self) -> dict[str, Any]:
        out = super().as_dict()
        out["agent_label_share"] = round(self.agent_label_share, 4)
        return out

    @property
    def agent_label_share(self) -> float:
        """The agent part's share of all label tokens."""
        total = self.label_tokens + self.agent_label_tokens
        return self.agent_label_tokens / total if total else 0.0

    def summary(self) -> str:
        world = super().summary()
        return (
            f"world-model part:\n{world}\n"
            f"agent part (mix {self.mix:.2f}, {self.agent_rendering} rendering): "
            f"{self.agent_conversations} conversations, {self.agent_tool_calls} tool calls, "
            f"{self.agent_pool} encodable, {self.agent_dropped} dropped; {self.agent_samples} "
            f"sequences drawn ({self.agent_repeats} repeats), tokens {self.agent_tokens}, label "
            f"tokens {self.agent_label_tokens}\n"
            f"label tokens: world {self.label_tokens}, agent {self.agent_label_tokens} "
            f"(agent share {self.agent_label_share:.1%})"
        )


def mix_samples(
    world: list[EncodedSample],
    report: DataReport,
    agent_data: Iterable[str | Path],
    tokenizer: Any,
    *,
    mix: float,
    max_len: int,
    seed: int = 0,
) -> tuple[list[EncodedSample], MixReport]:
    """World-model samples plus the drawn agent sequences, and the report of both parts."""
    if not 0.0 <= mix < 1.0:
        raise ConfigError(f"mix is the agent share of the sequences: 0 <= mix < 1, got {mix}")
    out = MixReport(**report.__dict__, mix=mix)
    native = renders_tools(tokenizer)
    out.agent_rendering = "native" if native else "folded"
    pool: list[EncodedSample] = []
    for key, conversation in read_agent_conversations(agent_data):
        out.agent_conversations += 1
        out.agent_tool_calls += sum(len(m.get("tool_calls") or []) for m in conversation[0])
        enc = encode_conversation(tokenizer, key, conversation, max_len, native=native)
        if enc is None:
            out.agent_dropped += 1
        else:
            pool.append(enc)
    out.agent_pool = len(pool)
    if mix == 0.0:
        return list(world), out
    if not pool:
        raise ConfigError(f"--mix {mix} asks for agent data, but no agent conversation encoded")
    if not world:
        raise ConfigError("no world-model samples to mix the agent data with")
    wanted = round(mix / (1.0 - mix) * len(world))
    order = list(range(len(pool)))
    random.Random(seed * 7919 + 17).shuffle(order)
    drawn = [pool[order[k % len(pool)]] for k in range(wanted)]
    out.agent_samples = len(drawn)
    out.agent_repeats = max(0, wanted - len(pool))
    out.agent_tokens = sum(len(s.input_ids) for s in drawn)
    out.agent_label_tokens = sum(s.n_label_tokens for s in drawn)
    return [*world, *drawn], out
