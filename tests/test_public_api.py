"""The public surface: one export table, a sorted ``__all__`` whose names all resolve, and a
light import."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

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


# What an engine user needs, by room; the root exports these and nothing else.
CURATED = {
    "aw_lookahead.trajectory": {
        "Action", "Domain", "Trajectory", "Turn", "TurnSample",
        "read_trajectories", "write_trajectories",
    },
    "aw_lookahead.agentworldbench": {
        "load_turn_samples", "read_agentworldbench", "write_agentworldbench",
    },
    "aw_lookahead.worldmodel": {
        "BaseWorldModel", "FunctionWorldModel", "OpenAIWorldModel", "Prediction",
        "Usage", "VLLMOfflineWorldModel", "WorldModel",
    },
    "aw_lookahead.lookahead": {
        "Decision", "DecisionKind", "Judge", "LLMJudge", "Lookahead", "Outcome",
        "PredictionCache", "RiskRouter", "RolloutResult", "RuleJudge", "SelectResult",
        "Signal", "Verdict",
    },
}  # fmt: skip
PLUMBING = {"render_messages", "parse_reply", "JsonlWriter", "LocalServer", "TerminalSandbox"}


def test_the_root_is_the_curated_surface() -> None:
    """Schema, world models, engine and every error; no plumbing, no adapter (those are
    imported from their subpackage, each with its whole surface)."""
    from aw_lookahead import errors

    error_names = {
        name
        for name, value in vars(errors).items()
        if isinstance(value, type)
        and issubclass(value, Exception)
        and value.__module__ == errors.__name__
    }
    expected = {name: module for module, names in CURATED.items() for name in names}
    expected |= dict.fromkeys(error_names, "aw_lookahead.errors")
    assert expected == aw_lookahead._EXPORTS
    assert not PLUMBING & set(aw_lookahead.__all__)
    adapters = {"LookaheadMiddleware", "LookaheadNode", "ShadowMiddleware", "LookaheadProxy"}
    assert not adapters & set(aw_lookahead.__all__)
    # The extension points an error message tells users to subclass are exported.
    assert issubclass(aw_lookahead.FunctionWorldModel, aw_lookahead.BaseWorldModel)
    assert isinstance(aw_lookahead.RuleJudge(), aw_lookahead.Judge)


def test_the_langgraph_adapter_exports_its_whole_surface() -> None:
    pytest.importorskip("langgraph")
    langgraph = importlib.import_module("aw_lookahead.langgraph")
    assert {
        "LookaheadMiddleware", "LookaheadNode", "lookahead_condition", "ShadowMiddleware",
        "TrajectoryRecorder",
    } <= set(langgraph.__all__)  # fmt: skip


def test_the_adapters_take_the_engines_options_typed() -> None:
    """Every adapter that builds an engine types its ``**engine_options`` with the engine's own
    TypedDict, so a misspelt option is a type error where the adapter is built."""
    pytest.importorskip("langgraph")
    langgraph = importlib.import_module("aw_lookahead.langgraph")
    for cls in (langgraph.LookaheadMiddleware, langgraph.LookaheadNode, langgraph.ShadowMiddleware):
        [extra] = [
            p
            for p in inspect.signature(cls.__init__).parameters.values()
            if p.kind is inspect.Parameter.VAR_KEYWORD
        ]
        assert re.fullmatch(r"Unpack\[EngineOptions(Base)?\]", str(extra.annotation)), cls


def test_engine_option_literals_are_spelled_once() -> None:
    """The values of ``simulate`` and ``on_error`` are written in lookahead.options and
    lookahead.safety only; everything else names those types."""
    root = Path(aw_lookahead.__file__ or "").parent
    owners = {root / "lookahead" / "options.py", root / "lookahead" / "safety.py"}
    spelled = re.compile(r"Literal\[\s*\"(?:always|risky|never|fail_safe|fail_open|fail_closed)\"")
    found = [
        f"{path.relative_to(root)}:{n}"
        for path in sorted(root.rglob("*.py"))
        if path not in owners
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if spelled.search(line)
    ]
    assert not found, found


def test_async_names_are_plain_and_their_blocking_twins_end_in_sync() -> None:
    from aw_lookahead.datagen import terminal
    from aw_lookahead.sandbox import record

    for plain, blocking in [
        (record.record_trajectory, record.record_trajectory_sync),
        (terminal.generate_terminal, terminal.generate_terminal_sync),
    ]:
        assert inspect.iscoroutinefunction(plain)
        assert not inspect.iscoroutinefunction(blocking)
        assert blocking.__name__ == plain.__name__ + "_sync"


# Names a framework or Python fixes: LangChain's middleware hooks, and ``aclose`` (async generators,
# contextlib.aclosing, httpx), whose blocking twin is ``close``.
FIXED_ASYNC_NAMES = {
    "aafter_agent", "aafter_model", "abefore_agent", "abefore_model", "aclose",
    "awrap_model_call", "awrap_tool_call",
}  # fmt: skip


def _members(namespace: Any) -> dict[str, Any]:
    """The callables the package itself defines on ``namespace`` (not those a base class from
    a framework brings, such as a Runnable's ``invoke`` / ``ainvoke``)."""
    members = {name: getattr(namespace, name, None) for name in dir(namespace)}
    return {
        name: value
        for name, value in members.items()
        if not name.startswith("__")
        and str(getattr(value, "__module__", "")).startswith("aw_lookahead")
    }


def test_one_async_sync_naming_rule() -> None:
    """Across every module: a ``*_sync`` function's plain twin is async, no async ``aX`` has
    a blocking ``X`` beside it (outside the fixed names), no ``Sync*`` wrapper class."""
    broken: list[str] = []
    for info in pkgutil.walk_packages(aw_lookahead.__path__, "aw_lookahead."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        own = {
            name: value
            for name, value in vars(module).items()
            if getattr(value, "__module__", None) == info.name
        }
        spaces = [(info.name, own)] + [
            (f"{info.name}.{name}", _members(value))
            for name, value in own.items()
            if inspect.isclass(value)
        ]
        for name, value in own.items():
            if inspect.isclass(value) and re.match(r"Sync[A-Z]", name):
                broken.append(f"{info.name}.{name}: a Sync* class; give `_sync` methods")
        for where, members in spaces:
            for name, value in members.items():
                if not callable(value):
                    continue
                plain = members.get(name.removesuffix("_sync"))
                if (
                    name.endswith("_sync")
                    and plain is not None
                    and not inspect.iscoroutinefunction(plain)
                ):
                    broken.append(f"{where}.{name}: its plain twin is not async")
                twin = members.get(name[1:])
                if (
                    name.startswith("a")
                    and name not in FIXED_ASYNC_NAMES
                    and inspect.iscoroutinefunction(value)
                    and callable(twin)
                    and not inspect.iscoroutinefunction(twin)
                ):
                    broken.append(f"{where}.{name}: async `a*` beside blocking `{name[1:]}`")
    assert not broken, "\n".join(sorted(set(broken)))


def test_an_unknown_name_is_an_attribute_error() -> None:
    from aw_lookahead import worldmodel

    with pytest.raises(AttributeError, match="no_such_name"):
        aw_lookahead.no_such_name  # noqa: B018
    with pytest.raises(AttributeError, match="no_such_name"):
        worldmodel.no_such_name  # noqa: B018


def test_the_version_comes_from_the_installed_metadata() -> None:
    from importlib.metadata import version

    from aw_lookahead._version import __version__

    assert aw_lookahead.__version__ == __version__ == version("aw-lookahead")


def test_the_readme_layout_lists_every_package() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    layout = readme.split("## Layout", 1)[1].split("```", 2)[1]
    packages = [info.name for info in pkgutil.iter_modules(aw_lookahead.__path__) if info.ispkg]
    assert "datagen" in packages
    missing = [name for name in packages if f"  {name}/" not in layout]
    assert not missing, f"README.md's layout omits {missing}"
    modules = [
        info.name
        for info in pkgutil.iter_modules(aw_lookahead.__path__)
        if not info.ispkg and not info.name.startswith("_")
    ]
    assert "endpoint" in modules
    unlisted = [name for name in modules if f"{name}.py" not in layout]
    assert not unlisted, f"README.md's layout omits the modules {unlisted}"
