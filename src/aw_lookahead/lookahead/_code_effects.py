"""What code handed to an interpreter or a database client destroys.

Python code given inline (``python3 -c``, a heredoc, a here-string, a piped
``echo``) is parsed with :mod:`ast`: calls that delete (``shutil.rmtree``,
``os.remove``, ``os.unlink``, ``Path.unlink``, ``rmdir``...), truncate, kill or
move count as destroying; ``open(..., "w")`` and ``write_text`` as
overwriting; ``os.system``/``subprocess`` with literal commands are judged as
shell; with a computed command, ``exec``/``eval`` of computed code, they are
possibly destructive. Perl, Ruby, Node and PHP one-liners are read by the
names of their deleting calls (``unlink``, ``rmtree``, ``FileUtils.rm_rf``,
``fs.rmSync``...). SQL for database clients counts when it drops, truncates
or deletes rows; Redis ``FLUSHALL``/``DEL`` and Mongo ``drop*``/``delete*``.
"""

from __future__ import annotations

import ast
import re

from ._shell_programs import Effect, Recurse

__all__ = ["awk_effects", "code_effects", "sql_effects"]

_PY_DESTROY = {
    "rmtree": "deletes a directory tree",
    "unlink": "deletes a file",
    "rmdir": "deletes a directory",
    "removedirs": "deletes directories",
    "truncate": "truncates a file",
    "ftruncate": "truncates a file",
    "kill": "kills a process",
    "killpg": "kills a process group",
    "move": "moves a path away",
    "rename": "moves a path away",
    "replace": "moves a path over another",
}
_PY_OVERWRITE = frozenset({"write_text", "write_bytes", "copy", "copyfile", "copy2", "copytree"})
_SYSTEM_MODULES = frozenset({"os", "posix", "shutil", "subprocess", "sp", "pathlib"})
_PY_SHELL = frozenset({"system", "popen", "getoutput", "getstatusoutput"})
_PY_ARGV = frozenset({"run", "call", "check_call", "check_output", "Popen", "spawnlp", "execvp"})
_PY_RUN = _PY_SHELL | _PY_ARGV


def _callee(node: ast.Call) -> tuple[str, str]:
    """``(receiver, name)`` of a call: ``os.remove`` -> ``("os", "remove")``."""
    func = node.func
    if isinstance(func, ast.Attribute):
        base = func.value
        receiver = base.id if isinstance(base, ast.Name) else ""
        return receiver, func.attr
    if isinstance(func, ast.Name):
        return "", func.id
    return "", ""


def _literal(node: ast.AST) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _python(code: str, r: Recurse) -> list[Effect]:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return _script(code, r)
    out: list[Effect] = []
    imported = {
        a.asname or a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and n.module in _SYSTEM_MODULES
        for a in n.names
    }
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        receiver, name = _callee(node)
        args = node.args
        system = receiver in _SYSTEM_MODULES or (not receiver and name in imported)
        if name in _PY_DESTROY:
            if name in ("move", "rename", "replace") and receiver not in ("os", "shutil"):
                continue
            out.append(Effect("destroys", f"Python {name}() {_PY_DESTROY[name]}"))
        elif name == "remove" and system:
            out.append(Effect("destroys", "Python os.remove() deletes a file"))
        elif name in _PY_OVERWRITE:
            out.append(Effect("overwrites", f"Python {name}() writes over a path"))
        elif name == "open" and not receiver:
            mode = _literal(args[1]) if len(args) > 1 else None
            for kw in node.keywords:
                if kw.arg == "mode":
                    mode = _literal(kw.value)
            if isinstance(mode, str) and "w" in mode:
                out.append(Effect("overwrites", "Python open(..., 'w') overwrites a file"))
        elif (name in _PY_RUN and system) or (name in ("exec", "eval") and not receiver):
            first = _literal(args[0]) if args else None
            if isinstance(first, str) and name in ("exec", "eval"):
                out += _python(first, r)
            elif isinstance(first, str):
                out += r.code(first)
            elif isinstance(first, list | tuple) and all(isinstance(x, str) for x in first):
                out += r.argv([str(x) for x in first])
            else:
                out.append(Effect("destroys", f"Python {name}() runs a computed command"))
    return out


