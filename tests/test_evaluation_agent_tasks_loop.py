"""Closed-loop agent tasks: a real LangGraph agent and a real sandboxed shell; only the policy
is scripted (and the world model is made unreachable to inject a fault)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
import openai
from langchain_core.messages import AIMessage

from aw_lookahead.evaluation.agent_tasks import TASKS, AgentTask
from aw_lookahead.evaluation.agent_tasks.loop import run_task, run_tasks
from aw_lookahead.langgraph import LookaheadMiddleware
from aw_lookahead.serving import find_free_port
from aw_lookahead.worldmodel import OpenAIWorldModel
from langgraph_support import ScriptedChat, endless_policy, policy, turn

TASK: AgentTask = TASKS[0]


def _solving_policy(task: AgentTask) -> ScriptedChat:
    return policy(*(turn(c) for c in task.solution), AIMessage("done"))


async def test_a_policy_that_runs_the_solution_succeeds() -> None:
    result = await run_task(TASK, _solving_policy(TASK), step_limit=len(TASK.solution) + 2)
    assert result.success
    assert result.commands == list(TASK.solution)
    assert result.model_calls == len(TASK.solution) + 1
    assert result.error is None


async def test_a_policy_that_does_the_wrong_thing_fails_and_says_what_it_ran() -> None:
    result = await run_task(TASK, policy(turn("ls"), turn("echo hi > out.txt"), AIMessage("ok")))
    assert not result.success
    assert result.commands == ["ls", "echo hi > out.txt"]


async def test_the_step_limit_ends_a_policy_that_never_stops() -> None:
    endless = ScriptedChat(messages=endless_policy("ls"))
    result = await run_task(TASK, endless, step_limit=3)
    assert not result.success
    assert result.model_calls == 3
    assert result.commands == ["ls"] * 3


async def test_lookahead_middleware_vetoes_a_destructive_call_with_the_world_model_down() -> None:
    down = OpenAIWorldModel("m", base_url=f"http://127.0.0.1:{find_free_port()}/v1")
    suite = await run_tasks(
        [TASK],
        policy(turn("rm -rf ./*"), AIMessage("done")),
        label="down",
        middleware=lambda: [LookaheadMiddleware(down, deadline_s=30.0)],
    )
    (result,) = suite.results
    assert result.vetoes == 1
    assert result.commands == []
    assert suite.summary() == {
        "label": "down",
        "tasks": 1,
        "succeeded": 0,
        "success_rate": 0.0,
        "vetoes": 1,
        "errors": 0,
    }


class _RefusesTools(ScriptedChat):
    """A policy server without a tool-call parser: a request with tools is a 400."""

    bound: bool = False
    refused: list[int] = []  # noqa: RUF012 - one list shared by the bound copies

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChat:  # type: ignore[override]
        return self.model_copy(update={"bound": True}) if tools else self

    async def _agenerate(self, *args: Any, **kwargs: Any) -> Any:
        if self.bound:
            self.refused.append(1)
            request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
            raise openai.BadRequestError(
                '"auto" tool choice requires --enable-auto-tool-choice',
                response=httpx.Response(400, request=request),
                body=None,
            )
        return await super()._agenerate(*args, **kwargs)


async def test_text_commands_read_a_command_from_the_reply_when_tools_are_refused() -> None:
    replies = iter(
        [AIMessage(f"```bash\n{c}\n```") for c in TASK.solution] + [AIMessage("All done.")]
    )
    chat = _RefusesTools(messages=replies, refused=[])
    result = await run_task(TASK, chat, step_limit=len(TASK.solution) + 2)
    assert chat.refused == [1]  # asked with tools once, then without
    assert result.success
    assert result.commands == list(TASK.solution)
    assert result.model_calls == len(TASK.solution) + 1
