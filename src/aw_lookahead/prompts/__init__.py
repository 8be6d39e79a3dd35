"""The world-model message contract: system prompts, message rendering, reply parsing.

* :class:`PromptSet` holds one system prompt per domain (our own text, shipped
  as package data) and loads overrides from a folder.
* :func:`render_messages` turns a trajectory plus one action into the chat
  messages the reference model was trained on; everything before the last
  message is identical for every candidate action of a step, which lets the
  server's prefix cache share it.
* The MCP tool context is compact by default (one line of tool names in the
  system prompt, each called tool's definition in the turn that first calls
  it); ``PromptSet(tool_layout="full")`` keeps every definition in the system
  prompt.
* :func:`render_step` renders a step's K candidates at once: the history
  once, each candidate's last turn apart (:class:`StepMessages`).
* Prompt profiles: ``"standard"`` text, or ``"short"`` for small models;
  :func:`prompts_for_model` picks the one a served model was trained on.
* :func:`parse_reply` recovers the predicted observation from a reply.
"""

from __future__ import annotations

from .parse import ParsedReply, output_start, parse_reply
from .profiles import (
    EMBEDDED_SERVED_NAME,
    embedded_prompt_profile,
    profile_for_model,
    prompts_for_model,
)
from .render import (
    PROMPT_PROFILES,
    PromptProfile,
    PromptSet,
    ToolLayout,
    default_prompts,
    history_messages,
    profile_prompts,
    render_messages,
    render_step,
    tool_definition_text,
    tool_definitions_text,
    tool_names_text,
)
from .step_messages import StepMessages

__all__ = [
    "EMBEDDED_SERVED_NAME",
    "PROMPT_PROFILES",
    "ParsedReply",
    "PromptProfile",
    "PromptSet",
    "StepMessages",
    "ToolLayout",
    "default_prompts",
    "embedded_prompt_profile",
    "history_messages",
    "output_start",
    "parse_reply",
    "profile_for_model",
    "profile_prompts",
    "prompts_for_model",
    "render_messages",
    "render_step",
    "tool_definition_text",
    "tool_definitions_text",
    "tool_names_text",
]
