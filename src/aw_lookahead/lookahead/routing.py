"""Risk routing: decide *before* simulating whether an action is known to be read-only.

Read-only actions may skip the world model (``simulate="risky"``); everything
else is simulated. The classifiers are conservative on purpose: a false
"read-only" would let a destructive action run unchecked, while a false
"may write" only costs one simulation.

Guarantees:

* MCP tools: only an explicit ``readOnlyHint: true`` makes a call read-only, and
  not beside an explicit ``destructiveHint: true`` (that one always counts).
  A missing annotation, a missing tool definition or an unknown tool means
  "may be destructive", as MCP's own defaults say.
* Terminal commands (:mod:`._readonly`, on the same bash parse as the effect
  classifier): read-only only when every command of every pipeline and list
  is on the allow list, called by its bare name, uses no flag from that
  program's write/exec list however abbreviated (``sort -o``/``--o=``,
  ``sed -i`` and ``w``/``e`` scripts, ``rg --pre``, ``git grep -O``, ``find
  -exec``, ``tree -o``, ``date -s``/``--s=``, ...), and the line has no
  redirection (except to ``/dev/null``), substitution, assignment,
  compound command or background job (``tee``, ``xargs``, ``eval``, ``sh
  -c`` are not on the list). Keystroke actions with control keys other
  than Enter are never read-only; a line is read as bash will run it
  (history expansion against the trajectory, an unfinished line carried
  over), and is read-only only when every reading of it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from aw_lookahead.trajectory import Action, Domain, Trajectory

from ._readonly import is_read_only_command
from .keystrokes.reader import KEY_NAME
from .keystrokes.replays import replays as _replays

__all__ = [
    "RiskRouter",
    "Route",
    "TypedText",
    "declared_annotations",
    "is_read_only_command",
    "lines_run",
    "terminal_command_text",
    "tool_annotations",
    "typed_text",
]

_MCP_DEFAULTS: dict[str, bool] = {
    "read_only_hint": False,
    "destructive_hint": True,
    "idempotent_hint": False,
    "open_world_hint": True,
}
_CAMEL = {
    "readOnlyHint": "read_only_hint",
    "destructiveHint": "destructive_hint",
    "idempotentHint": "idempotent_hint",
    "openWorldHint": "open_world_hint",
}


class Route(BaseModel):
    """The router's answer for one action: ``read_only`` actions may skip simulation."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    read_only: bool
    reason: str


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def _merge_hints(out: dict[str, bool], raw: Any) -> None:
    if raw is None:
        return
    if not isinstance(raw, Mapping):
        raw = {k: getattr(raw, k, None) for k in (*_CAMEL, *_CAMEL.values())}
    for key, value in raw.items():
        name = _CAMEL.get(key, key)
        if name in _MCP_DEFAULTS and isinstance(value, bool):
            out[name] = value


def _stated_hints(tool: Any) -> dict[str, bool]:
    out: dict[str, bool] = {}
    _merge_hints(out, _get(tool, "annotations"))
    metadata = _get(tool, "metadata")
    if isinstance(metadata, Mapping):
        _merge_hints(out, {k: v for k, v in metadata.items() if k in _CAMEL or k in _MCP_DEFAULTS})
        mcp = metadata.get("mcp")
        if isinstance(mcp, Mapping):
            inner = mcp.get("tool")
            if inner is not None:
                _merge_hints(out, _get(inner, "annotations"))
    return out


def tool_annotations(tool: Any) -> dict[str, bool]:
    """The four MCP hints of ``tool``, with MCP's defaults for the missing ones.

    Reads an MCP tool dict (``{"annotations": {...}}``, camelCase or
    snake_case), an MCP ``Tool`` object, and LangChain tools in both adapter
    layouts: flat ``metadata["readOnlyHint"]`` (langchain-mcp-adapters) and
    nested ``metadata["mcp"]["tool"]["annotations"]`` (langchain.mcp). ``None``
    values count as missing.
    """
    return {**_MCP_DEFAULTS, **_stated_hints(tool)}


def declared_annotations(tool: Any) -> dict[str, bool] | None:
    """The hints ``tool`` states itself, or ``None`` when it states none.

    Every stated hint counts, even one equal to MCP's default: a tool that states
    ``destructiveHint: true`` beside the other three hints says it destroys, and is
    judged so. (Adapters that describe a tool without annotations, such as
    :func:`~aw_lookahead.langgraph.convert.tool_definitions`, write none.)
    """
    return _stated_hints(tool) or None


# --------------------------------------------------------------------------- terminal


_RUN_KEYS = frozenset({"Enter", "C-m", "C-j", "KPEnter"})


@dataclass(frozen=True)
class TypedText:
    """What a terminal action runs, read as bash's readline reads the keys.

    ``text``: the lines it runs (after editing keys and history expansion), the lines it
    abandons with ``C-c`` and the line it leaves unfinished, one per line; ``variants``:
    the same under every setting bash may run with (``text`` is the first); and
    ``edited_keys``: why the keys cannot be read as lines (``Tab`` completion, ``C-r``,
    history beyond what the trajectory shows...), empty when they can.
    """

    text: str
    edited_keys: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()


