"""What a tool call's arguments ask for, read at any nesting depth (issue 46).

A string that merely *mentions* a deleting word never counts; what counts is
an argument whose *name* is an action or a flag, or a value that is a program
in its own right:

* **deletion flags and actions**: a key named for a deleting verb
  (``delete``, ``purge``, ``hard_delete``, ``deleteAfterRead``...) with a true
  value; an action-like key (``action``, ``op``, ``operation``, ``mode``,
  ``method``, ``verb``, ``intent``) whose value names a deleting verb
  (``"delete"``, ``"bulk_hard_delete"``, ``"deleteAll"``). ``remove_duplicates``
  and the like remove nothing the caller would miss; ``skip_delete``,
  ``dry_run``-style words cancel.
* **SQL** in any string: statements found where a statement starts (the text's
  start, after ``;``, a line break, ``(``, ``BEGIN``, ``$$``, ``EXPLAIN``, or
  inside ``EXEC('...')``), after comments are removed (``/**/``, ``--``, and
  ``#`` both as a comment and not, as dialects differ; MySQL's ``/*! ... */``
  keeps its text, as MySQL runs it) and quoted literals are blanked (with and
  without backslash escapes). Destroying: ``DROP <object>``, ``DELETE FROM``,
  ``TRUNCATE``, ``ALTER TABLE ... DROP``, ``UPDATE`` without ``WHERE`` (or
  ``WHERE 1=1``) or setting a column to ``NULL``, ``MERGE ... THEN DELETE``,
  Mongo ``.drop()``/``deleteMany()``, Redis ``FLUSHALL``. Writing: ``INSERT``,
  other ``UPDATE``\\ s, ``CREATE``, ``ALTER``, ``GRANT``...
* **HTTP methods**: a method-like key (``method``, ``http_method``,
  ``X-HTTP-Method-Override``, ``_method``...) anywhere; a header line or
  ``[name, value]`` pair ``X-HTTP-Method-Override: DELETE`` under a header key;
  ``_method=DELETE`` in a URL's query; a raw request line ``DELETE /x
  HTTP/1.1``. ``DELETE`` and ``PURGE`` destroy, other methods than
  ``GET``/``HEAD``/``OPTIONS`` write.
* **commands**: a string under a shell key (``command``, ``cmd``, ``script``,
  or any key with such a word: ``post_cmd``, ``shell_command``) and an
  argv-like array (``argv``, ``command``, ``args``..., or ``program``/``path``
  + ``args``) judged as shell text by :func:`.shell_effects.worst_effect`.

Under a key that holds text the tool writes or sends (``content``, ``body``,
``new_text``, ``message``...) all of this only makes the call a write: a SQL
file or an issue that quotes ``DROP TABLE`` is stored, not run.

A string holding JSON (``'{"sql": "DROP TABLE users"}'``) is read as JSON too.
A string longer than :data:`.shell_effects.MAX_TEXT` or a value nested deeper
than 32 levels is not read: it may write.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from .shell_effects import MAX_TEXT, worst_effect

__all__ = ["DELETE_VERBS", "argument_effects", "verb_tokens"]

#: Verbs whose doing loses data (names, flags, action values).
DELETE_VERBS = frozenset(
    {
        "delete",
        "del",
        "remove",
        "rm",
        "drop",
        "purge",
        "destroy",
        "wipe",
        "erase",
        "unlink",
        "rmdir",
        "expunge",
        "shred",
        "nuke",
        "obliterate",
        "cleanup",
        "prune",
        "discard",
    }
)
_WRITE_ACTIONS = frozenset(
    {"write", "create", "update", "set", "put", "post", "patch", "edit", "insert", "upsert",
     "replace", "overwrite", "truncate", "reset", "clear", "flush", "move", "rename", "kill",
     "terminate", "exec", "execute", "run", "save", "modify", "merge", "apply", "upload",
     "clean"}
)  # fmt: skip
# What a "remove"/"drop" of these objects loses is not the caller's data.
_HARMLESS_OBJECTS = frozenset(
    {"duplicates", "duplicate", "dupes", "na", "nan", "nulls", "null", "empty", "blank",
     "blanks", "whitespace", "spaces", "stopwords", "html", "tags", "markup", "formatting",
     "punctuation", "accents", "diacritics", "newlines", "prefix", "suffix", "highlight"}
)  # fmt: skip
# A key with one of these words does not ask for deletion (``skip_delete``, ``dry_run``...).
_NEGATING = frozenset(
    {"no", "not", "skip", "dont", "without", "exclude", "prevent", "avoid", "keep",
     "preserve", "disable", "dry", "include", "show", "only", "allow", "can", "protect",
     "undo", "undelete", "restore", "recover", "preview", "simulate"}
)  # fmt: skip
_ACTION_KEYS = frozenset(
    {"action", "op", "operation", "mode", "method", "verb", "intent", "commandtype", "actiontype"}
)
_METHOD_KEYS = frozenset(
    {"method", "httpmethod", "requestmethod", "verb", "xhttpmethodoverride", "xhttpmethod",
     "xmethodoverride", "methodoverride", "httpmethodoverride"}
)  # fmt: skip
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_DESTROY_METHODS = frozenset({"DELETE", "PURGE"})
_SHELL_KEYS = frozenset(
    {"command", "cmd", "commands", "script", "shell", "bash", "commandline", "cmdline",
     "argv", "exec", "entrypoint", "sh"}
)  # fmt: skip
# A key holding one of these words runs what it holds (``shell_command``, ``post_cmd``).
_SHELL_WORDS = frozenset({"command", "commands", "cmd", "cmds", "script", "shell", "argv"})
_ARGV_KEYS = _SHELL_KEYS | {"args", "arguments", "cmdargs", "commandargs", "params"}
_PROGRAM_KEYS = ("program", "executable", "cmd", "command", "bin", "binary", "exe", "path", "file")
# Text a tool writes or sends (a file's content, an issue's body): SQL or a command in it
# is stored, not run, so it makes the call a write, never a destroying one.
_PAYLOAD_KEYS = frozenset(
    {"content", "contents", "text", "newtext", "oldtext", "newcontent", "newstring",
     "oldstring", "filetext", "patch", "diff", "edits", "body", "message", "comment",
     "description", "note", "notes", "markdown", "summary", "title", "template"}
)  # fmt: skip
_WRITE_FLAGS = frozenset({"force", "overwrite", "recursive", "cascade"})
_FALSY = frozenset({"", "false", "no", "0", "off", "none", "null", "n", "f", "never"})
_MAX_DEPTH = 32

# ----------------------------------------------------------------------------- SQL

_IDENT = (
    r"(?:[\w$]+|\"[^\"]+\"|`[^`]+`|\[[^\]]+\])(?:\s*\.\s*(?:[\w$]+|\"[^\"]+\"|`[^`]+`|\[[^\]]+\]))*"
)
_START = r"(?:\A|[;\n(]|\$\$|\bBEGIN\b|\bEXPLAIN\b(?:\s+ANALY[SZ]E)?(?:\s+VERBOSE)?)\s*"
_OBJECTS = (
    r"TABLES?|DATABASE|SCHEMA|VIEW|INDEX|USER|ROLE|KEYSPACE|COLLECTION|SEQUENCE|TRIGGER"
    r"|FUNCTION|PROCEDURE|TYPE|EXTENSION|TABLESPACE|OWNED|COLUMN|PARTITION|STAGE|STREAM"
    r"|MEASUREMENT|SERIES|BUCKET|RETENTION\s+POLICY"
)
_END = r"(?=\s*(?:;|\Z|\)|\n))"
_SQL_DESTROYS = re.compile(
    _START
    + r"(?:"
    + rf"DROP\s+(?:(?:TEMP(?:ORARY)?|MATERIALIZED|EXTERNAL|GLOBAL|FOREIGN)\s+)?(?:{_OBJECTS})"
    + rf"\s+(?:IF\s+EXISTS\s+)?{_IDENT}(?:\s*,\s*{_IDENT})*(?:\s+(?:CASCADE|RESTRICT|PURGE))?{_END}"
    + r"|DELETE\s+(?:(?:LOW_PRIORITY|QUICK|IGNORE|TOP\s*\(?\s*\d+\s*\)?(?:\s+PERCENT)?)\s+)*"
    + rf"FROM\s+(?:ONLY\s+)?{_IDENT}(?:\s*(?:;|\Z|\)|\bWHERE\b|\bUSING\b|\bRETURNING\b"
    + r"|\bORDER\b|\bLIMIT\b)|\s+(?:AS\s+)?\w+\s*(?:;|\bWHERE\b|\bUSING\b))"
    + rf"|DELETE\s+{_IDENT}\s+WHERE\b"
    + rf"|TRUNCATE\s+TABLE\s+(?:ONLY\s+)?{_IDENT}"
    + rf"|TRUNCATE\s+(?:ONLY\s+)?{_IDENT}\s*(?:;|\bCASCADE\b|\bRESTART\b|\bCONTINUE\b)"
    + rf"|ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?:ONLY\s+)?{_IDENT}\s[^;]*?\bDROP\b"
    + r"|MERGE\s+INTO\b[^;]*?\bTHEN\s+DELETE\b"
    + r"|FLUSHALL\b|FLUSHDB\b"
    + r")",
    re.IGNORECASE,
)
_SQL_UPDATE = re.compile(
    _START
    + rf"UPDATE\s+(?:(?:LOW_PRIORITY|IGNORE|ONLY)\s+)*{_IDENT}(?:\s+(?:AS\s+)?\w+)?\s+SET\s+"
    + r"(?P<rest>[^;]*)",
    re.IGNORECASE,
)
_WHERE = re.compile(r"\bWHERE\b", re.IGNORECASE)
_NO_WHERE = re.compile(
    r"\bWHERE\s+(?:1\s*=\s*1|TRUE|1|''\s*=\s*'')\s*(?:;|\Z)|\A(?!.*\bWHERE\b)", re.I | re.S
)
_SET_NULL = re.compile(r"=\s*NULL\b", re.IGNORECASE)
_MONGO = re.compile(
    r"\bdb\s*\.\s*(?:\w+\s*\.\s*)?(?:drop\w*|delete(?:One|Many)|remove|findOneAndDelete)\s*\(",
)
_SQL_WRITES = re.compile(
    _START
    + r"(?:INSERT\s+(?:OR\s+\w+\s+|IGNORE\s+)?INTO|REPLACE\s+INTO|UPSERT\s+INTO|MERGE\s+INTO"
    + r"|CREATE\s+(?:OR\s+REPLACE\s+)?(?:(?:TEMP(?:ORARY)?|UNIQUE|MATERIALIZED)\s+)?"
    + rf"(?:{_OBJECTS})\b|ALTER\s+(?:{_OBJECTS})\b|GRANT\s+\w+|REVOKE\s+\w+|RENAME\s+TABLE"
    + r"|COPY\s+\S+\s+FROM\b|LOCK\s+TABLES?\b)",
    re.IGNORECASE,
)
# Every statement above holds one of these words: text without any is not read further.
_SQL_WORDS = re.compile(
    r"drop|delet|truncat|alter|update|merge|flush|insert|replac|upsert|creat|grant|revok"
    r"|renam|copy|lock|db\s*\.",
    re.IGNORECASE,
)
_EXEC_LITERAL = re.compile(
    r"\b(?:EXEC(?:UTE)?(?:\s+IMMEDIATE)?|sp_executesql)\s*\(?\s*N?'((?:[^']|'')*)'", re.I
)
_LITERAL = re.compile(r"'(?:[^']|'')*'")
_LITERAL_BACKSLASH = re.compile(r"'(?:[^'\\]|\\.|'')*'", re.S)
_VERSIONED = re.compile(r"/\*!\d*(.*?)\*/", re.S)
_COMMENT = re.compile(r"/\*.*?\*/|--[^\n]*|#[^\n]*", re.S)
_COMMENT_NO_HASH = re.compile(r"/\*.*?\*/|--[^\n]*", re.S)


def _sql_variant(code: str, literal: re.Pattern[str], depth: int) -> tuple[str, str] | None:
    for m in _EXEC_LITERAL.finditer(code):
        inner = _sql_effect(m.group(1).replace("''", "'"), depth + 1) if depth < 4 else None
        if inner is not None and inner[0] == "destroys":
            return inner
    code = literal.sub("''", code)
    if hit := _SQL_DESTROYS.search(code):
        statement = " ".join(hit.group(0).strip(" \t\n;($").split()[:3])
        return "destroys", f"the SQL {statement!r}... destroys data"
    if _MONGO.search(code):
        return "destroys", "the Mongo code drops or deletes documents"
    for update in _SQL_UPDATE.finditer(code):
        assignments = _WHERE.split(update.group("rest"), maxsplit=1)[0]
        if _SET_NULL.search(assignments):
            return "destroys", "the SQL UPDATE sets a column to NULL"
        if _NO_WHERE.search(update.group("rest")):
            return "destroys", "the SQL UPDATE has no WHERE: it changes every row"
    if _SQL_UPDATE.search(code) or _SQL_WRITES.search(code):
        return "writes", "SQL that writes"
    return None


def _sql_effect(text: str, depth: int = 0) -> tuple[str, str] | None:
    """``("destroys"|"writes", why)`` for SQL statements in ``text``, or ``None``.

    Dialects disagree on ``#`` (a comment in MySQL, an operator in PostgreSQL) and on
    backslashes in literals, so the text is read every way; the worst reading counts.
    """
    if not _SQL_WORDS.search(text):
        return None
    code = _VERSIONED.sub(r" \1 ", text)
    found: tuple[str, str] | None = None
    readings = {comment.sub(" ", code) for comment in (_COMMENT, _COMMENT_NO_HASH)}
    for reading in readings:
        for literal in (_LITERAL, _LITERAL_BACKSLASH):
            effect = _sql_variant(reading, literal, depth)
            if effect is not None and effect[0] == "destroys":
                return effect
            found = found or effect
            if "\\" not in reading:
                break  # both literal rules read it alike
    return found


# ----------------------------------------------------------------------------- HTTP

_HEADER_LINE = re.compile(
    r"\bx-(?:http-)?method(?:-override)?\s*[:=]\s*[\"']?(DELETE|PURGE)\b", re.IGNORECASE
)
_URL = re.compile(r"\s*(?:https?://|/|\?)\S*\s*\Z", re.IGNORECASE)
_URL_METHOD = re.compile(
    r"[?&;](?:_method|method|_?http_method|x-http-method-override)=(DELETE|PURGE)\b", re.I
)
_REQUEST_LINE = re.compile(r"\A\s*(DELETE|PURGE)\s+\S+\s+HTTP/\d")


def _http_effect(key: str, text: str) -> str | None:
    """Why ``text`` (under ``key``) is an HTTP request that deletes, or ``None``."""
    if "header" in key and (m := _HEADER_LINE.search(text)):
        return f"a method-override header asks for HTTP {m.group(1).upper()}"
    if _URL.match(text) and (m := _URL_METHOD.search(unquote(text))):
        return f"the URL's query overrides the method to HTTP {m.group(1).upper()}"
    if m := _REQUEST_LINE.match(text):
        return f"a raw HTTP {m.group(1)} request"
    return None


# ----------------------------------------------------------------------------- words


def verb_tokens(text: str) -> list[str]:
    """``text`` split into lower-case words at case changes and non-alphanumerics."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    return [t.lower() for t in re.split(r"[^A-Za-z0-9]+", spaced) if t]


