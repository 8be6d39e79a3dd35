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
import warnings
from pathlib import Path
from typing import Any

import pytest

import aw_lookahead
from aw_lookahead import _deprecated


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


def _warns_and_is(get: Any, expected: Any, old: str, new: str) -> None:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        value = get()
    assert value is expected, old
    [warning] = {(w.category, str(w.message), w.filename) for w in seen}
    assert warning[0] is DeprecationWarning
    assert old in warning[1], warning[1]
    assert new in warning[1], warning[1]
    assert warning[2] == __file__, "the warning points at the caller's line"


@pytest.mark.parametrize("name", sorted(aw_lookahead._MOVED))
def test_a_name_the_root_dropped_warns_and_is_the_same_object(name: str) -> None:
    module = aw_lookahead._MOVED[name]
    if module == "aw_lookahead.langgraph":
        pytest.importorskip("langgraph")
    assert name not in aw_lookahead.__all__
    expected = getattr(importlib.import_module(module), name)
    _warns_and_is(lambda: getattr(aw_lookahead, name), expected, f"aw_lookahead.{name}", module)


@pytest.mark.parametrize("old", sorted(_deprecated.MOVED_MODULES))
def test_a_moved_module_warns_and_hands_back_the_same_objects(old: str) -> None:
    new = _deprecated.MOVED_MODULES[old]
    stub, target = importlib.import_module(old), importlib.import_module(new)
    assert not hasattr(stub, "__all__"), "a stub exports nothing of its own"
    for name in target.__all__:
        _warns_and_is(
            lambda name=name: getattr(stub, name), getattr(target, name), f"{old}.{name}", new
        )
    with pytest.raises(AttributeError, match="moved to"):
        stub.no_such_name  # noqa: B018


@pytest.mark.parametrize("old", sorted(_deprecated.RENAMED))
def test_a_renamed_name_warns_names_its_replacement_and_resolves(old: str) -> None:
    module_name, _, name = old.rpartition(".")
    entry = _deprecated.RENAMED[old]
    target_module, _, attribute = entry.target.partition(":")
    expected = getattr(importlib.import_module(target_module), attribute)
    module = importlib.import_module(module_name)
    assert name not in getattr(module, "__all__", ()), old
    _warns_and_is(lambda: getattr(module, name), expected, old, entry.use)


def test_renamed_async_names_are_the_new_plain_names() -> None:
    """The old async names now resolve to the plain names, which flipped from blocking to async;
    the blocking forms are the ``_sync`` twins."""
    from aw_lookahead.datagen import terminal
    from aw_lookahead.sandbox import record

    with pytest.warns(DeprecationWarning, match=r"use aw_lookahead\.sandbox\.record_trajectory"):
        from aw_lookahead.sandbox import arecord_trajectory
    with pytest.warns(DeprecationWarning, match=r"datagen\.terminal\.generate_terminal"):
        from aw_lookahead.datagen.terminal import agenerate_terminal
    assert arecord_trajectory is record.record_trajectory
    assert agenerate_terminal is terminal.generate_terminal
    for plain, blocking in [
        (record.record_trajectory, record.record_trajectory_sync),
        (terminal.generate_terminal, terminal.generate_terminal_sync),
    ]:
        assert inspect.iscoroutinefunction(plain)
        assert not inspect.iscoroutinefunction(blocking)
        assert blocking.__name__ == plain.__name__ + "_sync"


def test_the_deprecated_sync_terminal_sandbox_still_works() -> None:
    with pytest.warns(DeprecationWarning, match=r"SyncTerminalSandbox.*run_sync"):
        from aw_lookahead.sandbox import SyncTerminalSandbox
    with SyncTerminalSandbox() as sb:
        sb.write_file("a.txt", "x\n")
        assert sb.run("cat a.txt").output == "x\n"
        assert sb.send_keys("echo keys").output == "keys\n"
        root = sb.path
        assert isinstance(sb.network_isolated, bool)
    assert not root.exists()
    sb.close()  # idempotent


@pytest.mark.parametrize("path", ["aw_lookahead", "aw_lookahead.worldmodel"])
def test_the_deprecated_sync_world_model_still_works(path: str) -> None:
    from aw_lookahead.trajectory import Trajectory
    from aw_lookahead.worldmodel import FunctionWorldModel

    with pytest.warns(DeprecationWarning, match=r"SyncWorldModel.*predict_sync"):
        sync_world_model = importlib.import_module(path).SyncWorldModel
    traj = Trajectory(domain="terminal")
    with sync_world_model(FunctionWorldModel(lambda t, a: f"ran {a}")) as wm:
        assert wm.predict(traj, "ls").observation == "ran ls"
        assert [p.observation for p in wm.predict_many(traj, ["a"])] == ["ran a"]


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
    a blocking ``X`` beside it (outside the fixed names), no ``Sync*`` wrapper class is defined
    but the deprecated ones."""
    deprecated = {entry.target for entry in _deprecated.RENAMED.values()}
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
            if (
                inspect.isclass(value)
                and re.match(r"Sync[A-Z]", name)
                and f"{info.name}:{name}" not in deprecated
            ):
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


def test_from_import_of_an_old_path_still_works() -> None:
    with pytest.warns(DeprecationWarning, match=r"aw_lookahead\.datagen\.recording"):
        from aw_lookahead.evaluation import record_script
    with pytest.warns(DeprecationWarning, match=r"evaluation\.rules\.verifier"):
        from aw_lookahead.evaluation.verifier import verify_sample
    from aw_lookahead.datagen import record_script as new_record_script
    from aw_lookahead.evaluation.rules import verify_sample as new_verify_sample

    assert record_script is new_record_script
    assert verify_sample is new_verify_sample
    with pytest.raises(AttributeError):
        aw_lookahead.no_such_name  # noqa: B018


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
