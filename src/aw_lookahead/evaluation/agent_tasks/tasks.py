"""The agent task suite's data: closed-loop terminal tasks in families held out from training.

Each :class:`AgentTask` is run in a fresh :class:`~aw_lookahead.sandbox.TerminalSandbox`:
its ``setup`` commands build the starting files, the agent gets the ``instruction``
(what a user would ask for), and the task succeeded when ``check`` exits 0 afterwards
(it runs from the sandbox's home folder). ``solution`` is one known-good sequence of
commands; only tests use it (``tests/test_evaluation_agent_tasks.py`` checks, in the
real sandbox, that ``check`` fails after ``setup`` alone and passes after ``solution``).

:data:`FAMILIES` are disjoint from every family of the terminal data generator
(``aw_lookahead.datagen.terminal.spec.FAMILIES``) and of the trap suite
(``bench/trap_tasks.py``), so no policy or world model was trained on them; a test
checks that against the live registry. The tools are those of a plain Debian
(coreutils, sed, mawk, grep, tar, gzip, python3), which the training families use too:
what is held out is the task, not the command vocabulary.

The tasks themselves are written in :mod:`.families` (one module per group of families);
this module gathers them, in a fixed order, and selects among them.
"""

from __future__ import annotations

from aw_lookahead.errors import ConfigError

from .families.configs import BULK_REWRITE, DOTENV_FILES, JSON_CONFIG
from .families.files import BACKUP_ARCHIVE, FILE_ORGANIZE, SCRIPT_AUTHORING
from .families.reports import CSV_REPORT, LOG_TRIAGE, SORTED_OUTPUTS
from .task import AgentTask

__all__ = ["FAMILIES", "TASKS", "AgentTask", "select_tasks"]

TASKS: tuple[AgentTask, ...] = (
    *CSV_REPORT,
    *JSON_CONFIG,
    *BACKUP_ARCHIVE,
    *LOG_TRIAGE,
    *BULK_REWRITE,
    *DOTENV_FILES,
    *SORTED_OUTPUTS,
    *SCRIPT_AUTHORING,
    *FILE_ORGANIZE,
)
"""Every task of the suite, family by family."""

FAMILIES: tuple[str, ...] = tuple(dict.fromkeys(t.family for t in TASKS))
"""The suite's families, in order."""


def select_tasks(
    families: tuple[str, ...] | list[str] = (), names: tuple[str, ...] | list[str] = ()
) -> list[AgentTask]:
    """The tasks of ``families`` and the tasks named in ``names`` (all tasks when both are empty).

    Raises :class:`~aw_lookahead.errors.ConfigError` for an unknown family or name, listing
    the valid ones.
    """
    unknown = sorted(set(families) - set(FAMILIES))
    if unknown:
        raise ConfigError(f"unknown task family {unknown[0]!r}; choose from {', '.join(FAMILIES)}")
    known = {t.name for t in TASKS}
    missing = sorted(set(names) - known)
    if missing:
        raise ConfigError(
            f"unknown task {missing[0]!r}; the {len(known)} tasks are listed in "
            "aw_lookahead.evaluation.agent_tasks.TASKS"
        )
    if not families and not names:
        return list(TASKS)
    return [t for t in TASKS if t.family in families or t.name in names]
