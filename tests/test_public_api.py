"""The public surface: a sorted ``__all__`` whose names all resolve, and a light import."""

from __future__ import annotations

import subprocess
import sys

import aw_lookahead


def test_all_is_sorted_and_resolves() -> None:
    names = list(aw_lookahead.__all__)
    assert names == sorted(names)
    assert len(names) == len(set(names))
    assert set(names) == {*aw_lookahead._EXPORTS, "__version__"}
    for name in names:
        assert getattr(aw_lookahead, name) is not None, name


def test_import_stays_light() -> None:
    code = (
        "import sys, aw_lookahead\n"
        "heavy = {'torch', 'transformers', 'vllm', 'langgraph', 'langchain_core', 'mcp',"
        " 'openai'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
