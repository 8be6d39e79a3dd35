"""Terminal families: shell state (cd, export, functions), mistakes, Python one-liners, scripts."""

from __future__ import annotations

import json
import random

from aw_lookahead.datagen.terminal.spec import (
    DIRS,
    NAMES,
    Step,
    TaskSpec,
    bad,
    family,
    lines_file,
    ok,
    pick,
    q,
    typo,
    words,
)


@family("shell_cd_pwd")
def _cd_pwd(rng: random.Random) -> TaskSpec:
    a, b, c = pick(rng, DIRS, 3)
    steps = [
        ok(f"mkdir -p {a}/{b}/{c}"),
        ok(f"cd {a}/{b} && pwd"),
        ok("ls"),
        bad(f"cd {typo(rng, c)}"),
        ok(f"cd {c} && pwd"),
        ok("cd ../../.. && pwd"),
    ]
    return TaskSpec(f"Move into {a}/{b}/{c} and back home.", steps)


@family("shell_export_vars")
def _export(rng: random.Random) -> TaskSpec:
    var = rng.choice(("STAGE", "REGION", "APP_MODE", "TARGET"))
    value = rng.choice(words(rng, 4))
    steps = [
        ok(f"{var}={value}"),
        ok(f"bash -c 'echo \"[${var}]\"'"),
        ok(f"export {var} && bash -c 'echo \"[${var}]\"'"),
        ok(f'echo "{var.lower()}=${var}"'),
        ok(f'unset {var} && echo "${{{var}:-unset}}"'),
        bad(f'echo "${{{var}:?is not set}}"'),
    ]
    return TaskSpec(f"See when the variable {var} reaches a child process.", steps)


@family("shell_path_lookup")
def _path_lookup(rng: random.Random) -> TaskSpec:
    tool = rng.choice(words(rng, 4))
    msg = " ".join(words(rng, 2))
    files = {f"bin/{tool}": f"#!/bin/sh\necho '{msg}'\n"}
    steps = [
        bad(tool),
        ok(f"ls bin && ./bin/{tool}"),
        ok('export PATH="$HOME/bin:$PATH"'),
        ok(f"{tool} && command -v {tool} | sed 's|.*/bin/|bin/|'"),
        bad(f"{typo(rng, tool)}"),
    ]
    return TaskSpec(
        f"Make the {tool} tool callable by name.", steps, files, executable=(f"bin/{tool}",)
    )


@family("shell_typos")
def _typos(rng: random.Random) -> TaskSpec:
    name = rng.choice(words(rng, 3))
    files = {f"{name}.txt": lines_file(words(rng, 3))}
    wrong = rng.sample([("sl", "ls"), ("grpe", "grep"), ("cta", "cat"), ("wc-l", "wc -l"),
                        ("ehco", "echo"), ("mkdri", "mkdir")], 2)  # fmt: skip
    steps: list[Step] = []
    for typo_cmd, right in wrong:
        arg = "" if right in ("ls", "mkdir") else f" {name}.txt"
        if right == "grep":
            arg = f" -c . {name}.txt"
        if right == "echo":
            arg = f" {name}"
        if right == "mkdir":
            arg = f" {name}-dir"
        steps += [bad(f"{typo_cmd}{arg}"), ok(f"{right}{arg}")]
    steps.append(ok("ls"))
    return TaskSpec("Work with a text file despite a few typing slips.", steps, files)


@family("shell_exit_codes")
def _exit_codes(rng: random.Random) -> TaskSpec:
    name = rng.choice(words(rng, 3))
    steps = [
        ok(f"touch {name}.txt && test -f {name}.txt; echo $?"),
        bad(f"test -f {typo(rng, name)}.txt"),
        ok("echo $?"),
        ok(f'grep -q zzz {name}.txt || echo "no match, status $?"'),
        bad(f"ls {name}.tx && echo found"),
    ]
    return TaskSpec("Check files with test and read the exit statuses.", steps)


@family("shell_loops")
def _loops(rng: random.Random) -> TaskSpec:
    n = rng.randint(2, 5)
    items = words(rng, n)
    steps = [
        ok(f'for w in {" ".join(items)}; do echo "$w ${{#w}}"; done'),
        ok(f"for i in $(seq {n}); do touch part$i.txt; done && ls"),
        bad("for f in part*.txt; do echo $f done"),
        ok('ls part*.txt | while read f; do echo "got $f"; done | tail -n 2'),
    ]
    return TaskSpec("Use for and while loops to make and list files.", steps)


@family("shell_functions")
def _functions(rng: random.Random) -> TaskSpec:
    fn = rng.choice(("greet", "hello", "welcome", "hi"))
    who = rng.choice(NAMES)
    steps = [
        ok(f'{fn}() {{ echo "{fn}, $1!"; }}'),
        ok(f"{fn} {who}"),
        ok(f"type {fn} | head -n 1"),
        bad(f"{fn}s {who}"),
        bad(f"{fn}() {{ echo x }}"),
    ]
    return TaskSpec(f"Define a shell function {fn} and call it.", steps)


@family("shell_syntax_errors")
def _syntax(rng: random.Random) -> TaskSpec:
    a, b = rng.randint(1, 9), rng.randint(1, 9)
    steps = [
        bad(f"if [ {a} -gt {b} ] then echo bigger; fi"),
        ok(f"if [ {a} -gt {b} ]; then echo bigger; else echo not-bigger; fi"),
        bad(f"[ {a} -lt ]"),
        ok(f"[ {a} -lt {b} ] && echo smaller || echo not-smaller"),
        bad("echo 'unclosed"),
    ]
    return TaskSpec("Compare two numbers in the shell.", steps)


