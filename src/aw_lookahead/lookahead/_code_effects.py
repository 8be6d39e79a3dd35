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

import re

from ._shell_programs import Effect, Recurse
from .indirect.python_code import python_effects

__all__ = ["awk_effects", "code_effects", "sql_effects"]

_SCRIPT_DESTROY = re.compile(
    r"\b(?:unlink|unlinkSync|rmtree|remove_tree|rm_rf|rm_r|rm_f|rmSync|rmdirSync|rmdir"
    r"|truncateSync|File\.delete|Dir\.delete|FileUtils\.(?:rm\w*|remove\w*)|fs\.rm|fs\.unlink"
    r"|fs\.promises\.rm|Process\.kill|process\.kill|shutil\.rmtree|os\.remove|file\.remove"
    r"|Deno\.remove\w*|Remove-Item|Clear-Content|del\s+/[sq]|File\.unlink"
    r"|Dir\.(?:rmdir|unlink)|FileUtils\.\w+|file\s+delete|delete-file|delete-directory)\b"
    r"|\brm(?=\s*\()"
)
_SCRIPT_PIPE = re.compile(r"\bopen\s*\(?[^;]*?([\"'])(\|-|-\||\|[^\"']*|[^\"']*\|)\1")
_SCRIPT_DYNAMIC = re.compile(
    r"\beval\b|\bsend\s*\(|__send__|public_send|instance_eval|class_eval|const_get"
    r"|\bFunction\s*\(|\bloadstring\b|\bdofile\b|\bload\s*\(|do\.call|\bget\s*\("
    r"|parse\s*\(\s*text|\[\s*[\"'][^\"']*[\"']\s*\+|\bInvoke-Expression\b|\biex\b"
    r"|-EncodedCommand|\bchild_process\b[^;]*\[|\bprocess\.binding\b|\brequire\s*\(\s*[^\"'\s)]"
)
_SCRIPT_HTTP = re.compile(r"(?i)[\"'](?:delete|purge)[\"']|method\s*[:=]>?\s*:?delete")
_SCRIPT_OVERWRITE = re.compile(
    r"\b(?:writeFileSync|writeFile|file_put_contents|File\.write|IO\.write)\b"
    r"|\bopen\s*\(?[^;]*?['\"]\s*\+?>(?!>)"
)
_SCRIPT_RUN = re.compile(
    r"(?:\b(?:system2?|exec|execSync|execFileSync|execFile|spawn|spawnSync|shell_exec|passthru"
    r"|proc_open|popen|qx|os\.execute|io\.popen|IO\.popen|Open3\.\w+|Deno\.run|Deno\.Command"
    r"|Start-Process|do shell script|runtime\.exec|ProcessBuilder|Process\.spawn)\b"
    r"|%x|\.execute\s*\(\s*\))\s*[({\[]?\s*(?:(['\"])((?:(?!\1).)*)\1)?",
    re.DOTALL,
)
_PERCENT_X = re.compile(r"%x(?:\(([^)]*)\)|\{([^}]*)\}|\[([^\]]*)\])")


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
            more = re.match(r"\s*,([^;)]*(?:\([^)]*\))?[^;)]*)", code[run.end() :])
            args = re.findall(r"([\"'])((?:(?!\1).)*)\1", more.group(1)) if more else []
            if args:
                out += r.argv([run.group(2), *(a for _q, a in args)])
            else:
                out += r.code(run.group(2))
        elif run.group(0).startswith("%x") and _PERCENT_X.match(code, run.start()):
            m = _PERCENT_X.match(code, run.start())
            out += r.code(next(g for g in m.groups() if g is not None)) if m else []
        elif run.group(0).startswith(".execute"):
            literal = re.search(r"([\"'])((?:(?!\1).)*)\1\s*\.execute\s*\($", code[: run.end()])
            out += r.code(literal.group(2)) if literal else _computed(run.group(0))
        else:
            out += _computed(run.group(0))
    for tick in re.finditer(r"`([^`]*)`", code):
        out += r.code(tick.group(1))
    for pipe in _SCRIPT_PIPE.finditer(code):
        target = pipe.group(2).strip("|").strip("-").strip()
        out += r.code(target) if target else _computed("open with a pipe")
    dynamic = _SCRIPT_DYNAMIC.search(code)
    if dynamic:
        out.append(Effect("destroys", f"the code computes what it calls ({dynamic.group(0)})"))
    if _SCRIPT_HTTP.search(code):
        out.append(Effect("destroys", "the code sends an HTTP DELETE"))
    return out + sql_effects("sql", [code])


def _computed(what: str) -> list[Effect]:
    return [Effect("destroys", f"the code runs a computed command ({what.strip()})")]


def code_effects(language: str, code: str, r: Recurse) -> list[Effect]:
    """Effects of ``code`` in ``language`` (``python`` or a scripting language)."""
    if "\x00" in code and not code.replace("\x00", "").strip(" '\"\n;"):
        return [Effect("destroys", f"{language} runs code the text does not show")]
    code = code.replace("\x00", "X").replace("\x01", "X")
    if language == "python":
        found = python_effects(code, r, lambda texts: sql_effects("sql", texts))
        return found if found is not None else _script(code, r)
    return _script(code, r)


_SQL = re.compile(
    r"\b(?:drop\s+(?!if\b)[a-z]+|drop\s+if\s+exists|truncate(?:\s+table)?\s+[\w.\"`]+"
    r"|delete\s+(?:from\s+)?[\w.\"`\[\]]+|alter\s+table\s+\S+\s+(?:drop|delete)"
    r"|update\s+[\w.\"`\[\]]+\s+set\b|replace\s+into|merge\s+into|purge\s+\w+)",
    re.IGNORECASE,
)
_SQL_COMMENT = re.compile(r"/\*.*?\*/|--[^\n]*", re.DOTALL)
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
    m = _SQL.search(_SQL_COMMENT.sub(" ", joined))
    return (
        [Effect("destroys", f"the SQL {m.group(0).split()[0].upper()} deletes or changes data")]
        if m
        else []
    )


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
        target = m.group(1).replace('\\"', '"')
        if re.match(r"\s*(?:\S*/)?(?:ba|da|z|k|mk|fi)?sh\s*$", target):
            out.append(Effect("destroys", "awk pipes text it computes into a shell"))
        out += r.code(target)
    if _AWK_WRITE.search(program):
        out.append(Effect("overwrites", "awk print > file overwrites the file"))
    return out
