"""Interpreters and database clients: the code and SQL they are handed, judged as code.

Python, Perl, Ruby, Node and PHP one-liners (``-c``/``-e``/``-r``/``--eval``,
clusters such as ``-pe``), other evaluators (``lua -e``, ``Rscript -e``,
``julia -e``, ``osascript -e``, ``pwsh -c``...), code on stdin (a heredoc, a
here-string, a piped ``echo``) and awk programs are read by
:mod:`._code_effects`; code from input the text does not show is possibly
destructive, a script named by its path is judged by its name only. Database
clients are read for SQL wherever it is: arguments, a value glued to its flag
(``mysql -e'DROP ...'``), stdin; SQL from a file or input the text does not
show (``-f``, ``< dump.sql``, ``.read``) is possibly destructive.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from aw_lookahead.lookahead._code_effects import awk_effects, code_effects, sql_effects
from aw_lookahead.lookahead._shell_programs import Effect, Recurse, operands
from aw_lookahead.lookahead.shell_parse import DYN, PROC

__all__ = [
    "AWKS",
    "CODE_FLAGS",
    "DB_CLIENTS",
    "EVALUATORS",
    "PYTHONS",
    "STDIN_FILES",
    "awk",
    "database",
    "evaluator",
    "interpreter",
    "stdin_code",
]

STDIN_FILES = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
PYTHONS = ("python", "pypy")
CODE_FLAGS = frozenset({"perl", "ruby", "node", "nodejs", "php"})
DB_CLIENTS = frozenset(
    {
        "sqlite3",
        "psql",
        "mysql",
        "mariadb",
        "clickhouse-client",
        "clickhouse",
        "cqlsh",
        "influx",
        "duckdb",
        "sqlcmd",
        "redis-cli",
        "mongo",
        "mongosh",
    }
)
# interpreter -> options whose value is code (stdin is code when none is given)
EVALUATORS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("lua", "luajit", "texlua"), ("-e",)),
    **dict.fromkeys(("Rscript", "R"), ("-e", "--expr")),
    "julia": ("-e", "--eval", "-E", "--print"),
    "bun": ("-e", "--eval", "-p", "--print"),
    "deno": ("eval",),
    "osascript": ("-e",),
    **dict.fromkeys(("pwsh", "powershell", "powershell.exe"), ("-c", "-Command", "-command")),
    "groovy": ("-e",),
    **dict.fromkeys(("tclsh", "wish", "jimsh", "jshell", "gst"), ()),
    **dict.fromkeys(("scala", "elixir", "racket", "clojure", "clj", "kotlin"), ("-e", "--eval")),
    "erl": ("-eval",),
    "guile": ("-c",),
    "sbcl": ("--eval",),
    "expect": ("-c",),
}
AWKS = frozenset({"awk", "gawk", "mawk", "nawk"})


def stdin_code(j: Recurse, what: str, judge: Callable[[str], list[Effect]]) -> list[Effect]:
    stdin, unknown = getattr(j, "stdin", (None, False))
    if stdin is not None:
        return judge(stdin)
    if unknown:
        return [Effect("destroys", f"the {what} runs code from input the text does not show")]
    return []


# language -> (letters whose value is code, letters taking a value, letters with an
# optional value attached to the cluster)
_OPTIONS = {
    "python": ("c", "WXQm", ""),
    "perl": ("eE", "MmIx", "il0"),
    "ruby": ("e", "rICEx", "iK"),
    "node": ("ep", "r", ""),
    "php": ("r", "dcz", ""),
}


def interpreter(base: str, args: list[str], j: Recurse) -> list[Effect]:
    language = "python" if base.startswith(PYTHONS) else "node" if base == "nodejs" else base
    code_letters, value_letters, optional = _OPTIONS[language]
    codes: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        nxt = args[i + 1] if i + 1 < len(args) else ""
        i += 1
        if a.startswith("--"):
            name, _, value = a.partition("=")
            if name in ("--eval", "--print"):
                codes.append(value if "=" in a else nxt)
                i += 0 if "=" in a else 1
            continue
        if a == "-" or not a.startswith("-"):
            if not codes and a != "-":
                return []  # a script file: judged by its name only
            break
        for k, ch in enumerate(a[1:], 1):
            rest = a[k + 1 :]
            if ch in code_letters:
                codes.append(rest or nxt)
                i += 0 if rest else 1
                break
            if ch in value_letters:
                if language == "python" and ch == "m":
                    return []  # a module: judged by its name only
                i += 0 if rest else 1
                break
            if ch in optional:
                break
    if codes:
        return [e for code in codes for e in code_effects(language, code, j)]
    return stdin_code(j, f"{language} interpreter", lambda text: code_effects(language, text, j))


def awk(args: list[str], j: Recurse) -> list[Effect]:
    if any(a == "-f" or a.startswith("--file") for a in args):
        return []
    ops = operands(args, "Fvfi", ("--field-separator", "--assign", "--include"))
    return awk_effects(ops[0], j) if ops else []


_DB_FILES = ("-f", "--file", "-i", "--init", "-input", "--source")


def database(base: str, args: list[str], stdin: str | None, stdin_unknown: bool) -> list[Effect]:
    """SQL a database client is told to run, wherever it is (glued to its flag too)."""
    texts = [*args, *([stdin] if stdin else [])]
    texts += [a[2:] for a in args if a.startswith("-") and not a.startswith("--") and len(a) > 2]
    texts += [a.split("=", 1)[1] for a in args if a.startswith("--") and "=" in a]
    out = sql_effects(base, texts)
    hidden = stdin_unknown or any(a in _DB_FILES or a.startswith("--file=") for a in args)
    hidden = hidden or any(DYN in a or PROC in a for a in args[1:] if " " not in a)
    hidden = hidden or any(re.match(r"^\s*[.\\](?:read|i|include|source)\b", t) for t in texts)
    if hidden:
        out.append(Effect("destroys", f"{base} runs SQL the text does not show"))
    return out


def evaluator(base: str, args: list[str], j: Recurse) -> list[Effect]:
    flags = EVALUATORS[base]
    codes: list[str] = []
    for k, a in enumerate(args):
        if a in flags and k + 1 < len(args):
            codes.append(args[k + 1])
        elif any(a.startswith(f + "=") for f in flags if f.startswith("--")):
            codes.append(a.split("=", 1)[1])
        elif a.startswith(("-Enc", "-enc", "-e ")) and base.startswith("p"):
            return [Effect("destroys", f"{base} runs encoded code")]
    if codes:
        return [e for code in codes for e in code_effects(base, code, j)]
    ops = operands(args)
    if ops and ops[0] not in STDIN_FILES:
        return []  # a script file: judged by its name only
    return stdin_code(j, f"{base} interpreter", lambda text: code_effects(base, text, j))
