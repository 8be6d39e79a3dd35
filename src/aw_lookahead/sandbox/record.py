"""Recording a trajectory: commands run in order in one fresh sandbox, real output as observations.

:func:`record_trajectory` is the async core; :func:`record_trajectory_sync`
its blocking twin on a private :class:`~aw_lookahead._sync.LoopThread`, safe
to call while an event loop runs. The data generators and ``aw-lookahead
record`` build on them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from aw_lookahead._sync import own_loop_twin
from aw_lookahead.errors import UsageError
from aw_lookahead.trajectory import Domain, Trajectory, Turn

from .terminal import TerminalSandbox, observation

__all__ = ["record_trajectory", "record_trajectory_sync"]


async def record_trajectory(
    commands: Sequence[str],
    *,
    task: str | None = None,
    domain: Domain | str = Domain.TERMINAL,
    timeout: float = 10.0,  # noqa: ASYNC109
    env: Mapping[str, str] | None = None,
    root: str | Path | None = None,
    network: bool = False,
    id: str | None = None,
) -> Trajectory:
    """Run ``commands`` in order in one fresh sandbox and record what a terminal showed.

    Each turn's action is the keystroke form ``[{"keystrokes": cmd + "\\n",
    "duration": d}]`` (``d`` is the run time rounded up to whole seconds, at
    least 1.0, so quick commands give identical actions from run to run); its
    observation is :func:`observation` of the result; its metadata holds
    ``exit_code``, ``duration_s`` and ``timed_out``.
    """
    if isinstance(commands, str):
        raise UsageError("commands must be a list of command strings, not one string")
    turns: list[Turn] = []
    async with TerminalSandbox(network=network, root=root, env=env) as sb:
        for command in commands:
            result = await sb.run(command, timeout=timeout)
            duration = float(max(1, math.ceil(result.duration_s)))
            turns.append(
                Turn(
                    action=[{"keystrokes": command + "\n", "duration": duration}],
                    observation=observation(result),
                    metadata={
                        "exit_code": result.exit_code,
                        "duration_s": round(result.duration_s, 3),
                        "timed_out": result.timed_out,
                    },
                )
            )
            if not sb.alive:
                break
        isolated = sb.network_isolated
    return Trajectory(
        domain=Domain.parse(domain),
        task=task,
        turns=turns,
        id=id,
        metadata={"source": "aw_lookahead.sandbox", "network_isolated": isolated},
    )


record_trajectory_sync = own_loop_twin(record_trajectory, "aw-sandbox-record")
