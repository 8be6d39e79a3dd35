"""The package's import graph: no cycles, no upward imports, rooms named as folders.

Every module imports on its own; the graph has no cycle; every import points
down the layer table (:data:`LAYERS`), never at the package face or at a
package above the importer; no module reaches into another package's
private module; private module names are unique, readable and a minority.

An edge ``a -> b`` is any ``import`` in ``a`` of a module ``b`` of the package,
wherever it sits: at module level, inside a function (a deferred import only
hides a cycle until the function runs) or under ``try``. Only imports under
``if TYPE_CHECKING:`` are not edges, since they never run. Importing
``pkg.sub.mod`` also runs ``pkg/sub/__init__.py``, so the packages above the
target are edges too, except those that contain the importer (they are already
being imported when it runs).
"""

from __future__ import annotations

import ast
import importlib
import itertools
import pkgutil
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import aw_lookahead

PACKAGE = aw_lookahead.__name__
ROOT = Path(aw_lookahead.__file__ or "").parents[1]


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    is_package: bool


def package_modules() -> dict[str, Module]:
    """Every module of the package but ``__main__`` (importing it runs the CLI)."""
    found = {PACKAGE: Module(PACKAGE, Path(aw_lookahead.__file__ or ""), True)}
    for info in pkgutil.walk_packages(aw_lookahead.__path__, PACKAGE + "."):
        if info.name.rsplit(".", 1)[-1] == "__main__":
            continue
        module = importlib.import_module(info.name)
        found[info.name] = Module(info.name, Path(module.__file__ or ""), info.ispkg)
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that can run, anywhere in the tree."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
        else:
            stack.extend(ast.iter_child_nodes(node))


