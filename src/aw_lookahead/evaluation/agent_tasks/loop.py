"""Run agent tasks closed-loop: a real LangGraph agent, a real sandboxed shell, a real check.

Each task gets a fresh :class:`~aw_lookahead.sandbox.TerminalSandbox`: its setup
commands run, then ``langchain.agents.create_agent`` drives the policy model with one
``shell`` tool for at most ``step_limit`` model calls, with whatever middleware the
caller adds (``LookaheadMiddleware`` for the runs with lookahead), and the task's
check decides success. A task that raised counts as a failure with its error kept,
so one broken run never hides the others. Needs the ``[langgraph]`` extra.
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

import openai
from langchain.agents import create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    ModelCallLimitMiddleware,
    ModelRequest,
    ModelResponse,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool
from pydantic import BaseModel

from aw_lookahead.errors import AwLookaheadError
from aw_lookahead.sandbox import TerminalSandbox, observation

from .tasks import AgentTask

__all__ = ["SuiteResult", "TaskResult", "TextCommands", "run_task", "run_tasks"]

_COMMAND = re.compile(r"```(?:bash|sh|shell)?\n(.+?)```|^\$ (.+)$", re.DOTALL | re.MULTILINE)
_ids = itertools.count()

SYSTEM_PROMPT = (
    "You work in a bash terminal in the user's workspace. Do the task with the shell "
    "tool, one command per call, and stop when it is done."
)


class TaskResult(BaseModel):
    """One task's closed-loop outcome."""

    name: str
    family: str
    success: bool
    model_calls: int
    commands: list[str]
    vetoes: int
    error: str | None = None
    seconds: float


class SuiteResult(BaseModel):
    """The tasks of one configuration (policy, with or without lookahead)."""

    label: str
    results: list[TaskResult]

    @property
    def success_rate(self) -> float:
        return sum(r.success for r in self.results) / len(self.results) if self.results else 0.0

    def summary(self) -> dict[str, Any]:
        """What a report table needs: counts, the rate, and the vetoes."""
        return {
            "label": self.label,
            "tasks": len(self.results),
            "succeeded": sum(r.success for r in self.results),
            "success_rate": round(self.success_rate, 4),
            "vetoes": sum(r.vetoes for r in self.results),
            "errors": sum(r.error is not None for r in self.results),
        }


class TextCommands(AgentMiddleware[Any, Any, Any]):
    """For policy servers that refuse tool binding (vLLM without a tool-call parser).

    When the server answers a request with tools by a 400 naming tools, this
    middleware sends later requests without tools and turns a command written in
    the reply (a fenced ``bash`` block or a ``$ command`` line) into a ``shell``
    call; a reply without one ends the run as any reply without calls does.
    ``calls`` counts the model calls it has seen.
    """

    def __init__(self) -> None:
        super().__init__()
        self.tools_refused = False
        self.calls = 0

    @staticmethod
    def _from_text(response: ModelResponse[Any]) -> ModelResponse[Any]:
        ai = next((m for m in response.result if isinstance(m, AIMessage)), None)
        if ai is None or ai.tool_calls:
            return response
        match = _COMMAND.search(str(ai.content))
        command = (match.group(1) or match.group(2) or "").strip() if match else ""
        if not command:
            return response
        call = {"name": "shell", "args": {"command": command}, "id": f"text_{next(_ids)}"}
        return ModelResponse(result=[AIMessage(str(ai.content), tool_calls=[call])])

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage:
        self.calls += 1
        if not self.tools_refused:
            try:
                return await handler(request)
            except openai.BadRequestError as exc:
                if "tool" not in str(exc).lower():
                    raise
                self.tools_refused = True
        return self._from_text(await handler(request.override(tools=[])))


async def _check(sandbox: TerminalSandbox, task: AgentTask, timeout: float) -> bool:  # noqa: ASYNC109
    result = await sandbox.run(f"cd ~ && ( {task.check} )", timeout=timeout)
    return result.exit_code == 0


async def run_task(
    task: AgentTask,
    policy: BaseChatModel,
    *,
    middleware: Sequence[AgentMiddleware[Any, Any, Any]] = (),
    step_limit: int = 5,
    command_timeout: float = 10.0,
) -> TaskResult:
    """Run one task closed-loop and check it; never raises for a failed run.

    ``step_limit`` caps the policy's model calls. ``middleware`` runs inside the
    step limit and outside :class:`TextCommands`, in the order given.
    """
    started = time.perf_counter()
    commands: list[str] = []
    state: dict[str, Any] = {}
    error: str | None = None
    async with TerminalSandbox() as sandbox:
        for command in task.setup:
            result = await sandbox.run(command, timeout=60.0)
            if result.exit_code != 0:
                raise AwLookaheadError(
                    f"task {task.name}: setup command {command!r} failed: {result.output[:200]}"
                )

        async def shell(command: str) -> str:
            """Run a bash command in the workspace and return what the terminal shows."""
            commands.append(command)
            return observation(await sandbox.run(command, timeout=command_timeout))

        text = TextCommands()
        agent = create_agent(
            policy,
            [StructuredTool.from_function(coroutine=shell, name="shell")],
            system_prompt=SYSTEM_PROMPT,
            middleware=[
                ModelCallLimitMiddleware(run_limit=step_limit, exit_behavior="end"),
                *middleware,
                text,
            ],
        )
        try:
            config: RunnableConfig = {"recursion_limit": 4 * step_limit + 8}
            state = await agent.ainvoke({"messages": [HumanMessage(task.instruction)]}, config)
        except Exception as exc:  # a broken run is a failed task, reported with its cause
            error = f"{type(exc).__name__}: {exc}"[:500]
        success = await _check(sandbox, task, timeout=60.0)
    records = state.get("lookahead") or []
    return TaskResult(
        name=task.name,
        family=task.family,
        success=success,
        model_calls=text.calls,
        commands=commands,
        vetoes=sum(r.get("kind") == "veto" for r in records),
        error=error,
        seconds=round(time.perf_counter() - started, 3),
    )


async def run_tasks(
    tasks: Iterable[AgentTask],
    policy: BaseChatModel,
    *,
    label: str,
    middleware: Callable[[], Sequence[AgentMiddleware[Any, Any, Any]]] = tuple,
    step_limit: int = 5,
    command_timeout: float = 10.0,
    progress: Callable[[int, int], None] | None = None,
) -> SuiteResult:
    """Run ``tasks`` one after another (a CPU model serves one at a time best).

    ``middleware`` builds fresh middleware per task, so no state crosses tasks.
    """
    todo = list(tasks)
    results: list[TaskResult] = []
    for task in todo:
        results.append(
            await run_task(
                task,
                policy,
                middleware=middleware(),
                step_limit=step_limit,
                command_timeout=command_timeout,
            )
        )
        if progress is not None:
            progress(len(results), len(todo))
    return SuiteResult(label=label, results=results)