def _norm_key(key: str) -> str:
    return re.sub(r"[^a-z]", "", key.lower())


def _asks_deletion(words: list[str]) -> str | None:
    """The deleting verb ``words`` ask for (``["hard", "delete"]`` -> ``delete``), or ``None``."""
    if set(words) & _NEGATING:
        return None
    for i, word in enumerate(words):
        if word in DELETE_VERBS:
            following = words[i + 1] if i + 1 < len(words) else ""
            return None if following in _HARMLESS_OBJECTS else word
    return None


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() not in _FALSY
    return bool(value) if isinstance(value, bool | int | float | list | dict) else value is not None


# ----------------------------------------------------------------------------- walk


class _Findings:
    def __init__(self) -> None:
        self.destroys: str | None = None
        self.writes: str | None = None

    def destroy(self, where: str, why: str) -> None:
        self.destroys = self.destroys or f"argument {where!r}: {why}"

    def write(self, where: str, why: str) -> None:
        self.writes = self.writes or f"argument {where!r}: {why}"


def _shell(found: _Findings, where: str, text: str, *, runs: bool) -> None:
    effect = worst_effect(text)
    if effect is not None and effect.severity == "destroys":
        found.destroy(where, effect.reason)
    elif effect is not None:
        found.write(where, effect.reason)
    elif runs:
        found.write(where, "runs a command")