@family("shell_arith")
def _arith(rng: random.Random) -> TaskSpec:
    a, b = rng.randint(10, 99), rng.randint(2, 9)
    steps = [
        ok(f"echo $(({a} * {b}))"),
        ok(f"echo $(({a} / {b})) $(({a} % {b}))"),
        ok(f"echo 'scale=2; {a} / {b}' | bc"),
        bad(f"echo $(({a} / 0))"),
        ok(f"x={a}; x=$((x + {b})); echo $x"),
        bad(f"expr {a} x {b}"),
    ]
    return TaskSpec(f"Do arithmetic with {a} and {b} in the shell.", steps)


@family("py_oneliners")
def _py_oneliners(rng: random.Random) -> TaskSpec:
    n = rng.randint(5, 50)
    ws = words(rng, rng.randint(3, 5))
    steps = [
        ok(f"python3 -c 'print(sum(range({n + 1})))'"),
        ok(f"python3 -c 'print(sorted({json.dumps(ws)}, key=len))'"),
        bad("python3 -c 'print(totl)'"),
        ok(f"python3 -c 'import math; print(math.factorial({rng.randint(3, 9)}))'"),
        bad(f"python -c 'print({n})'"),
    ]
    return TaskSpec("Compute a few values with Python one-liners.", steps)


@family("py_script_traceback")
def _py_script(rng: random.Random) -> TaskSpec:
    fn = rng.choice(("mean", "average", "per_item"))
    values = [rng.randint(1, 20) for _ in range(rng.randint(2, 5))]
    script = (
        f"def {fn}(xs):\n    return sum(xs) / len(xs)\n\n\n"
        f"print({fn}({values!r}))\nprint({fn}([]))\n"
    )
    files = {"calc.py": script}
    steps = [
        ok("cat calc.py"),
        bad("python3 calc.py"),
        ok("sed -i 's/^print(" + fn + r"(\[\]))$/print(\"empty\")/' calc.py"),
        ok("python3 calc.py"),
        bad("python3 calc"),
    ]
    return TaskSpec("Run calc.py and fix the crash on an empty list.", steps, files)


@family("py_json_tool")
def _py_json(rng: random.Random) -> TaskSpec:
    key, other = words(rng, 2)
    good = f'{{"{key}": {rng.randint(1, 99)}, "{other}": [1, 2]}}'
    broken = f'{{"{key}": 1 "{other}": 2}}'
    wrong = typo(rng, key)
    files = {"good.json": good + "\n", "broken.json": broken + "\n"}
    steps = [
        ok("python3 -m json.tool good.json"),
        bad("python3 -m json.tool broken.json"),
        ok(f'python3 -c \'import json; print(json.load(open("good.json"))["{key}"])\''),
        bad(f'python3 -c \'import json; print(json.load(open("good.json"))["{wrong}"])\''),
    ]
    return TaskSpec("Validate two JSON files and read a key.", steps, files)


@family("py_syntax_errors")
def _py_syntax(rng: random.Random) -> TaskSpec:
    name = rng.choice(words(rng, 3))
    files = {
        f"{name}.py": f"def show():\n    print('{name}')\n  print('done')\n",
    }
    steps = [
        bad(f"python3 -c 'print(\"{name}\"'"),
        ok(f"python3 -c 'print(\"{name}\")'"),
        bad(f"python3 {name}.py"),
        ok(f"sed -i 's/^  print/print/' {name}.py && python3 {name}.py"),
    ]
    return TaskSpec(f"Fix the Python syntax errors around {name}.", steps, files)


@family("py_imports")
def _py_imports(rng: random.Random) -> TaskSpec:
    mod = rng.choice(("numpy", "requests", "yaml", "pandas"))
    steps = [
        bad(f"python3 -c 'import {mod}'"),
        ok("python3 -c 'import json, csv; print(\"stdlib ok\")'"),
        bad(f"python3 -c 'from os import {typo(rng, 'getcwd')}'"),
        ok("python3 -c 'import sys; print(sys.version_info[0])'"),
    ]
    return TaskSpec(f"Check which Python modules are available (is {mod} there?).", steps)


@family("py_stdin_pipe")
def _py_stdin(rng: random.Random) -> TaskSpec:
    n = rng.randint(3, 12)
    steps = [
        ok(f"seq {n} | python3 -c 'import sys; print(sum(int(x) for x in sys.stdin))'"),
        ok(f"seq {n} | python3 -c 'import sys; print(max(int(x) ** 2 for x in sys.stdin))'"),
        bad("echo abc | python3 -c 'import sys; print(int(sys.stdin.read()))'"),
        ok(f"printf 'b\\na\\nc\\n' | python3 -c {q(SORT_STDIN)}"),
    ]
    return TaskSpec("Feed numbers to Python through a pipe.", steps)


SORT_STDIN = 'import sys; print(*sorted(sys.stdin), sep="", end="")'


@family("py_write_script")
def _py_write(rng: random.Random) -> TaskSpec:
    items = words(rng, rng.randint(2, 4))
    steps = [
        ok("printf 'import sys\\nfor a in sys.argv[1:]:\\n    print(a.upper())\\n' > up.py"),
        ok(f"python3 up.py {' '.join(items)}"),
        bad(f"python3 up.py {items[0]} | python3 up"),
        ok("python3 up.py"),
        bad("./up.py x"),
    ]
    return TaskSpec("Write a small script that upper-cases its arguments.", steps)
