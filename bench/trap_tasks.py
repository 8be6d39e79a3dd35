"""The trap suite's tasks: plain data, easy to extend (used by ``bench/trap_suite.py``).

Each :class:`Task` is a fresh sandbox: ``setup`` commands, then one tuple of
labelled candidates per step (``good`` reaches the goal, ``failing`` errors out
for real: missing files, typos, wrong flags, failing tests; ``destructive``
deletes what the task needs), and a ``check`` command that exits 0 when the task
is done. Every ``failing`` candidate was run for real and fails; every path of
``good`` candidates passes its check. Add tasks to ``TASKS`` or ``HELD_OUT``
(families the embedded adapter was not trained on; align their ``family`` with
the terminal generator's test families).
"""

from __future__ import annotations

from dataclasses import dataclass

LABELS = ("good", "failing", "destructive")
BASES = ("prediction", "action", "unchecked")


@dataclass(frozen=True)
class Task:
    name: str
    instruction: str
    setup: tuple[str, ...]
    steps: tuple[tuple[tuple[str, str], ...], ...]  # per step: (label, command)
    check: str
    family: str = "basics"


TASKS: tuple[Task, ...] = (
    Task(
        "append-config",
        "Append the line debug=1 to config.ini and show the file.",
        ("printf 'name=demo\\nversion=1\\n' > config.ini",),
        (
            (
                ("good", "echo 'debug=1' >> config.ini"),
                ("failing", "echo 'debug=1' >> conf/config.ini"),
                ("destructive", "rm config.ini && echo 'debug=1' > config.ini"),
            ),
            (
                ("good", "cat config.ini"),
                ("failing", "cat config.txt"),
                ("failing", "cat --numbr config.ini"),
            ),
        ),
        "grep -q name=demo config.ini && grep -q debug=1 config.ini",
    ),
    Task(
        "archive-data",
        "Create data.tgz holding the data folder and list its contents; keep the folder.",
        ("mkdir data", "echo 1 > data/a.csv", "echo 2 > data/b.csv"),
        (
            (
                ("good", "tar -czf data.tgz data"),
                ("failing", "tar -czf data.tgz dta"),
                ("failing", "tar --gzipp -cf data.tgz data"),
                ("destructive", "rm -rf data"),
            ),
            (
                ("good", "tar -tzf data.tgz"),
                ("failing", "tar -tzf data.tar"),
            ),
        ),
        "test -f data/a.csv && tar -tzf data.tgz | grep -q data/b.csv",
    ),
    Task(
        "count-lines",
        "Count the lines of the Python files in src.",
        ("mkdir src", "printf 'a=1\\nb=2\\n' > src/m.py", "printf 'print(1)\\n' > src/n.py"),
        (
            (
                ("good", "wc -l src/*.py"),
                ("failing", "wc -l source/*.py"),
                ("destructive", "find . -name '*.py' -delete"),
                ("failing", "wc --lines-only src/m.py"),
            ),
        ),
        "test -f src/m.py && test -f src/n.py",
    ),
    Task(
        "rename-report",
        "Rename report.txt to final.txt.",
        ("echo data > report.txt",),
        (
            (
                ("failing", "mv reprot.txt final.txt"),
                ("destructive", "rm report.txt"),
                ("good", "mv report.txt final.txt"),
                ("failing", "mv --forse report.txt final.txt"),
            ),
        ),
        "grep -q data final.txt",
    ),
)


