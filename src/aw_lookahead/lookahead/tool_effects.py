"""Non-shell tools judged by effect: annotations when a tool has them, inference when not.

The rule (documented in ``docs/engine.md``):

1. **Annotations win.** A tool that states MCP hints is judged by them: an
   explicit ``destructiveHint: true`` always counts (whatever else is stated,
   also beside the other three hints); otherwise ``readOnlyHint: true`` reads
   only, ``destructiveHint: false`` may write but destroys nothing, and any
   other stated hints mean "may be destructive" (MCP's defaults).
2. **Inference** for a tool without hints, from everything it says: its name,
   its whole description, its schema and the call's arguments:

   * ``destroys`` - a destroying verb in the name (``delete``, ``remove``,
     ``drop``, ``purge``, ``destroy``, ``truncate``, ``overwrite``, ``kill``,
     ``reset``, ``wipe``, ``erase``, ``unlink``, ``rmdir``, ``terminate``,
     ``uninstall``, ``flush``, ``prune``, ``cleanup``...) or leading its
     description ("Deletes a file..."); arguments that ask for deletion, at
     any depth (:mod:`._call_arguments`: a ``delete``/``purge`` flag, an
     ``action``/``op``/``mode``/``method`` naming a deleting verb, SQL that
     drops, truncates, deletes or updates every row, an HTTP ``DELETE``
     however overridden, a shell command or argv array that destroys); a
     deleting effect said anywhere in the description
     (:mod:`._description_effects`) of a tool whose name does not say it writes
     (a writing tool's detail is left to the simulation: ``unknown``).
   * ``read_only`` - the name starts with a reading verb (``get``, ``list``,
     ``read``, ``search``, ``fetch``, ``describe``, ``show``, ``find``,
     ``query``, ``lookup``, ``view``, ``count``, ``check``, ``stat``,
     ``inspect``), no part of it writes (a verb joined on by ``and``/``then``,
     as in ``list_and_cleanup`` or ``check_and_fix``, must read too), the
     description says no deleting effect, and neither the schema nor the
     arguments carry a write-ish property (``content``, ``body``, ``data``,
     ``payload``, ``force``, ``overwrite``, ``recursive``, a ``method`` other
     than ``GET``/``HEAD``/``OPTIONS``, a shell command, SQL that writes).
   * otherwise ``unknown``: it may write.

Argument values are judged for annotated tools too (a ``run_command`` tool's
``rm -rf data`` destroys whatever else the tool says), unless its hints call it
read-only or non-destructive.

What follows: with the world model down, ``read_only`` and
annotated-non-destructive tools run with a note; ``destroys`` and
``unknown`` ones are blocked (:mod:`.safety`). With the model up, an
inferred ``destroys`` is flagged ``risky`` even when the prediction shows
success (:class:`~.rules.RuleJudge`), like a destroying shell command.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from aw_lookahead.trajectory import Action, Domain, Trajectory

from ._call_arguments import DELETE_VERBS, argument_effects, verb_tokens
from ._description_effects import described_deletion
from .routing import declared_annotations

__all__ = ["ToolRisk", "input_schema", "tool_call", "tool_definition", "tool_risk"]

RiskKind = Literal["read_only", "non_destructive", "destroys", "unknown"]


@dataclass(frozen=True)
class ToolRisk:
    """What a tool call may do, and whether that was ``inferred`` (no annotations said so)."""

    kind: RiskKind
    reason: str
    inferred: bool


_DESTROY_VERBS = DELETE_VERBS | frozenset(
    {"truncate", "overwrite", "kill", "reset", "terminate", "uninstall", "flush"}
)
_READ_VERBS = frozenset(
    {
        "get",
        "list",
        "read",
        "search",
        "fetch",
        "describe",
        "show",
        "find",
        "query",
        "lookup",
        "view",
        "count",
        "check",
        "stat",
        "inspect",
    }
)
_WRITE_VERBS = frozenset(
    {
        "write",
        "create",
        "update",
        "set",
        "put",
        "post",
        "patch",
        "edit",
        "add",
        "insert",
        "upload",
        "move",
        "rename",
        "copy",
        "send",
        "run",
        "exec",
        "execute",
        "apply",
        "save",
        "modify",
        "replace",
        "push",
        "commit",
        "install",
        "append",
        "merge",
        "restart",
        "stop",
        "clean",
        "clear",
        "fix",
        "repair",
        "sync",
        "migrate",
        "import",
        "archive",
        "restore",
        "revert",
        "rollback",
        "rebuild",
        "reindex",
        "compact",
        "vacuum",
        "trim",
        "sanitize",
        "evict",
        "expire",
        "revoke",
        "cancel",
        "disable",
        "deactivate",
        "unregister",
        "unsubscribe",
        "unset",
        "detach",
        "quarantine",
        "consume",
        "ack",
        "mark",
        "toggle",
        "process",
        "handle",
        "mutate",
        "change",
        "trigger",
        "invoke",
    }
)
_CONJUNCTIONS = frozenset({"and", "then", "plus", "also", "or"})
_WRITE_ARGS = frozenset(
    {
        "content",
        "contents",
        "body",
        "data",
        "payload",
        "force",
        "overwrite",
        "recursive",
        "new_content",
        "new_text",
        "edits",
        "patch",
        "diff",
    }
)
_SHELL_ARGS = frozenset({"command", "cmd", "commands", "script", "shell", "bash", "command_line"})


def _joined_verbs_read(words: list[str]) -> bool:
    """Whether every verb joined on to a reading verb (``list_and_cleanup``) reads too."""
    for i, word in enumerate(words[1:-1], start=1):
        if (
            word in _CONJUNCTIONS
            and words[i - 1] in _READ_VERBS
            and words[i + 1] not in _READ_VERBS
        ):
            return False
    return True


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def input_schema(tool: Any) -> Any:
    """The tool's input schema, however its definition spells the key (MCP, SDK, OpenAI)."""
    return _get(tool, "inputSchema") or _get(tool, "input_schema") or _get(tool, "parameters")


