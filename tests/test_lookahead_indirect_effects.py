"""What runs code the parser cannot see is not harmless; keystrokes are read as bash reads them.

The indirect corpus (``tests/shell_indirect_corpus_support.py``) through the real parser and
classifier: every indirect destructive line has an effect (plain text and as keystrokes),
every read has none; the keystroke cases, with their trajectory as history, reduce to the
line bash runs (checked against a real bash in ``test_keystrokes_tmux.py``).
"""

from __future__ import annotations

from typing import Any

import pytest

from aw_lookahead.lookahead import RiskRouter
from aw_lookahead.lookahead.destructive import action_effect
from aw_lookahead.lookahead.keystrokes.history import HistoryError, expand_history, fc_line
from aw_lookahead.lookahead.keystrokes.reader import LineEditor, reduce_keys, replay
from aw_lookahead.lookahead.shell_effects import shell_effects
from aw_lookahead.trajectory import Trajectory
from shell_corpus_support import HARMLESS
from shell_indirect_corpus_support import INDIRECT, KEYSTROKE_READS, KEYSTROKES, READS


def _trajectory(earlier: list[Any]) -> Trajectory:
    turns = [{"action": a, "observation": ""} for a in earlier]
    return Trajectory.model_validate({"domain": "terminal", "turns": turns})


def test_corpus_sizes() -> None:
    assert len(INDIRECT) >= 500
    assert len(set(INDIRECT)) == len(INDIRECT), "a line is listed twice"
    assert len(set(READS) | set(HARMLESS)) >= 150
    assert not set(INDIRECT) & (set(READS) | set(HARMLESS))
    assert len(KEYSTROKES) >= 19


@pytest.mark.parametrize("line", INDIRECT)
def test_indirect_lines_are_possibly_destructive(line: str) -> None:
    effect = action_effect(line)
    assert effect is not None, line
    keys = [{"keystrokes": line, "duration": 0.5}, {"keystrokes": "Enter"}]
    assert action_effect(keys) is not None


def test_almost_every_indirect_line_destroys() -> None:
    """Overwrites are blocked too when nothing can check them; most of the corpus destroys."""
    destroys = [
        line for line in INDIRECT if (e := action_effect(line)) and e.severity == "destroys"
    ]
    assert len(destroys) >= len(INDIRECT) - 10


@pytest.mark.parametrize("line", READS)
def test_reads_of_the_same_families_are_harmless(line: str) -> None:
    assert action_effect(line) is None, shell_effects(line)
    keys = [{"keystrokes": line, "duration": 0.5}, {"keystrokes": "Enter"}]
    assert action_effect(keys) is None


@pytest.mark.parametrize(("earlier", "action"), KEYSTROKES)
def test_keystroke_cases_are_judged_as_bash_runs_them(earlier: list[Any], action: Any) -> None:
    effect = action_effect(action, _trajectory(earlier))
    assert effect is not None, action
    assert effect.severity == "destroys", (action, effect)


@pytest.mark.parametrize(("earlier", "action", "line"), KEYSTROKE_READS)
def test_harmless_keystrokes_reduce_to_the_line_bash_runs(
    earlier: list[Any], action: Any, line: str
) -> None:
    editor = LineEditor()
    for a in earlier:
        replay(editor, a)
    editor.start()
    replay(editor, action)
    assert editor.result().lines == [line]
    assert action_effect(action, _trajectory(earlier)) is None


def test_editing_keys() -> None:
    assert reduce_keys([{"keystrokes": "# rm -rf data\x01\x04\x04\r"}]).lines == ["rm -rf data"]
    keys = [{"keystrokes": k} for k in ("echo a b", "M-b", "M-b", "C-k", "Enter")]
    assert reduce_keys(keys).lines == ["echo "]
    assert reduce_keys([{"keystrokes": "ls\x1b[200~\x01x\x1b[201~\r"}]).lines == ["ls\x01x"]
    assert reduce_keys([{"keystrokes": "ab\x16\x01c\r"}]).lines == ["ab\x01c"]
    unfinished = reduce_keys([{"keystrokes": "rm -rf "}])
    assert unfinished.lines == []
    assert unfinished.pending == "rm -rf "
    for key in ("Tab", "C-r", "C-x", "C-_", "M-1", "F5", "PageUp"):
        assert reduce_keys([{"keystrokes": "ls"}, {"keystrokes": key}]).unknown, key
    abandoned = reduce_keys([{"keystrokes": "rm -rf data"}, {"keystrokes": "C-c"}])
    assert abandoned.lines == []
    assert abandoned.discarded == ["rm -rf data"]


def test_history_expansion() -> None:
    history = ["echo rm -rf data", "ls -la /tmp/x.txt"]
    assert expand_history("!!", history) == ("ls -la /tmp/x.txt", False)
    assert expand_history("!1:1-$", history)[0] == "rm -rf data"
    assert expand_history("!-2:*", history)[0] == "rm -rf data"
    assert expand_history("echo !$:h !$:t !$:r", history)[0] == "echo /tmp x.txt /tmp/x"
    assert expand_history("!?rf?:s/echo //", history)[0] == "rm -rf data"
    assert expand_history("!ec:gs/r/R/", history)[0] == "echo Rm -Rf data"
    assert expand_history("!!:p", history) == ("ls -la /tmp/x.txt", True)
    assert expand_history("^ls -la^cat^", history)[0] == "cat /tmp/x.txt"
    assert expand_history("echo '!!' \\!! ! x!=y", history)[0] == "echo '!!' \\!! ! x!=y"
    for bad in ("!9", "!nope", "!!:7", "!!:z", "^absent^x^"):
        with pytest.raises(HistoryError):
            expand_history(bad, history)
    assert fc_line("fc -s echo=", history) == "ls -la /tmp/x.txt"  # no 'echo' to replace
    assert fc_line("fc -s 'echo '= echo", history) == "rm -rf data"
    assert fc_line("fc -s -la=-l", history) == "ls -l /tmp/x.txt"
    assert fc_line("ls", history) is None


def test_an_unfinished_line_carries_to_the_action_that_runs_it() -> None:
    trajectory = _trajectory([[{"keystrokes": "rm -rf "}]])
    assert action_effect([{"keystrokes": "data\n"}], trajectory) is not None
    assert action_effect([{"keystrokes": "data\n"}]) is None


def test_history_older_than_the_trajectory_is_unreadable() -> None:
    assert action_effect([{"keystrokes": "Up"}, {"keystrokes": "Enter"}]) is not None
    assert action_effect([{"keystrokes": "!!\n"}]) is not None


def test_the_router_reads_keystrokes_with_the_trajectory_as_history() -> None:
    router = RiskRouter()
    trajectory = _trajectory([[{"keystrokes": "echo a; rm -rf data\n"}]])
    assert not router.route(trajectory, "ls !!").read_only
    assert router.route(trajectory, "ls -la").read_only
    carried = _trajectory([[{"keystrokes": "rm -rf "}]])
    assert not router.route(carried, [{"keystrokes": "data\n"}]).read_only