def _argv(found: _Findings, where: str, key: str, items: list[Any], program: Any) -> None:
    if not items or not all(isinstance(i, str) for i in items):
        return
    words = [program, *items] if isinstance(program, str) and key not in _SHELL_KEYS else items
    _shell(found, where, shlex.join(words), runs=key in _SHELL_KEYS)
    if key in _SHELL_KEYS and any(" " in i for i in items):
        _shell(found, where, "\n".join(items), runs=True)  # a list of command lines


def _string(found: _Findings, where: str, key: str, value: str, depth: int) -> None:
    if len(value) > MAX_TEXT:
        found.write(where, f"is too long to read ({len(value)} characters)")
        return
    if value.lstrip()[:1] in ("{", "["):  # JSON text inside a string is read as JSON too
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict | list):
            _walk(found, parsed, where, key, depth + 1)
    if key in _SHELL_KEYS:
        _shell(found, where, value, runs=True)
    if key in _METHOD_KEYS:
        method = value.strip().upper()
        if method in _DESTROY_METHODS:
            found.destroy(where, f"HTTP {method}")
        elif method and method not in _SAFE_METHODS and method.isalpha():
            found.write(where, f"HTTP {method}")
    if key in _ACTION_KEYS:
        words = verb_tokens(value)
        verb = _asks_deletion(words)
        if verb is not None:
            found.destroy(where, f"asks for {verb!r}")
        elif words and words[0] in _WRITE_ACTIONS:
            found.write(where, f"asks for {words[0]!r}")
    if sql := _sql_effect(value):
        (found.destroy if sql[0] == "destroys" else found.write)(where, sql[1])
    if why := _http_effect(key, value):
        found.destroy(where, why)


