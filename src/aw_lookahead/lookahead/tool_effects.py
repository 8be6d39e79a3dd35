"""Non-shell tools judged by effect: annotations when a tool has them, inference when not.

The rule (documented in ``docs/engine.md``):

1. **Annotations win.** A tool that states MCP hints is judged by them:
   ``readOnlyHint: true`` reads only; ``destructiveHint: false`` may write
   but destroys nothing; any other stated hints mean "may be destructive"
   (MCP's defaults). Hints that only restate all four defaults count as none.
2. **Inference** for a tool without hints, from its name, description,
   schema and the call's arguments:

   * ``destroys`` - a destroying verb in the name (``delete``, ``remove``,
     ``drop``, ``purge``, ``destroy``, ``truncate``, ``overwrite``, ``kill``,
     ``reset``, ``wipe``, ``erase``, ``unlink``, ``rmdir``, ``terminate``,
     ``uninstall``, ``flush``, ``prune``) or leading its description
     ("Deletes a file..."); an HTTP method argument ``DELETE``; a shell
     command argument that destroys (judged by :mod:`.shell_effects`); SQL
     that drops, truncates or deletes rows.
   * ``read_only`` - the name starts with a reading verb (``get``, ``list``,
     ``read``, ``search``, ``fetch``, ``describe``, ``show``, ``find``,
     ``query``, ``lookup``, ``view``, ``count``, ``check``, ``stat``,
     ``inspect``), no part of it writes, and neither the schema nor the
     arguments carry a write-ish property (``content``, ``body``, ``data``,
     ``payload``, ``force``, ``overwrite``, ``recursive``, a ``method`` other
     than ``GET``/``HEAD``/``OPTIONS``, a shell command, SQL that writes).
   * otherwise ``unknown``: it may write.

Argument values (a shell command, SQL, an HTTP method) are judged for
annotated tools too (a ``run_command`` tool's ``rm -rf data`` destroys
whatever else the tool says), unless its hints call it read-only or
non-destructive.

What follows: with the world model down, ``read_only`` and
annotated-non-destructive tools run with a note; ``destroys`` and
``unknown`` ones are blocked (:mod:`.safety`). With the model up, an
inferred ``destroys`` is flagged ``risky`` even when the prediction shows
success (:class:`~.rules.RuleJudge`), like a destroying shell command.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from aw_lookahead.trajectory import Action, Domain, Trajectory

from ._code_effects import sql_effects
from .routing import declared_annotations
from .shell_effects import shell_effects

__all__ = ["ToolRisk", "input_schema", "tool_call", "tool_definition", "tool_risk"]

RiskKind = Literal["read_only", "non_destructive", "destroys", "unknown"]


@dataclass(frozen=True)
class ToolRisk:
    """What a tool call may do, and whether that was ``inferred`` (no annotations said so)."""

    kind: RiskKind
    reason: str
    inferred: bool


_DESTROY_VERBS = frozenset(
    {
        "delete",
        "del",
        "remove",
        "rm",
        "drop",
        "purge",
        "destroy",
        "truncate",
        "overwrite",
        "kill",
        "reset",
        "wipe",
        "erase",
        "unlink",
        "rmdir",
        "terminate",
        "uninstall",
        "flush",
        "prune",
    }
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
    }
)
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
_SQL_ARGS = frozenset({"sql", "statement", "statements"})
_SQL_TEXT = re.compile(
    r"^\s*(?:select|with|insert|update|delete|drop|truncate|alter|create|replace|merge)\b", re.I
)
_METHOD_ARGS = frozenset({"method", "http_method", "verb", "request_method"})
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_WRITE_SQL = re.compile(
    r"^\s*(?:insert|update|create|alter|replace|merge|grant|revoke|upsert|copy)\b", re.I
)


def _tokens(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [t.lower() for t in re.split(r"[^A-Za-z0-9]+", spaced) if t]


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


def _argument_effects(arguments: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """``(why it destroys, why it writes)`` from the call's argument values."""
    destroys: str | None = None
    writes: str | None = None
    for key, value in arguments.items():
        low = str(key).lower()
        if isinstance(value, str) and low in _SHELL_ARGS:
            effects = shell_effects(value)
            if effects and effects[0].severity == "destroys":
                destroys = destroys or f"argument {key!r}: {effects[0].reason}"
            writes = writes or f"argument {key!r} runs a command"
        elif isinstance(value, str) and (
            low in _SQL_ARGS or (low == "query" and _SQL_TEXT.match(value))
        ):
            hit = sql_effects("sql", [value])
            if hit:
                destroys = destroys or f"argument {key!r}: {hit[0].reason}"
            elif _WRITE_SQL.match(value):
                writes = writes or f"argument {key!r} is SQL that writes"
        elif isinstance(value, str) and low in _METHOD_ARGS:
            method = value.strip().upper()
            if method == "DELETE":
                destroys = destroys or f"argument {key!r} is HTTP DELETE"
            elif method not in _SAFE_METHODS:
                writes = writes or f"argument {key!r} is HTTP {method}"
        elif low in _WRITE_ARGS and value not in (False, None, "", [], {}):
            writes = writes or f"argument {key!r} writes or forces"
    return destroys, writes


def tool_risk(tool: Any | None, name: str, arguments: Mapping[str, Any]) -> ToolRisk:
    """What a call of ``name`` with ``arguments`` may do (see the module docstring)."""
    arg_destroys, arg_writes = _argument_effects(arguments)
    hints = declared_annotations(tool) if tool is not None else None
    if hints is not None:
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
    if tool is None:
        if arg_destroys:
            return ToolRisk("destroys", f"tool {name!r}: {arg_destroys}", True)
        return ToolRisk(
            "unknown", f"tool {name!r} has no definition, so it may be destructive", True
        )
    words = _tokens(name)
    verb = next((w for w in words if w in _DESTROY_VERBS), None)
    if verb is not None:
        return ToolRisk("destroys", f"tool {name!r} is named for {verb!r}", True)
    lead = _tokens(str(_get(tool, "description") or ""))[:2]
    verb = next((w.rstrip("s") for w in lead if w.rstrip("s") in _DESTROY_VERBS), None)
    if verb is not None:
        return ToolRisk("destroys", f"tool {name!r} is described as {verb}", True)
    if arg_destroys:
        return ToolRisk("destroys", f"tool {name!r}: {arg_destroys}", True)
    write_props = (_schema_properties(tool) | {str(k).lower() for k in arguments}) & (
        _WRITE_ARGS | _SHELL_ARGS
    )
    if (
        words
        and words[0] in _READ_VERBS
        and not set(words) & _WRITE_VERBS
        and not write_props
        and arg_writes is None
    ):
        return ToolRisk(
            "read_only",
            f"tool {name!r} reads only, by its name and arguments (no annotations)",
            True,
        )
    why = arg_writes or (f"property {sorted(write_props)[0]!r}" if write_props else "its name")
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
