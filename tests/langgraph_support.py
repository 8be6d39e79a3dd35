"""Shared pieces of the LangGraph adapter tests: a scripted policy, a real shell tool, a
deterministic world model. Real graphs, real checkpointer, real sandboxed bash; only the
agent's policy model is scripted."""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langsmith import uuid7

from aw_lookahead.sandbox import TerminalSandbox, observation
from aw_lookahead.trajectory import Action, Trajectory
from aw_lookahead.worldmodel import FunctionWorldModel

TASK = "Summarise the files in data/ into summary.txt. The data/ directory is needed."
CAT_MISSING = "cat missing.txt"
RM_DATA = "rm -rf data"
LS = "ls"

_ids = itertools.count()


class ScriptedChat(GenericFakeChatModel):
    """The agent's policy: emits scripted messages in order; tool binding is a no-op."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChat:  # type: ignore[override]
        return self


def call(command: str, tool: str = "shell") -> dict[str, Any]:
    return {
        "name": tool,
        "args": {"command": command},
        "id": f"call_{next(_ids)}",
        "type": "tool_call",
    }


def turn(*commands: str) -> AIMessage:
    return AIMessage("", tool_calls=[call(c) for c in commands])


def policy(*messages: AIMessage) -> ScriptedChat:
    return ScriptedChat(messages=iter(messages))


class ShellTool:
    """A real sandboxed bash tool that counts every command it executes."""

    def __init__(self, sandbox: TerminalSandbox) -> None:
        self.sandbox = sandbox
        self.executed: Counter[str] = Counter()

    def run(self, command: str) -> str:
        self.executed[command] += 1
        return observation(self.sandbox.run_sync(command, timeout=10))

    async def arun(self, command: str) -> str:
        return await asyncio.to_thread(self.run, command)

    def tool(self) -> BaseTool:
        return StructuredTool.from_function(
            func=self.run,
            coroutine=self.arun,
            name="shell",
            description="Run a bash command in the workspace and return its output.",
        )


def workspace(sandbox: TerminalSandbox) -> None:
    """data/ holds two files the task needs."""
    sandbox.write_file("data/a.txt", "alpha\n")
    sandbox.write_file("data/b.txt", "beta\n")


def command_of(action: Action) -> str:
    if isinstance(action, list):
        return "".join(str(k.get("keystrokes", "")) for k in action).strip()
    if isinstance(action, dict):
        return str(action.get("arguments", {}).get("command", ""))
    return str(action).strip()


def predict(trajectory: Trajectory, action: Action) -> str:
    """A deterministic terminal environment model for the scripted commands."""
    cmd = command_of(action)
    if cmd.startswith("cat missing"):
        return f"$ {cmd}\ncat: missing.txt: No such file or directory\n"
    if cmd.startswith("rm -rf"):
        return f"$ {cmd}\nremoved 'data/a.txt'\nremoved 'data/b.txt'\nremoved directory 'data'\n"
    if cmd == "ls":
        return f"$ {cmd}\ndata\n"
    return f"$ {cmd}\n"


def world_model() -> FunctionWorldModel:
    return FunctionWorldModel(predict, model_id="scripted-terminal")


def tool_messages(messages: Sequence[BaseMessage]) -> list[ToolMessage]:
    return [m for m in messages if isinstance(m, ToolMessage)]


def endless_policy(command: str) -> Iterator[AIMessage]:
    while True:
        yield turn(command)


def thread_config() -> dict[str, Any]:
    """A run config on a fresh checkpointer thread."""
    return {"configurable": {"thread_id": str(uuid7())}}
