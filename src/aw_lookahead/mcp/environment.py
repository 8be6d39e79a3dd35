"""The proxy's downstream server as an environment: look through its read-only tools first.

For servers whose answers we know (the filesystem server's ``get_file_info`` and
``list_directory``; mcp-server-git's ``git_branch``; the memory server's
``read_graph``), a call that needs a path, a branch or a knowledge-graph entity
(``add_observations`` refuses an unknown one) is checked before it is simulated:
what is observed missing vetoes it with certainty, with the nearest names that exist.
Only tools in :data:`READ_ONLY_LOOKS` are ever called, and only when the server
does not annotate them as writing; a look that errors in any other way than
"not found" is unknown, never missing.
"""

from __future__ import annotations

import json
import posixpath
import re
import time
from collections.abc import Mapping
from typing import Any

from aw_lookahead.lookahead.environment import Fact, Observation
from aw_lookahead.lookahead.environment.similar import similar_names
from aw_lookahead.lookahead.tool_effects import tool_call
from aw_lookahead.trajectory import Action, Trajectory

from .downstream import READ_ONLY_LOOKS, Downstream
from .results import result_text

__all__ = ["DownstreamEnvironment"]

# tool -> (argument, what it needs): "path" exists, "dir" is a folder, "parent" the folder it
# goes into exists, "absent" it does not exist yet (the filesystem server's move refuses one)
_FS_NEEDS: dict[str, tuple[tuple[str, str], ...]] = {
    "read_file": (("path", "path"),),
    "read_text_file": (("path", "path"),),
    "read_media_file": (("path", "path"),),
    "edit_file": (("path", "path"),),
    "get_file_info": (("path", "path"),),
    "list_directory": (("path", "dir"),),
    "list_directory_with_sizes": (("path", "dir"),),
    "directory_tree": (("path", "dir"),),
    "search_files": (("path", "dir"),),
    "write_file": (("path", "parent"),),
    "move_file": (("source", "path"), ("destination", "parent"), ("destination", "absent")),
}
_GIT_REF_TOOLS = {"git_checkout": "branch_name"}
_NOT_FOUND = re.compile(r"ENOENT|no such file|not found|does not exist", re.IGNORECASE)
_ENTRY = re.compile(r"^\[(FILE|DIR)\]\s+(.+)$")