def _walk(found: _Findings, value: Any, where: str, key: str, depth: int) -> None:
    """Judge ``value`` found at ``where`` under the (normalised) ``key``."""
    if depth > _MAX_DEPTH:
        found.write(where, "is nested too deep to read")
        return
    if isinstance(value, Mapping):
        for k, v in value.items():
            sub = _norm_key(str(k))
            if sub not in _SHELL_KEYS | _ACTION_KEYS and set(verb_tokens(str(k))) & _SHELL_WORDS:
                sub = "command"  # judged as the command it holds
            path = f"{where}.{k}" if where else str(k)
            verb = _asks_deletion(verb_tokens(str(k)))
            if verb is not None and _truthy(v):
                found.destroy(path, f"asks for {verb!r}")
            elif sub in _WRITE_FLAGS and _truthy(v) and depth > 0:
                found.write(path, "writes or forces")
            if isinstance(v, list) and sub in _ARGV_KEYS:
                program = next((value.get(p) for p in _PROGRAM_KEYS if p in value), None)
                _argv(found, path, sub, v, program)
            if sub in _PAYLOAD_KEYS:  # text the tool stores or sends, not what it runs
                inner = _Findings()
                _walk(inner, v, path, sub, depth + 1)
                if inner.destroys or inner.writes:
                    found.writes = found.writes or inner.destroys or inner.writes
            else:
                _walk(found, v, path, sub, depth + 1)
    elif isinstance(value, list):
        if "header" in key:  # [["X-HTTP-Method-Override", "DELETE"]]
            for pair in value:
                if isinstance(pair, list | tuple) and len(pair) == 2:
                    _string(found, where, key, f"{pair[0]}: {pair[1]}", depth)
        for i, item in enumerate(value):
            _walk(found, item, f"{where}[{i}]", key, depth + 1)
    elif isinstance(value, str):
        _string(found, where, key, value, depth)


def argument_effects(arguments: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """``(why it destroys, why it writes)`` from the call's arguments, at any depth."""
    found = _Findings()
    _walk(found, arguments, "", "", 0)
    return found.destroys, found.writes