_SCRIPT_DESTROY = re.compile(
    r"\b(?:unlink|unlinkSync|rmtree|remove_tree|rm_rf|rm_r|rm_f|rmSync|rmdirSync|rmdir"
    r"|truncateSync|File\.delete|Dir\.delete|FileUtils\.(?:rm\w*|remove\w*)|fs\.rm|fs\.unlink"
    r"|fs\.promises\.rm|Process\.kill|process\.kill|shutil\.rmtree|os\.remove)\b"
)
_SCRIPT_OVERWRITE = re.compile(
    r"\b(?:writeFileSync|writeFile|file_put_contents|File\.write|IO\.write)\b"
    r"|\bopen\s*\(?[^;]*?['\"]\s*\+?>(?!>)"
)
_SCRIPT_RUN = re.compile(
    r"\b(?:system|exec|execSync|spawnSync|shell_exec|passthru|popen|qx)\s*\(?\s*"
    r"(?:(['\"])((?:(?!\1).)*)\1)?",
    re.DOTALL,
)


def _script(code: str, r: Recurse) -> list[Effect]:
    out: list[Effect] = []
    m = _SCRIPT_DESTROY.search(code)
    if m:
        out.append(Effect("destroys", f"the code calls {m.group(0)}, which deletes or kills"))
    m = _SCRIPT_OVERWRITE.search(code)
    if m:
        out.append(Effect("overwrites", "the code writes over a file"))
    for run in _SCRIPT_RUN.finditer(code):
        if run.group(2) is not None:
            out += r.code(run.group(2))
        else:
            out.append(Effect("destroys", f"the code runs a computed command ({run.group(0)})"))
    for tick in re.finditer(r"`([^`]*)`", code):
        out += r.code(tick.group(1))
    return out


def code_effects(language: str, code: str, r: Recurse) -> list[Effect]:
    """Effects of ``code`` in ``language`` (``python`` or a scripting language)."""
    if "\x00" in code and not code.replace("\x00", "").strip(" '\"\n;"):
        return [Effect("destroys", f"{language} runs code the text does not show")]
    code = code.replace("\x00", "X").replace("\x01", "X")
    if language == "python":
        return _python(code, r)
    return _script(code, r)


_SQL = re.compile(
    r"\b(?:drop\s+(?:table|database|schema|index|view|user|role|keyspace|collection"
    r"|materialized\s+view)|truncate(?:\s+table)?\s+[\w.\"`]+|delete\s+from"
    r"|alter\s+table\s+\S+\s+drop)\b",
    re.IGNORECASE,
)
_REDIS = frozenset({"flushall", "flushdb", "del", "unlink", "shutdown"})
_MONGO = re.compile(r"\.(?:drop\w*|delete(?:One|Many)|remove|findOneAndDelete)\s*\(")


def sql_effects(client: str, texts: list[str]) -> list[Effect]:
    """Effects of what a database client is told to run (its arguments and stdin)."""
    if client == "redis-cli":
        hit = next((t for t in texts if t.lower() in _REDIS), None)
        return [Effect("destroys", f"redis-cli {hit} deletes keys")] if hit else []
    joined = "\n".join(texts)
    if client in ("mongo", "mongosh"):
        return (
            [Effect("destroys", "the Mongo code drops or deletes data")]
            if _MONGO.search(joined)
            else []
        )
    m = _SQL.search(joined)
    return [Effect("destroys", f"the SQL {m.group(0).split()[0].upper()}s data")] if m else []


_AWK_SYSTEM = re.compile(r"\bsystem\s*\(\s*(?:\"((?:[^\"\\]|\\.)*)\"\s*\))?")
_AWK_WRITE = re.compile(r"\bprintf?\b[^;}]*?>(?!>)")
_AWK_PIPE = re.compile(r"\|\s*\"((?:[^\"\\]|\\.)*)\"")


def awk_effects(program: str, r: Recurse) -> list[Effect]:
    """Effects of an awk program: ``system()``, ``print > file``, ``print | "cmd"``."""
    out: list[Effect] = []
    for m in _AWK_SYSTEM.finditer(program):
        if m.group(1) is None:
            out.append(Effect("destroys", "awk system() runs a computed command"))
        else:
            out += r.code(m.group(1).replace('\\"', '"'))
    for m in _AWK_PIPE.finditer(program):
        out += r.code(m.group(1).replace('\\"', '"'))
    if _AWK_WRITE.search(program):
        out.append(Effect("overwrites", "awk print > file overwrites the file"))
    return out