class DownstreamEnvironment:
    """What a tool call needs, looked up on the downstream server before it is simulated."""

    def __init__(self, downstream: Downstream) -> None:
        self.downstream = downstream

    async def observe(self, trajectory: Trajectory, action: Action) -> Observation | None:
        call = tool_call(trajectory, action)
        if call is None:
            return None
        name, arguments = call
        looks = await self._looks()
        started = time.perf_counter()
        facts: list[Fact] = []
        listings: dict[str, list[str]] = {}
        missing: Fact | None = None
        if name in _FS_NEEDS and {"get_file_info", "list_directory"} <= looks:
            for argument, need in _FS_NEEDS[name]:
                value = arguments.get(argument)
                if isinstance(value, str) and value:
                    fact = await self._path(value, need, f"{name} needs `{argument}`", listings)
                    if fact is not None:
                        facts.append(fact)
                        if fact.found if need == "absent" else not fact.found:
                            missing = fact
                            break
        elif name in _GIT_REF_TOOLS and "git_branch" in looks:
            missing = await self._ref(arguments, _GIT_REF_TOOLS[name], facts)
        elif name == "add_observations" and "read_graph" in looks:
            missing = await self._entities(arguments, facts)
        else:
            return None
        return Observation(
            facts=facts,
            listings=listings,
            cwd="(the server's)",
            missing=missing,
            seconds=time.perf_counter() - started,
        )

    async def _looks(self) -> set[str]:
        out = set()
        for tool in await self.downstream.tools():
            hints = tool.annotations
            writes = hints is not None and (
                hints.read_only_hint is False or hints.destructive_hint is True
            )
            if tool.name in READ_ONLY_LOOKS and not writes:
                out.add(tool.name)
        return out

    async def _ask(self, tool: str, arguments: Mapping[str, Any]) -> tuple[bool, str]:
        assert tool in READ_ONLY_LOOKS
        result = await self.downstream.call(tool, dict(arguments), look=True)
        return not result.is_error, result_text(result)

    async def _path(
        self, path: str, need: str, role: str, listings: dict[str, list[str]]
    ) -> Fact | None:
        target = posixpath.dirname(path.rstrip("/")) if need == "parent" else path
        if not target:
            return None
        ok, text = await self._ask("get_file_info", {"path": target})
        if not ok and not _NOT_FOUND.search(text):
            return None  # outside the allowed folders, or another error: unknown
        if ok:
            is_dir = bool(re.search(r"isDirectory:\s*true", text))
            if need in ("dir", "parent") and not is_dir:
                return Fact(
                    kind="path",
                    subject=target,
                    found=False,
                    role=role,
                    detail="is a file, not a folder",
                )
            if need == "absent":
                return Fact(
                    kind="absent",
                    subject=path,
                    found=True,
                    role=role,
                    detail="the move refuses to replace it",
                )
            return Fact(
                kind="path",
                subject=path,
                found=True,
                role=role,
                detail="folder" if is_dir else "file",
            )
        if need == "absent":
            return Fact(kind="absent", subject=path, found=False, role=role)
        folder, name = posixpath.split(target.rstrip("/"))
        entries: list[str] | None = None
        while folder and folder != "/":
            ok, text = await self._ask("list_directory", {"path": folder})
            if ok:
                seen = [m.groups() for m in map(_ENTRY.match, text.splitlines()) if m]
                entries = [name for _, name in seen]
                listings[folder + "/"] = [n + ("/" if k == "DIR" else "") for k, n in seen]
                break
            folder, name = posixpath.split(folder)
        rest = target[len(posixpath.join(folder, name)) :]
        hint = [posixpath.join(folder, h) + rest for h in similar_names(name, entries or [])]
        return Fact(
            kind="parent" if need == "parent" else "path",
            subject=path,
            found=False,
            where=(folder or "/") + "/" if entries is not None else "",
            role=role,
            detail=f"`{name}` does not exist in {folder}/" if need == "parent" else "",
            similar=hint,
        )

    async def _ref(self, arguments: Mapping[str, Any], key: str, facts: list[Fact]) -> Fact | None:
        repo, ref = arguments.get("repo_path"), arguments.get(key)
        if not isinstance(repo, str) or not isinstance(ref, str) or not ref:
            return None
        ok, text = await self._ask("git_branch", {"repo_path": repo, "branch_type": "all"})
        if not ok:
            return None
        names = {ln.strip().lstrip("* ").strip() for ln in text.splitlines() if ln.strip()}
        names |= {n.split("/", 2)[-1] for n in names if n.startswith("remotes/")}
        if ref in names or re.fullmatch(r"[0-9a-f]{4,40}|HEAD.*|.*[~^@:].*", ref):
            facts.append(Fact(kind="ref", subject=ref, found=True, where=repo))
            return None
        fact = Fact(
            kind="ref",
            subject=ref,
            found=False,
            where=repo,
            detail="branches: " + ", ".join(sorted(names)[:8]),
            similar=similar_names(ref, names),
        )
        facts.append(fact)
        return fact

    async def _entities(self, arguments: Mapping[str, Any], facts: list[Fact]) -> Fact | None:
        wanted = [
            str(o["entityName"])
            for o in arguments.get("observations") or []
            if isinstance(o, Mapping) and isinstance(o.get("entityName"), str)
        ]
        if not wanted:
            return None
        ok, text = await self._ask("read_graph", {})
        try:
            graph = json.loads(text) if ok else None
            names = {str(e["name"]) for e in graph["entities"]}  # type: ignore[index]
        except (ValueError, TypeError, KeyError):
            return None  # not the memory server's answer: unknown
        for entity in wanted:
            found = entity in names
            fact = Fact(
                kind="tool",
                subject=entity,
                found=found,
                where="the knowledge graph (read_graph)",
                detail="" if found else f"the entity `{entity}` is not in the knowledge graph",
                role="add_observations adds to it",
                similar=[] if found else similar_names(entity, names),
            )
            facts.append(fact)
            if not found:
                return fact
        return None