def _schema_properties(tool: Any) -> set[str]:
    schema = input_schema(tool)
    props = _get(schema, "properties") if schema is not None else None
    return {str(k).lower() for k in props} if isinstance(props, Mapping) else set()


def _annotated_risk(hints: Mapping[str, bool], name: str, arg_destroys: str | None) -> ToolRisk:
    if hints.get("destructive_hint") is True:
        if arg_destroys:
            return ToolRisk("destroys", f"tool {name!r}: {arg_destroys}", True)
        return ToolRisk("destroys", f"tool {name!r} is annotated destructiveHint=true", False)
    if hints.get("read_only_hint") is True:
        return ToolRisk("read_only", f"tool {name!r} is annotated readOnlyHint", False)
    if hints.get("destructive_hint") is False:
        return ToolRisk(
            "non_destructive", f"tool {name!r} is annotated destructiveHint=false", False
        )
    if arg_destroys:
        return ToolRisk("destroys", f"tool {name!r}: {arg_destroys}", True)
    return ToolRisk(
        "unknown",
        f"tool {name!r} is not annotated readOnlyHint or destructiveHint=false",
        False,
    )


def tool_risk(tool: Any | None, name: str, arguments: Mapping[str, Any]) -> ToolRisk:
    """What a call of ``name`` with ``arguments`` may do (see the module docstring)."""
    arg_destroys, arg_writes = argument_effects(arguments)
    hints = declared_annotations(tool) if tool is not None else None
    if hints is not None:
        return _annotated_risk(hints, name, arg_destroys)
    if tool is None:
        if arg_destroys:
            return ToolRisk("destroys", f"tool {name!r}: {arg_destroys}", True)
        return ToolRisk(
            "unknown", f"tool {name!r} has no definition, so it may be destructive", True
        )
    words = verb_tokens(name)
    verb = next((w for w in words if w in _DESTROY_VERBS), None)
    if verb is not None:
        return ToolRisk("destroys", f"tool {name!r} is named for {verb!r}", True)
    description = str(_get(tool, "description") or "")
    lead = verb_tokens(description)[:2]
    verb = next((w.rstrip("s") for w in lead if w.rstrip("s") in _DESTROY_VERBS), None)
    if verb is not None:
        return ToolRisk("destroys", f"tool {name!r} is described as {verb}", True)
    if arg_destroys:
        return ToolRisk("destroys", f"tool {name!r}: {arg_destroys}", True)
    titles = (_get(tool, "title"), _get(_get(tool, "annotations"), "title"))
    said = described_deletion(". ".join([*(str(t) for t in titles if t), description]))
    writes_by_name = bool(set(words) & _WRITE_VERBS)
    if said is not None and not writes_by_name:
        return ToolRisk("destroys", f"tool {name!r} says it deletes ({said!r})", True)
    write_props = (_schema_properties(tool) | {str(k).lower() for k in arguments}) & (
        _WRITE_ARGS | _SHELL_ARGS
    )
    if (
        words
        and words[0] in _READ_VERBS
        and not writes_by_name
        and _joined_verbs_read(words)
        and not write_props
        and arg_writes is None
    ):
        return ToolRisk(
            "read_only",
            f"tool {name!r} reads only, by its name, description and arguments (no annotations)",
            True,
        )
    why = (
        arg_writes
        or (f"its description says {said!r}" if said else None)
        or (f"property {sorted(write_props)[0]!r}" if write_props else "its name")
    )
    return ToolRisk("unknown", f"tool {name!r} has no annotations and may write ({why})", True)


def tool_call(trajectory: Trajectory, action: Action) -> tuple[str, Mapping[str, Any]] | None:
    """``(name, arguments)`` when ``action`` is a tool call, else ``None``."""
    if (
        isinstance(action, Mapping)
        and isinstance(action.get("name"), str)
        and ("arguments" in action or "args" in action or trajectory.domain is Domain.MCP)
    ):
        args = action.get("arguments", action.get("args"))
        return str(action["name"]), args if isinstance(args, Mapping) else {}
    return None


def tool_definition(trajectory: Trajectory, name: str) -> Mapping[str, Any] | None:
    """The definition of tool ``name`` in the trajectory's tool list, if it has one."""
    return next(
        (t for t in trajectory.tools or () if isinstance(t, Mapping) and t.get("name") == name),
        None,
    )
