"""What Python code can reach: deleting functions, commands it runs, names it computes.

The code is parsed with :mod:`ast` and read for what it *reaches*, not only what
it calls by the names the tables know:

* imports are followed through aliases (``import shutil as s``, ``from shutil
  import rmtree as r``), and a deleting function counts whether it is called or
  only referenced (``map(os.remove, files)``, ``f = shutil.rmtree``);
* commands (``os.system``, ``subprocess.*``, ``os.exec*``/``spawn*``,
  ``pty.spawn``, ``asyncio.create_subprocess_*``) are judged as shell when their
  text is literal and are possibly destructive when it is computed; ``ctypes``
  reaches anything;
* names computed at run time (``getattr(m, "rm"+"tree")``, ``__import__(x)``,
  ``importlib``, ``vars()``/``globals()``/``__dict__``, ``operator.methodcaller``,
  ``exec``/``eval``/``compile`` of computed code) are possibly destructive;
* string constants that are SQL that drops or deletes, or the HTTP method
  ``DELETE``, and calls named ``delete``/``drop``/``flushall`` count too.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from aw_lookahead.lookahead._shell_programs import Effect, Recurse

__all__ = ["python_effects"]

_DESTROY = {
    "rmtree": "deletes a directory tree",
    "unlink": "deletes a file",
    "rmdir": "deletes a directory",
    "removedirs": "deletes directories",
    "truncate": "truncates a file",
    "ftruncate": "truncates a file",
    "kill": "kills a process",
    "killpg": "kills a process group",
}
_MOVES = frozenset({"move", "rename", "replace", "renames", "remove"})
_OVERWRITE = frozenset({"write_text", "write_bytes", "copy", "copyfile", "copy2", "copytree"})
_MODULES = frozenset({"os", "posix", "nt", "shutil", "subprocess", "pathlib", "pty"})
_RUN_PREFIXES = ("exec", "spawn", "posix_spawn", "create_subprocess")
_RUN = frozenset(
    {"system", "popen", "getoutput", "getstatusoutput", "run", "call", "check_call"}
    | {"check_output", "Popen", "startfile"}
)
_RUNNERS = frozenset({"os", "posix", "nt", "subprocess", "commands", "pty", "?"})
_DYNAMIC = frozenset(
    {"__import__", "vars", "globals", "locals", "compile", "methodcaller", "attrgetter"}
    | {"import_module", "__getattribute__", "reload", "find_spec", "load_module"}
)
_DB_CALLS = frozenset({"delete", "delete_many", "delete_one", "drop", "drop_all", "flushall"})
_DB_CALLS = _DB_CALLS | {"flushdb", "drop_table", "drop_collection", "drop_database"}


def _literal(node: ast.AST) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


class _Reader:
    def __init__(self, tree: ast.AST, r: Recurse, sql: Callable[[list[str]], list[Effect]]):
        self.r = r
        self.sql = sql
        self.modules: dict[str, str] = {}  # local name -> module
        self.names: dict[str, tuple[str, str]] = {}  # local name -> (module, function)
        for n in ast.walk(tree):
            if isinstance(n, ast.Import):
                for a in n.names:
                    self.modules[a.asname or a.name.split(".")[0]] = a.name.split(".")[0]
            elif isinstance(n, ast.ImportFrom) and n.module:
                for a in n.names:
                    self.names[a.asname or a.name] = (n.module.split(".")[0], a.name)

    def receiver(self, node: ast.AST) -> str:
        """The module an expression names (``s`` after ``import shutil as s`` -> shutil)."""
        if isinstance(node, ast.Name):
            if node.id in self.modules:
                return self.modules[node.id]
            if node.id in self.names:
                return self.names[node.id][1]
            return node.id if node.id in _MODULES else ""
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "__import__"
            and node.args
        ):
            first = _literal(node.args[0])
            return first if isinstance(first, str) else "?"
        return ""

    def function(self, node: ast.AST) -> tuple[str, str]:
        """``(module, name)`` a reference resolves to (``r`` -> ``("shutil", "rmtree")``)."""
        if isinstance(node, ast.Attribute):
            return self.receiver(node.value), node.attr
        if isinstance(node, ast.Name):
            return self.names.get(node.id, ("", node.id))
        return "", ""

    def reference(self, module: str, name: str) -> list[Effect]:
        if name in _DESTROY:
            return [Effect("destroys", f"Python {name}() {_DESTROY[name]}")]
        if name in _MOVES and module in ("os", "posix", "nt", "shutil"):
            return [Effect("destroys", f"Python {module}.{name}() deletes or moves a path")]
        if module == "ctypes" or name in ("CDLL", "cdll"):
            return [Effect("destroys", "Python ctypes can call anything")]
        return []

    def run(self, module: str, name: str, node: ast.Call) -> list[Effect] | None:
        named = name in _RUN or name.startswith(_RUN_PREFIXES)
        runs = (named and module in _RUNNERS) or (module == "pty" and name == "spawn")
        if module == "asyncio":
            runs = name.startswith("create_subprocess")
        if not runs:
            return None
        values = [_literal(a) for a in node.args]
        if module in ("os", "posix", "nt") and name.startswith(("exec", "spawn")):
            flat = [str(x) for v in values for x in (v if isinstance(v, list | tuple) else [v])]
            flat = [x for x in flat if x != "None"]
            if len(flat) > 1:
                return self.r.argv(flat[1:])
            return [Effect("destroys", f"Python {name}() runs a computed command")]
        first = values[0] if values else None
        if isinstance(first, str):
            return self.r.code(first)
        if isinstance(first, list | tuple) and all(isinstance(x, str) for x in first):
            return self.r.argv([str(x) for x in first])
        return [Effect("destroys", f"Python {name}() runs a computed command")]

    def call(self, node: ast.Call) -> list[Effect]:
        module, name = self.function(node.func)
        out: list[Effect] = []
        ran = self.run(module, name, node)
        if ran is not None:
            return ran
        if name in ("exec", "eval") and not module:
            first = _literal(node.args[0]) if node.args else None
            inner = python_effects(first, self.r, self.sql) if isinstance(first, str) else None
            if inner is not None:
                return inner
            return [Effect("destroys", f"Python {name}() runs computed code")]
        if name in _DYNAMIC and (module or name in ("__import__", "vars", "globals", "locals")):
            first = _literal(node.args[0]) if node.args else None
            if not (name == "__import__" and isinstance(first, str)):
                return [Effect("destroys", f"Python {name}() reaches names computed at run time")]
        if name in ("getattr", "setattr", "delattr") and not module:
            attr = _literal(node.args[1]) if len(node.args) > 1 else None
            if not isinstance(attr, str):
                return [
                    Effect("destroys", "Python getattr() with a computed name may reach anything")
                ]
            target = self.receiver(node.args[0])
            out += self.reference(target, attr)
            if attr in _RUN or attr.startswith(_RUN_PREFIXES):
                out.append(Effect("destroys", f"Python getattr(..., {attr!r}) runs a command"))
        if name in _OVERWRITE:
            out.append(Effect("overwrites", f"Python {name}() writes over a path"))
        if name == "open" and not module:
            mode = _literal(node.args[1]) if len(node.args) > 1 else None
            for kw in node.keywords:
                if kw.arg == "mode":
                    mode = _literal(kw.value)
            if isinstance(mode, str) and "w" in mode:
                out.append(Effect("overwrites", "Python open(..., 'w') overwrites a file"))
        if name in _DB_CALLS and isinstance(node.func, ast.Attribute):
            out.append(Effect("destroys", f"Python .{name}() deletes data"))
        return out

    def read(self, tree: ast.AST) -> list[Effect]:
        out: list[Effect] = []
        strings: list[str] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                out += self.call(node)
            elif isinstance(node, ast.Attribute | ast.Name) and isinstance(node.ctx, ast.Load):
                module, name = self.function(node)
                if isinstance(node, ast.Attribute) or node.id in self.names:
                    out += self.reference(module, name)
                if isinstance(node, ast.Attribute) and node.attr in ("__dict__", "__builtins__"):
                    out.append(Effect("destroys", "Python __dict__ reaches names at run time"))
                if isinstance(node, ast.Name) and node.id == "__builtins__":
                    out.append(Effect("destroys", "Python __builtins__ reaches names at run time"))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                strings.append(node.value)
                if node.value.strip().upper() in ("DELETE", "PURGE"):
                    out.append(Effect("destroys", f"the HTTP {node.value.upper()} deletes"))
        if "ctypes" in self.modules.values() or any(m == "ctypes" for m, _ in self.names.values()):
            out.append(Effect("destroys", "Python ctypes can call anything"))
        return out + self.sql(strings)


def python_effects(
    code: str, r: Recurse, sql: Callable[[list[str]], list[Effect]]
) -> list[Effect] | None:
    """Effects of Python ``code``, or ``None`` when it does not parse as Python."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    return _Reader(tree, r, sql).read(tree)
