"""Record real terminal trajectories for tests, the demo agent and training smoke runs.

Every observation comes from running the command in a
:class:`~aw_lookahead.sandbox.TerminalSandbox`; nothing is typed by hand.
Outputs are reproducible on one machine: file contents are fixed, git runs
with fixed names and dates, and every task runs in the same directory
(``<tmp>/aw-sandbox-data``, emptied before each task).

Writes ``examples/data/terminal_trajectories.jsonl`` (all tasks) and
``examples/trajectories/terminal_demo.jsonl`` (one short trajectory used by
the simulate demo).

    python examples/make_terminal_data.py
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from aw_lookahead.sandbox import record_trajectory_sync
from aw_lookahead.trajectory import Trajectory, write_trajectories

HERE = Path(__file__).resolve().parent
WORKDIR = Path(tempfile.gettempdir()) / "aw-sandbox-data"

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Ada Example",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_AUTHOR_DATE": "2025-01-15T10:00:00+00:00",
    "GIT_COMMITTER_NAME": "Ada Example",
    "GIT_COMMITTER_EMAIL": "ada@example.com",
    "GIT_COMMITTER_DATE": "2025-01-15T10:00:00+00:00",
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "init.defaultBranch",
    "GIT_CONFIG_VALUE_0": "main",
}

DEMO_ID = "terminal-demo-notes"

# (id, task, commands)
TASKS: list[tuple[str, str, list[str]]] = [
    (
        DEMO_ID,
        "Create a notes file, count its TODO lines, and fix a typo in a command.",
        [
            "printf 'buy milk\\nTODO: call Bob\\nTODO: fix bike\\nread book\\n' > notes.txt",
            "grep -c TODO notes.txt",
            "cat note.txt",
            "grep TODO notes.txt | sort -r",
            "wc -l notes.txt",
        ],
    ),
    (
        "terminal-word-count",
        "Count the words of a short poem and show the longest line.",
        [
            "printf 'the cat sat\\non the warm mat\\nand slept\\n' > poem.txt",
            "wc -w poem.txt",
            "awk '{ print length, $0 }' poem.txt | sort -rn | head -1",
            "tr ' ' '\\n' < poem.txt | sort | uniq -c | sort -rn | head -3",
        ],
    ),
    (
        "terminal-sort-csv",
        "Sort a CSV of scores by score, highest first, without the header.",
        [
            "printf 'name,score\\nana,71\\nbo,93\\ncy,85\\n' > scores.csv",
            "tail -n +2 scores.csv | sort -t, -k2 -rn",
            "tail -n +2 scores.csv | sort -t, -k2 -rn | head -1 | cut -d, -f1",
            "cut -d, -f2 scores.csv | tail -n +2 | paste -sd+ | bc",
        ],
    ),
    (
        "terminal-git-first-commit",
        "Initialise a git repository and commit a README.",
        [
            "mkdir project && cd project",
            "git init -q && echo '# Project' > README.md",
            "git status --short",
            "git add README.md && git commit -q -m 'Add README'",
            "git log --oneline",
            "git status",
        ],
    ),
    (
        "terminal-git-diff",
        "Change a tracked file and inspect the diff before committing.",
        [
            "git init -q repo && cd repo && printf 'one\\ntwo\\n' > list.txt",
            "git add . && git commit -q -m 'Initial list'",
            "sed -i 's/two/2/' list.txt && echo three >> list.txt",
            "git diff",
            "git commit -qam 'Update list' && git log --format='%h %an %s'",
        ],
    ),
    (
        "terminal-missing-files",
        "Look for a configuration file that does not exist, then create it.",
        [
            "cat missing.txt",
            "ls config/",
            "mkdir -p config/app && echo 'debug=false' > config/app/settings.ini",
            "ls -R config",
            "cat config/app/settings.ini",
        ],
    ),
    (
        "terminal-typos",
        "List the directory, recovering from mistyped commands.",
        [
            "echo hello > greeting.txt",
            "sl -la",
            "ls -la greeting.txt | cut -d' ' -f1,5",
            "grpe hello greeting.txt",
            "grep hello greeting.txt",
        ],
    ),
    (
        "terminal-python",
        "Use Python one-liners to compute and to show an error.",
        [
            "python3 -c 'print(sum(range(1, 101)))'",
            'python3 -c \'import json; print(json.dumps({"b": 1, "a": [1, 2]}, sort_keys=True))\'',
            "python3 -c 'print(1/0)'",
            "echo $?",
        ],
    ),
    (
        "terminal-find-and-remove",
        "Find the log files in a tree and delete them.",
        [
            "mkdir -p app/logs app/src && touch app/logs/a.log app/logs/b.log app/src/main.py",
            "find app -name '*.log' | sort",
            "rm app/logs/a.log",
            "rm app/logs/a.log",
            "find app -type f | sort",
        ],
    ),
    (
        "terminal-sed-config",
        "Switch a setting in a config file with sed and verify it.",
        [
            "printf 'host=localhost\\nport=8080\\nmode=dev\\n' > app.conf",
            "sed -i 's/^mode=dev$/mode=prod/' app.conf",
            "grep -n mode app.conf",
            "sed -n '2p' app.conf",
        ],
    ),
    (
        "terminal-tar-backup",
        "Archive a folder, remove it, and restore it from the archive.",
        [
            "mkdir -p data && printf 'a\\n' > data/1.txt && printf 'b\\n' > data/2.txt",
            "tar -cf backup.tar data && tar -tf backup.tar | sort",
            "rm -r data && ls",
            "tar -xf backup.tar && cat data/*.txt",
        ],
    ),
    (
        "terminal-env-and-cwd",
        "Set variables and move between directories.",
        [
            "export STAGE=test && mkdir -p a/b",
            "cd a/b && pwd",
            'echo "stage=$STAGE"',
            "cd .. && ls",
            "cd /nonexistent",
        ],
    ),
]


def _record(task_id: str, task: str, commands: list[str]) -> Trajectory:
    shutil.rmtree(WORKDIR, ignore_errors=True)
    try:
        return record_trajectory_sync(commands, task=task, id=task_id, env=GIT_ENV, root=WORKDIR)
    finally:
        shutil.rmtree(WORKDIR, ignore_errors=True)


def main() -> int:
    trajectories = [_record(*spec) for spec in TASKS]
    data = HERE / "data" / "terminal_trajectories.jsonl"
    demo = HERE / "trajectories" / "terminal_demo.jsonl"
    count = write_trajectories(data, trajectories)
    write_trajectories(demo, [t for t in trajectories if t.id == DEMO_ID])
    turns = sum(len(t.turns) for t in trajectories)
    print(f"wrote {count} trajectories ({turns} turns) to {data}")
    print(f"wrote the demo trajectory to {demo}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
