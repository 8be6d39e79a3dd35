"""Terminal families: git, make and unittest runs.

git runs with a fixed author, committer and dates (set in the sandbox
environment by the generator), so commit hashes repeat from run to run.
The sandbox's ``python3`` has no pytest; tests run with ``unittest`` (and
``python3 -m pytest`` is one of the deliberate mistakes).
"""

from __future__ import annotations

import random

from aw_lookahead.datagen.terminal.spec import TaskSpec, bad, family, lines_file, ok, typo, words


def _repo(rng: random.Random) -> str:
    return rng.choice(("proj", "app", "site", "tool", "repo", "lib"))


@family("git_first_commit")
def _git_first(rng: random.Random) -> TaskSpec:
    repo = _repo(rng)
    title = " ".join(words(rng, 2)).title()
    steps = [
        ok(f"mkdir {repo} && cd {repo} && git init -q"),
        ok(f"echo '# {title}' > README.md && git status --short"),
        bad("git commit -m 'Add README'"),
        ok("git add README.md && git commit -q -m 'Add README'"),
        ok("git log --oneline"),
        ok("git status --short | wc -l"),
    ]
    return TaskSpec(f"Start a git repository {repo} with a README.", steps)


@family("git_diff_change")
def _git_diff(rng: random.Random) -> TaskSpec:
    items = words(rng, rng.randint(2, 4))
    new = rng.choice([w for w in words(rng, 6) if w not in items])
    steps = [
        ok("git init -q . && " + "printf '" + "\\n".join(items) + "\\n' > list.txt"),
        ok("git add list.txt && git commit -q -m 'Initial list'"),
        ok(f"sed -i 's/{items[0]}/{new}/' list.txt && git diff"),
        ok("git diff --stat"),
        bad("git diff HEAD~1"),
        ok("git commit -qam 'Update list' && git log --format='%h %s'"),
    ]
    return TaskSpec("Change a tracked file and review the diff.", steps)


@family("git_branches")
def _git_branch(rng: random.Random) -> TaskSpec:
    br = rng.choice(("feature", "fix", "docs", "try")) + "-" + rng.choice(words(rng, 3))
    f = rng.choice(words(rng, 3))
    steps = [
        ok("git init -q && touch a.txt && git add . && git commit -q -m start"),
        ok(f"git switch -q -c {br} && echo {f} > {f}.txt"),
        ok(f"git add . && git commit -q -m 'Add {f}'"),
        ok("git branch"),
        bad(f"git switch {typo(rng, br)}"),
        ok("git switch -q main && ls"),
        ok(f"git log --oneline {br} | head -n 1"),
    ]
    return TaskSpec(f"Work on a branch {br} and switch back to main.", steps)


@family("git_errors")
def _git_errors(rng: random.Random) -> TaskSpec:
    name = rng.choice(words(rng, 3))
    steps = [
        bad("git status"),
        ok("git init -q && git status --short"),
        bad(f"git add {name}.txt"),
        ok(f"echo hi > {name}.txt && git add {name}.txt && git commit -q -m 'Add {name}'"),
        bad("git commit -m 'again'"),
        bad(rng.choice(("gti log", "git lgo", "git comit -m x"))),
    ]
    return TaskSpec("Use git in a folder that is not yet a repository.", steps)


@family("git_log_show")
def _git_log(rng: random.Random) -> TaskSpec:
    ws = words(rng, rng.randint(2, 4))
    commits = " && ".join(f"echo {w} >> log.txt && git commit -qam 'Add {w}'" for w in ws[1:])
    steps = [
        ok(f"git init -q && echo {ws[0]} > log.txt && git add . && git commit -qm 'Add {ws[0]}'"),
        ok(commits or "true"),
        ok("git log --format='%h %an %s'"),
        ok("git show --stat --format='%s' HEAD | tail -n 2"),
        bad(f"git show HEAD~{len(ws) + 2}"),
        ok("git rev-list --count HEAD"),
    ]
    return TaskSpec("Make a few commits and read the history.", steps)


@family("git_restore")
def _git_restore(rng: random.Random) -> TaskSpec:
    f = rng.choice(words(rng, 3))
    text = " ".join(words(rng, 3))
    steps = [
        ok(f"git init -q && echo '{text}' > {f}.txt && git add . && git commit -qm init"),
        ok(f"echo oops >> {f}.txt && git status --short"),
        bad(f"git restore {f}"),
        ok(f"git restore {f}.txt && git status --short && cat {f}.txt"),
        ok(f"rm {f}.txt && git status --short"),
        ok(f"git checkout -- {f}.txt && ls"),
    ]
    return TaskSpec(f"Undo unwanted edits to {f}.txt with git.", steps)


@family("git_merge")
def _git_merge(rng: random.Random) -> TaskSpec:
    a, b = words(rng, 2)
    steps = [
        ok(f"git init -q && echo {a} > {a}.txt && git add . && git commit -qm 'Add {a}'"),
        ok(f"git switch -qc topic && echo {b} > {b}.txt && git add . && git commit -qm 'Add {b}'"),
        ok("git switch -q main && git merge -q topic && ls"),
        bad("git merge nothing-here"),
        ok("git log --oneline | wc -l"),
    ]
    return TaskSpec("Merge a topic branch back into main.", steps)


@family("git_ignore")
def _git_ignore(rng: random.Random) -> TaskSpec:
    ext = rng.choice(("log", "tmp", "pyc", "bak"))
    names = words(rng, 2)
    steps = [
        ok(f"git init -q && touch {names[0]}.txt {names[1]}.{ext} && git status --short"),
        ok(f"echo '*.{ext}' > .gitignore && git status --short"),
        ok(f"git check-ignore -v {names[1]}.{ext}"),
        bad(f"git check-ignore {names[0]}.txt"),
        bad(f"git add {names[1]}.{ext}"),
    ]
    return TaskSpec(f"Keep .{ext} files out of git.", steps)


