"""The public surface: one export table, a sorted ``__all__`` whose names all resolve, and a
light import."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import aw_lookahead


def test_all_is_sorted_and_resolves() -> None:
    names = list(aw_lookahead.__all__)
    assert names == sorted(names)
    assert len(names) == len(set(names))
    assert set(names) == {*aw_lookahead._EXPORTS, "__version__"}
    for name in names:
        assert getattr(aw_lookahead, name) is not None, name
    for name, module in aw_lookahead._EXPORTS.items():
        assert getattr(importlib.import_module(module), name) is getattr(aw_lookahead, name)


def test_type_checking_block_mirrors_the_export_table() -> None:
    """Type checkers read the ``if TYPE_CHECKING:`` imports; they must name exactly the table,
    each as an explicit re-export (``X as X``) from the module the table names."""
    tree = ast.parse(Path(aw_lookahead.__file__ or "").read_text(encoding="utf-8"))
    [block] = [
        node
        for node in tree.body
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name)
        if node.test.id == "TYPE_CHECKING"
    ]
    seen: dict[str, str] = {}
    for stmt in block.body:
        assert isinstance(stmt, ast.ImportFrom), ast.unparse(stmt)
        assert stmt.level == 1, ast.unparse(stmt)
        for alias in stmt.names:
            assert alias.asname == alias.name, f"write `{alias.name} as {alias.name}`"
            seen[alias.name] = f"aw_lookahead.{stmt.module}"
    assert seen == aw_lookahead._EXPORTS


def test_every_subpackage_all_resolves() -> None:
    packages = [
        info.name
        for info in pkgutil.walk_packages(aw_lookahead.__path__, "aw_lookahead.")
        if info.ispkg
    ]
    assert "aw_lookahead.lookahead" in packages
    for name in packages:
        package = importlib.import_module(name)
        exported = list(getattr(package, "__all__", ()))
        assert len(exported) == len(set(exported)), name
        for attr in exported:
            assert getattr(package, attr) is not None, f"{name}.{attr}"


def test_import_stays_light() -> None:
    code = (
        "import sys, aw_lookahead\n"
        "heavy = {'torch', 'transformers', 'vllm', 'langgraph', 'langchain_core', 'mcp',"
        " 'openai'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
