"""Destructive by effect: the shell-effects corpus, graded however each line is spelled.

Every line of ``tests/shell_corpus_support.py`` is graded by the real parser and
classifier, as plain text and as a keystroke action that ends in a control key.
"""

from __future__ import annotations

import pytest

from aw_lookahead.lookahead.destructive import action_effect, destructive_command
from aw_lookahead.lookahead.routing import is_read_only_command
from aw_lookahead.lookahead.shell_effects import MAX_TEXT, shell_effects
from aw_lookahead.lookahead.shell_parse import parse_script
from shell_corpus_support import DESTROYS, HARMLESS, OVERWRITES


def test_corpus_sizes() -> None:
    assert len(DESTROYS) >= 300
    assert len(HARMLESS) >= 150
    assert len(OVERWRITES) >= 30
    assert len(set(DESTROYS) | set(HARMLESS) | set(OVERWRITES)) == (
        len(DESTROYS) + len(HARMLESS) + len(OVERWRITES)
    ), "a line is listed twice"


@pytest.mark.parametrize("line", DESTROYS)
def test_destroying_lines(line: str) -> None:
    assert destructive_command(line), shell_effects(line)
    for tail in ("C-c", "Tab", "Up", "C-d", "Enter"):
        keys = [{"keystrokes": line + "\n", "duration": 1.0}, {"keystrokes": tail}]
        assert destructive_command(keys), (tail, action_effect(keys))


@pytest.mark.parametrize("line", OVERWRITES)
def test_overwriting_lines(line: str) -> None:
    effect = action_effect(line)
    assert effect is not None
    assert effect.severity == "overwrites", effect
    assert destructive_command(line) is None


@pytest.mark.parametrize("line", HARMLESS)
def test_harmless_lines(line: str) -> None:
    assert action_effect(line) is None, shell_effects(line)
    assert (
        action_effect([{"keystrokes": line + "\n", "duration": 1.0}, {"keystrokes": "C-c"}]) is None
    )


def test_keys_that_edit_or_recall_the_line_hide_what_runs() -> None:
    recalled = [{"keystrokes": "Up"}, {"keystrokes": "Enter"}]
    assert destructive_command(recalled)
    completed = [{"keystrokes": "ec"}, {"keystrokes": "Tab"}, {"keystrokes": " hi\n"}]
    assert "Tab" in str(destructive_command(completed))
    # Keys after the last run only edit a line that never runs: the typed text decides.
    assert destructive_command([{"keystrokes": "ls\n"}, {"keystrokes": "Up"}]) is None
    # Typed but interrupted: still judged.
    assert destructive_command([{"keystrokes": "rm -rf data"}, {"keystrokes": "C-c"}])


def test_reasons_name_the_effect() -> None:
    assert "recursively deletes 'data'" in str(destructive_command("bash -c 'rm -rf data'"))
    assert "find -exec runs" in str(destructive_command("find data -exec rm -rf {} +"))
    assert "empties 'f'" in str(destructive_command(": > f"))
    assert "expansion" in str(destructive_command("$(echo rm) -rf x"))
    assert "does not parse" in str(destructive_command("rm -rf 'data"))


def test_over_long_text_is_possibly_destructive_and_harmless_padding_is_not_hidden() -> None:
    assert "too long" in str(destructive_command("ls " + "a" * MAX_TEXT))
    padded = "rm -rf data # " + "x" * 200_000
    assert destructive_command(padded)


def test_parse_reads_quotes_wrappers_and_stdin() -> None:
    script = parse_script("echo 'rm -rf x' | sh; r\"m\" -f y > out 2>&1")
    words = [c.words for c in script.commands]
    assert words == [["echo", "rm -rf x"], ["sh"], ["rm", "-f", "y"]]
    assert script.commands[1].stdin == "rm -rf x\n"
    assert [r.op for r in script.commands[2].redirects] == [">", ">&"]
    assert not script.problems
    assert parse_script("if true; then").problems


# ---------------------------------------------------------------- the read-only router


@pytest.mark.parametrize("line", DESTROYS + OVERWRITES)
def test_no_destroying_or_overwriting_line_is_read_only(line: str) -> None:
    read_only, why = is_read_only_command(line)
    assert not read_only, why


@pytest.mark.parametrize(
    "line",
    [
        "sort --o=sorted.txt names.txt",
        "sort --ou=sorted.txt names.txt",
        "sort --o sorted.txt names.txt",
        "sort --compress-prog=gzip big.txt",
        "date --s=2020-01-01",
        "date --se '2020-01-01'",
        "tree --o=tree.txt",
        "rg --pr=./decode foo",
        "git diff --out=patch.txt",
        "file --comp",
        "sort $opts names.txt",
        "x=1; ls",
        "PATH=/tmp/evil ls",
    ],
)
def test_router_reads_abbreviated_long_options_and_hidden_flags(line: str) -> None:
    read_only, why = is_read_only_command(line)
    assert not read_only, why


@pytest.mark.parametrize(
    "line",
    ["ls -la", 'cat "$f"', "ls missing 2>/dev/null", "[ -f x ] && cat x", "sort --re f"],
)
def test_router_still_routes_plain_readers(line: str) -> None:
    read_only, why = is_read_only_command(line)
    assert read_only, why


def test_git_global_options_are_read_from_one_list() -> None:
    """The effect rules and the read-only router read git's global options alike, and every
    ``-c`` setting before the subcommand is judged (not only those before the first value)."""
    assert destructive_command("git -c color.ui=never -c core.pager='rm -rf ~' log")
    assert destructive_command("git -C repo -c core.pager='rm -rf ~' log")
    assert destructive_command("git --git-dir r/.git --config-env=core.pager=P log")
    assert destructive_command("git -C repo --no-pager log -1") is None
    assert is_read_only_command("git -C repo --git-dir=repo/.git --no-pager log -1")[0]
    for line in ("git -c core.pager=cat log", "git --namespace=x log", "git --bare=x log"):
        assert not is_read_only_command(line)[0], line
    assert is_read_only_command("git -C") == (False, "git without a subcommand")