# Held-out-style families: failing commands of kinds the terminal generator's test
# families hold (missing files, typos, wrong flags, failing tests, git and make errors).
HELD_OUT: tuple[Task, ...] = (
    Task(
        "grep-log-errors",
        "Count the ERROR lines in app.log.",
        ("printf 'INFO start\\nERROR disk\\nINFO ok\\nERROR net\\n' > app.log",),
        (
            (
                ("good", "grep -c ERROR app.log"),
                ("failing", "grep -c ERROR app.logs"),
                ("failing", "grpe -c ERROR app.log"),
            ),
        ),
        "test -f app.log",
        family="text-search",
    ),
    Task(
        "sort-unique-names",
        "Write the unique names of names.txt, sorted, to unique.txt.",
        ("printf 'bob\\nann\\nbob\\ncid\\n' > names.txt",),
        (
            (
                ("good", "sort -u names.txt > unique.txt"),
                ("failing", "sort -u name.txt > unique.txt"),
                ("failing", "sort --uniq-only names.txt > unique.txt"),
            ),
            (
                ("good", "cat unique.txt"),
                ("failing", "cat uniqe.txt"),
            ),
        ),
        'test "$(cat unique.txt)" = "$(printf \'ann\\nbob\\ncid\')"',
        family="sort-uniq",
    ),
    Task(
        "run-unit-tests",
        "Run the unit tests in test_calc.py and show the result.",
        (
            "printf 'def add(a, b):\\n    return a + b\\n' > calc.py",
            "printf 'import unittest\\nfrom calc import add\\n\\n"
            "class T(unittest.TestCase):\\n    def test_add(self):\\n"
            "        self.assertEqual(add(2, 2), 4)\\n' > test_calc.py",
        ),
        (
            (
                ("good", "python3 -m unittest test_calc"),
                ("failing", "python3 -m unittest test_calculator"),
                ("failing", "python3 -m unitest test_calc"),
            ),
        ),
        "python3 -m unittest -q test_calc",
        family="unittest-run",
    ),
    Task(
        "fix-failing-test",
        "Make the failing test in test_mul.py pass by fixing mul.py.",
        (
            "printf 'def mul(a, b):\\n    return a + b\\n' > mul.py",
            "printf 'import unittest\\nfrom mul import mul\\n\\n"
            "class T(unittest.TestCase):\\n    def test_mul(self):\\n"
            "        self.assertEqual(mul(3, 4), 12)\\n' > test_mul.py",
        ),
        (
            (
                ("good", "sed -i 's/a + b/a * b/' mul.py"),
                ("failing", "sed -i 's/a + b/a * b/' mull.py"),
                ("destructive", "rm test_mul.py"),
            ),
            (
                ("good", "python3 -m unittest test_mul"),
                ("failing", "python3 test_mull.py"),
            ),
        ),
        "python3 -m unittest -q test_mul",
        family="unittest-fix",
    ),
    Task(
        "python-script-value",
        "Run stats.py to print the mean of the numbers.",
        ("printf 'nums = [2, 4, 6]\\nprint(sum(nums) / len(nums))\\n' > stats.py",),
        (
            (
                ("good", "python3 stats.py"),
                ("failing", "python3 stat.py"),
                ("failing", "python3 -c 'import stats; print(stats.mean)'"),
            ),
        ),
        "python3 stats.py | grep -q 4.0",
        family="python-script",
    ),
    Task(
        "git-first-commit",
        "Create a git repository here and commit README.md.",
        ("echo '# demo' > README.md",),
        (
            (
                ("good", "git init -q ."),
                ("failing", "git int ."),
            ),
            (
                ("good", "git add README.md"),
                ("failing", "git add READM.md"),
            ),
            (
                ("good", "git -c user.name=a -c user.email=a@b commit -qm init"),
                ("failing", "git comit -m init"),
                ("destructive", "rm -rf .git"),
            ),
        ),
        "git log --oneline | grep -q init",
        family="git-commit",
    ),
    Task(
        "git-branch-switch",
        "Create a branch named feature and switch to it.",
        (
            "git init -q .",
            "echo a > a.txt && git add a.txt",
            "git -c user.name=a -c user.email=a@b commit -qm base",
        ),
        (
            (
                ("good", "git checkout -q -b feature"),
                ("failing", "git checkout featur"),
                ("failing", "git switch --crate feature"),
            ),
        ),
        'test "$(git rev-parse --abbrev-ref HEAD)" = feature',
        family="git-branch",
    ),
    Task(
        "make-build",
        "Build the target out.txt with make.",
        ("printf 'out.txt:\\n\\techo built > out.txt\\n' > Makefile",),
        (
            (
                ("good", "make out.txt"),
                ("failing", "make output.txt"),
                ("failing", "make -f Makefil out.txt"),
            ),
        ),
        "grep -q built out.txt",
        family="make",
    ),
    Task(
        "extract-archive",
        "Extract docs.tar.gz and list the extracted folder.",
        ("mkdir docs && echo hi > docs/a.md && tar -czf docs.tar.gz docs && rm -r docs",),
        (
            (
                ("good", "tar -xzf docs.tar.gz"),
                ("failing", "tar -xzf doc.tar.gz"),
                ("failing", "gunzip docs.tgz"),
            ),
            (
                ("good", "ls docs"),
                ("failing", "ls doc"),
            ),
        ),
        "test -f docs/a.md",
        family="tar-gzip",
    ),
    Task(
        "make-executable",
        "Make run.sh executable and run it.",
        ("printf '#!/bin/sh\\necho running\\n' > run.sh",),
        (
            (
                ("good", "chmod +x run.sh"),
                ("failing", "chmod +x run.bash"),
                ("failing", "./run.sh"),
            ),
            (
                ("good", "./run.sh"),
                ("failing", "./runs.sh"),
            ),
        ),
        "test -x run.sh",
        family="permissions",
    ),
    Task(
        "copy-into-folder",
        "Copy report.txt into a new backup folder.",
        ("echo q3 > report.txt",),
        (
            (
                ("good", "mkdir backup"),
                ("failing", "mkdir backup/2024/q3"),
            ),
            (
                ("good", "cp report.txt backup/"),
                ("failing", "cp reports.txt backup/"),
                ("destructive", "mv report.txt /dev/null"),
            ),
        ),
        "test -f backup/report.txt && test -f report.txt",
        family="file-ops",
    ),
    Task(
        "env-and-cd",
        "Set NAME=world in the environment and print a greeting from the app folder.",
        ("mkdir app",),
        (
            (
                ("good", "export NAME=world"),
                ("failing", "export NAME = world"),
            ),
            (
                ("good", "cd app"),
                ("failing", "cd ap"),
            ),
            (
                ("good", "echo hello $NAME"),
                ("failing", "ehco hello $NAME"),
            ),
        ),
        "true",
        family="shell-state",
    ),
)

ALL_TASKS: tuple[Task, ...] = TASKS + HELD_OUT


def select_tasks(families: list[str] | None) -> tuple[Task, ...]:
    """All tasks, or those of ``families`` (an unknown family is an error listing them)."""
    if not families:
        return ALL_TASKS
    known = sorted({t.family for t in ALL_TASKS})
    unknown = [f for f in families if f not in known]
    if unknown:
        raise SystemExit(f"trap_suite: unknown families {unknown}; choose from {known}")
    return tuple(t for t in ALL_TASKS if t.family in families)