def typed_text(action: Action, history: Sequence[Action] | Trajectory = ()) -> TypedText | None:
    """What a terminal action runs, as bash reads it; ``None`` for other actions.

    ``history``: the earlier actions of the trajectory, or the trajectory (what ``!!``,
    ``Up``, ``fc -s`` recall, and the unfinished line the action continues). Keystrokes are
    replayed with readline's bindings (:mod:`.keystrokes.reader`); plain command text is
    also judged as it is, so its ``variants`` hold the text itself first.
    """
    reduced = _replays(action, history)
    if reduced is None:
        return None
    plain = isinstance(action, str) or (
        isinstance(action, Mapping) and isinstance(action.get("command"), str)
    )
    texts: list[str] = []
    if isinstance(action, str):
        texts.append(action)
    elif plain and isinstance(action, Mapping):
        texts.append(str(action["command"]))
    texts += [text for r in reduced for text in r.texts()]
    unknown = tuple(dict.fromkeys(r.unknown for r in reduced if r.unknown is not None))
    variants = tuple(dict.fromkeys(texts))
    return TypedText(variants[0] if variants else "", unknown, variants)


def lines_run(action: Action, history: Sequence[Action] = ()) -> str | None:
    """The lines a terminal action runs, as bash reads them with its usual settings, one per
    line; ``None`` for another action, or keys that cannot be read as lines. Unlike
    :func:`typed_text` (what to judge), an abandoned or unfinished line is not there."""
    reduced = _replays(action, history)
    if not reduced or any(r.unknown is not None for r in reduced):
        return None
    return "\n".join(reduced[0].lines)


def terminal_command_text(action: Action) -> str | None:
    """The shell text an action runs: keystrokes read as bash reads them, plain text as is.

    ``None`` when the action is not a terminal action (see :func:`typed_text`).
    """
    typed = typed_text(action)
    return typed.text if typed is not None else None


def _has_control_keys(action: Action) -> bool:
    if isinstance(action, str) or (isinstance(action, Mapping) and "command" in action):
        return False
    items = [action] if isinstance(action, Mapping) else action
    return any(
        isinstance(item, Mapping)
        and isinstance(item.get("keystrokes"), str)
        and (
            (
                KEY_NAME.fullmatch(item["keystrokes"].strip()) is not None
                and item["keystrokes"].strip() not in _RUN_KEYS
            )
            or any((c < " " and c not in "\r\n") or c == "\x7f" for c in item["keystrokes"])
        )
        for item in items
    )


# --------------------------------------------------------------------------- router


class RiskRouter:
    """Decides, before any simulation, whether an action is known to be read-only.

    ``tools`` adds tool definitions (MCP dicts or LangChain tools) to those in
    ``trajectory.tools``; ``read_only_domains`` are domains whose every action
    is a query (default: search).
    """

    def __init__(
        self,
        *,
        tools: Iterable[Any] | None = None,
        read_only_domains: Iterable[Domain] = (Domain.SEARCH,),
    ) -> None:
        self._tools: dict[str, Any] = {}
        for tool in tools or ():
            name = _get(tool, "name")
            if isinstance(name, str):
                self._tools[name] = tool
        self.read_only_domains = frozenset(read_only_domains)

    def find_tool(self, trajectory: Trajectory, name: str) -> Any:
        """The definition of tool ``name``: the trajectory's first, then the router's own."""
        for tool in trajectory.tools or ():
            if tool.get("name") == name:
                return tool
        return self._tools.get(name)

    def route(self, trajectory: Trajectory, action: Action) -> Route:
        """Read-only (may skip simulation) or not, with the reason."""
        if (
            isinstance(action, Mapping)
            and isinstance(action.get("name"), str)
            and ("arguments" in action or "args" in action or trajectory.domain is Domain.MCP)
        ):
            name = str(action["name"])
            tool = self.find_tool(trajectory, name)
            if tool is None:
                return Route(
                    read_only=False,
                    reason=f"tool {name!r} has no definition; treated as possibly destructive",
                )
            hints = tool_annotations(tool)
            if hints["read_only_hint"] and _stated_hints(tool).get("destructive_hint") is not True:
                return Route(read_only=True, reason=f"tool {name!r} is annotated readOnlyHint")
            return Route(
                read_only=False,
                reason=f"tool {name!r} is not annotated read-only "
                f"(destructiveHint={hints['destructive_hint']})",
            )
        if trajectory.domain in self.read_only_domains:
            return Route(read_only=True, reason=f"{trajectory.domain.value} actions only query")
        if trajectory.domain in (Domain.TERMINAL, Domain.SWE) or not isinstance(action, str):
            typed = typed_text(action, trajectory)
            if typed is None or typed.edited_keys or _has_control_keys(action):
                return Route(
                    read_only=False,
                    reason="not plain terminal text (control keys or an unknown action shape)",
                )
            for text in typed.variants or (typed.text,):
                read_only, why = is_read_only_command(text)
                if not read_only:
                    break
            return Route(read_only=read_only, reason=why)
        return Route(
            read_only=False, reason=f"no read-only rule for {trajectory.domain.value} actions"
        )