def _is_inside(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def imports_of(module: Module, modules: dict[str, Module]) -> dict[str, int]:
    """The package modules ``module`` imports, each with the line of its first import."""
    tree = ast.parse(module.path.read_text(encoding="utf-8"), filename=str(module.path))
    here = module.name if module.is_package else module.name.rpartition(".")[0]
    edges: dict[str, int] = {}
    for node in _import_nodes(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            if node.level:
                base = here.split(".")[: len(here.split(".")) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                # `from pkg import sub` imports pkg.sub; `from pkg import name` needs pkg itself.
                targets.append(submodule if submodule in modules else source)
        for target in targets:
            if target not in modules or target == module.name:
                continue
            parts = target.split(".")
            chain = [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
            for name in chain:
                if name == target or not _is_inside(module.name, name):
                    edges.setdefault(name, node.lineno)
    return edges


def import_graph() -> tuple[dict[str, Module], dict[str, dict[str, int]]]:
    modules = package_modules()
    return modules, {name: imports_of(m, modules) for name, m in modules.items()}


def strongly_connected(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Tarjan's components with more than one module (a module never imports itself here)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component: list[str] = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def a_cycle(component: list[str], graph: dict[str, dict[str, int]]) -> list[str]:
    """One concrete cycle through the first module of a component (shortest, by BFS)."""
    start = component[0]
    members = set(component)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for v in frontier:
            for w in sorted(graph[v]):
                if w not in members:
                    continue
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if w not in previous:
                    previous[w] = v
                    following.append(w)
        frontier = following
    raise AssertionError(f"{component} is not a cycle")  # pragma: no cover


def describe(
    component: list[str],
    modules: dict[str, Module],
    graph: dict[str, dict[str, int]],
    root: Path = ROOT,
) -> str:
    """The component's modules, then one cycle through them with the line of each import."""
    cycle = a_cycle(component, graph)
    steps = [
        f"    {a} -> {b}  ({modules[a].path.relative_to(root).as_posix()}:{graph[a][b]})"
        for a, b in itertools.pairwise(cycle)
    ]
    return "  " + ", ".join(component) + "; for example:\n" + "\n".join(steps)


def test_every_module_imports() -> None:
    modules = package_modules()
    assert f"{PACKAGE}.trajectory" in modules
    assert len(modules) > 50


def test_no_import_cycles() -> None:
    modules, graph = import_graph()
    components = strongly_connected(graph)
    assert not components, "import cycles inside the package:\n" + "\n".join(
        describe(c, modules, graph) for c in components
    )


def test_the_scan_sees_deferred_and_relative_imports(tmp_path: Path) -> None:
    """The scanner itself: function-level and relative imports are edges, TYPE_CHECKING is not."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from . import c\n"
        "def f():\n    from .b import g\n"
    )
    (pkg / "b.py").write_text("import pkg.a\n")
    (pkg / "c.py").write_text("from .a import f\n")
    modules = {
        "pkg": Module("pkg", pkg / "__init__.py", True),
        **{f"pkg.{n}": Module(f"pkg.{n}", pkg / f"{n}.py", False) for n in "abc"},
    }
    graph = {name: imports_of(m, modules) for name, m in modules.items()}
    assert graph["pkg.a"] == {"pkg.b": 5}
    assert graph["pkg.b"] == {"pkg.a": 1}
    assert graph["pkg.c"] == {"pkg.a": 1}
    [component] = strongly_connected(graph)
    assert a_cycle(component, graph) == ["pkg.a", "pkg.b", "pkg.a"]
    assert "pkg/a.py:5" in describe(component, modules, graph, tmp_path)


# The rooms of the package from the bottom up. An import from one room into another must
# point to a lower row; two rooms of one row never import each other.
LAYERS: tuple[frozenset[str], ...] = tuple(
    frozenset(row.split())
    for row in (
        "errors _version _metrics _progress",
        "_net",
        "redact _extras _jsonl _sync _endpoint_errors",
        "trajectory endpoint",
        "prompts",
        "agentworldbench worldmodel",
        "embedded",
        "lookahead sandbox",
        "serving evaluation langgraph mcp",
        "training",
        "datagen",
        "cli",
    )
)

MAX_PRIVATE_SHARE = 0.30
MAX_ROOT_PRIVATE = 8

# Sub-packages spelled as file-name prefixes, and the abbreviations they came with.
CRYPTIC = re.compile(r"^_?(?:t(?:fam|spec)|m(?:cp)?_core)(?:_|$)|(?:^|_)(?:util|utils|misc)(?:_|$)")


def _room(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else ""


def _layer(room: str) -> int:
    for i, row in enumerate(LAYERS):
        if room in row:
            return i
    raise AssertionError(f"aw_lookahead.{room} is in no row of LAYERS; add it where it sits")


def _is_private(name: str) -> bool:
    last = name.rsplit(".", 1)[-1]
    return last.startswith("_") and not last.startswith("__")


def _package_of(module: Module) -> str:
    return module.name if module.is_package else module.name.rpartition(".")[0]


def test_every_room_has_a_layer() -> None:
    modules = package_modules()
    rooms = {_room(name) for name in modules} - {""}
    for room in rooms:
        _layer(room)
    assert sum(len(row) for row in LAYERS) == len(set().union(*LAYERS))


def test_no_upward_imports() -> None:
    """Down the layer table only; never the package face (``mcp/`` and ``datagen/`` sit below
    it like everything else) and never a package that contains the importer."""
    modules, graph = import_graph()
    upward: list[str] = []
    for name, edges in graph.items():
        module = modules[name]
        for target, line in edges.items():
            where = f"{module.path.relative_to(ROOT).as_posix()}:{line}"
            if target == PACKAGE and name != PACKAGE:
                upward.append(f"{name} -> the package face {PACKAGE}  ({where})")
            elif target != PACKAGE and _is_inside(name, target) and target != name:
                upward.append(f"{name} -> its own enclosing package {target}  ({where})")
            elif (
                PACKAGE not in (name, target)
                and _room(name) != _room(target)
                and _layer(_room(target)) >= _layer(_room(name))
            ):
                upward.append(f"{name} -> {target}, not a lower layer  ({where})")
    assert not upward, "imports that point up:\n  " + "\n  ".join(sorted(upward))


def test_mcp_and_datagen_sit_below_the_package_face() -> None:
    modules, graph = import_graph()
    for name in modules:
        if _room(name) in ("mcp", "datagen"):
            assert PACKAGE not in graph[name], name


def test_no_import_of_another_packages_private_module() -> None:
    """``pkg._x`` is imported only from inside ``pkg`` (root-level ``_x`` from anywhere)."""
    modules, graph = import_graph()
    reached: list[str] = []
    for name, edges in graph.items():
        for target, line in edges.items():
            owner = target.rpartition(".")[0]
            if _is_private(target) and not _is_inside(_package_of(modules[name]), owner):
                reached.append(f"{name} -> {target}  (line {line})")
    assert not reached, "private modules used from outside their package:\n  " + "\n  ".join(
        sorted(reached)
    )


def test_module_names_explain_themselves() -> None:
    """Folders are the sub-packages: no cryptic prefix, and no two modules of one package share
    a ``_word_`` prefix (that is a folder spelled as a file name)."""
    modules = package_modules()
    cryptic = [n for n in modules if CRYPTIC.search(n.rsplit(".", 1)[-1])]
    assert not cryptic, cryptic
    prefixes: dict[tuple[str, str], list[str]] = {}
    for name, module in modules.items():
        last = name.rsplit(".", 1)[-1]
        match = re.match(r"^(_[a-z]+)_", last)
        if match and name != PACKAGE:
            parent = module.name.rpartition(".")[0]
            prefixes.setdefault((parent, match.group(1)), []).append(name)
    shared = {k: v for k, v in prefixes.items() if len(v) > 1}
    assert not shared, shared


def test_private_module_names_are_unique_and_a_minority() -> None:
    modules = package_modules()
    private = [name for name in modules if _is_private(name)]
    by_name: dict[str, list[str]] = {}
    for name in private:
        by_name.setdefault(name.rsplit(".", 1)[-1], []).append(name)
    repeated = {k: v for k, v in by_name.items() if len(v) > 1}
    assert not repeated, f"private module names used by more than one package: {repeated}"
    share = len(private) / len(modules)
    assert share <= MAX_PRIVATE_SHARE, f"{len(private)} of {len(modules)} modules are private"


def test_few_private_modules_at_the_package_root() -> None:
    """The root holds only a few true utilities; a private module that serves one public
    module lives in it, and one that serves one subpackage lives in that subpackage."""
    modules = package_modules()
    root = sorted(n for n in modules if n.count(".") == 1 and _is_private(n))
    assert len(root) <= MAX_ROOT_PRIVATE, f"{len(root)} private modules at the root: {root}"


def test_the_rules_see_what_they_forbid(tmp_path: Path) -> None:
    """The checks themselves: an upward import, a private import from outside, a cryptic name."""
    pkg = tmp_path / "pkg"
    (pkg / "low").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "low" / "__init__.py").write_text("")
    (pkg / "low" / "_inner.py").write_text("")
    (pkg / "high.py").write_text("import pkg\nfrom pkg.low import _inner\n")
    modules = {
        "pkg": Module("pkg", pkg / "__init__.py", True),
        "pkg.low": Module("pkg.low", pkg / "low" / "__init__.py", True),
        "pkg.low._inner": Module("pkg.low._inner", pkg / "low" / "_inner.py", False),
        "pkg.high": Module("pkg.high", pkg / "high.py", False),
    }
    edges = imports_of(modules["pkg.high"], modules)
    assert "pkg" in edges  # the face
    assert "pkg.low._inner" in edges
    assert _is_private("pkg.low._inner")
    assert not _is_inside(_package_of(modules["pkg.high"]), "pkg.low")
    assert CRYPTIC.search("_tfam_dev")
    assert CRYPTIC.search("_tspec")
    assert not CRYPTIC.search("spec")