_MAKEFILE = """CC_OUT = build/{name}.txt

all: $(CC_OUT)

$(CC_OUT): src.txt
\tmkdir -p build
\ttr a-z A-Z < src.txt > $(CC_OUT)

clean:
\trm -rf build

.PHONY: all clean
"""


@family("make_build")
def _make_build(rng: random.Random) -> TaskSpec:
    name = rng.choice(words(rng, 3))
    files = {
        "Makefile": _MAKEFILE.format(name=name),
        "src.txt": lines_file(words(rng, rng.randint(2, 3))),
    }
    steps = [
        ok("make"),
        ok(f"cat build/{name}.txt"),
        ok("make"),
        bad(rng.choice(("make install", "make test", "make bulid"))),
        ok("make clean && ls"),
    ]
    return TaskSpec("Build the project with make and clean up.", steps, files)


@family("make_errors")
def _make_errors(rng: random.Random) -> TaskSpec:
    target = rng.choice(("check", "lint", "verify"))
    msg = rng.choice(words(rng, 3))
    files = {
        "sub/Makefile": f"{target}:\n\t@echo checking {msg}\n\t@test -f {msg}.ok\n",
    }
    steps = [
        bad("make"),
        ok("cd sub && make -n"),
        bad(f"make {target}"),
        ok(f"touch {msg}.ok && make {target}"),
        bad("make -C nowhere"),
    ]
    return TaskSpec(f"Run the {target} target of the sub project.", steps, files)


_MODULE = """def {fn}(a, b):
    return a {op} b
"""

_TEST = """import unittest

from {mod} import {fn}


class Test{cls}(unittest.TestCase):
    def test_small(self):
        self.assertEqual({fn}({a}, {b}), {want})

    def test_zero(self):
        self.assertEqual({fn}({a}, 0), {zero})


if __name__ == "__main__":
    unittest.main()
"""

_OPS = {"add": "+", "sub": "-", "mul": "*"}


def _py_pkg(rng: random.Random, *, wrong: bool) -> tuple[str, dict[str, str], str]:
    fn = rng.choice(sorted(_OPS))
    mod = rng.choice(("calc", "ops", "mathx"))
    a, b = rng.randint(2, 9), rng.randint(2, 9)
    op = _OPS[fn]
    want = eval(f"{a} {op} {b}")  # two small ints and a fixed operator
    zero = eval(f"{a} {op} 0")
    if wrong:
        want += 1
    test = _TEST.format(mod=mod, fn=fn, cls=fn.title(), a=a, b=b, want=want, zero=zero)
    return mod, {f"{mod}.py": _MODULE.format(fn=fn, op=op), f"test_{mod}.py": test}, fn


@family("unittest_run")
def _unittest_run(rng: random.Random) -> TaskSpec:
    wrong = rng.random() < 0.5
    mod, files, fn = _py_pkg(rng, wrong=wrong)
    run = f"python3 -m unittest test_{mod}"
    steps = [
        ok(f"ls && grep -c 'def test' test_{mod}.py"),
        bad("python3 -m pytest -q"),
        bad(run) if wrong else ok(run),
        ok(f"python3 -m unittest -v test_{mod}.Test{fn.title()}.test_zero 2>&1 | head -n 1"),
        bad(f"python3 -m unittest test_{typo(rng, mod)}"),
    ]
    return TaskSpec(f"Run the unit tests of {mod}.py.", steps, files)


@family("unittest_fix_failure")
def _unittest_fix(rng: random.Random) -> TaskSpec:
    mod, files, _fn = _py_pkg(rng, wrong=False)
    files[f"{mod}.py"] = files[f"{mod}.py"].replace("return a", "return 1 + a")
    steps = [
        bad(f"python3 -m unittest -q test_{mod}"),
        ok(f"cat {mod}.py"),
        ok(f"sed -i 's/return 1 + a/return a/' {mod}.py"),
        ok(f"python3 -m unittest -q test_{mod}"),
    ]
    return TaskSpec(f"Make the failing tests of {mod}.py pass.", steps, files)


@family("unittest_discover")
def _unittest_discover(rng: random.Random) -> TaskSpec:
    mod, files, _fn = _py_pkg(rng, wrong=False)
    files = {f"tests/{k}" if k.startswith("test_") else k: v for k, v in files.items()}
    files["tests/__init__.py"] = ""
    steps = [
        ok("find . -name '*.py' | sort"),
        bad("python3 -m unittest discover -s tset"),
        ok("python3 -m unittest discover -s tests -t ."),
        bad(f"python3 tests/test_{mod}.py"),
        ok(f"PYTHONPATH=. python3 tests/test_{mod}.py"),
    ]
    return TaskSpec("Discover and run the tests under tests/.", steps, files)


@family("make_unittest")
def _make_unittest(rng: random.Random) -> TaskSpec:
    wrong = rng.random() < 0.5
    mod, files, _fn = _py_pkg(rng, wrong=wrong)
    files["Makefile"] = f"test:\n\tpython3 -m unittest -q test_{mod}\n\n.PHONY: test\n"
    other = rng.choice(("tests", "tset", "check"))
    steps = [
        ok("cat Makefile"),
        bad("make test") if wrong else ok("make test"),
        bad(f"make {other}"),
        ok("make -s test 2>&1 | tail -n 1"),
    ]
    return TaskSpec(f"Run the {mod} tests through make.", steps, files)
