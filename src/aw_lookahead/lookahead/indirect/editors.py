"""Editors run with commands: ``vim -c``/``+cmd``/``--cmd``/``-S``, ``ex``, ``ed``, ``emacs``.

An editor's commands are code. Ex commands are read one by one: ``!cmd``,
``r !cmd``, ``w !cmd``, ``call system("cmd")`` are judged as shell; deleting
lines and writing (``%d|x``, ``,d`` then ``w``) destroys the file's content;
``call delete()``, ``normal``, ``execute``, scripting languages and any command
this reader does not know are possibly destructive; ``q``, ``set``, ``echo``,
``syntax`` and plain writes (an overwrite) are not. Commands from input the
text does not show are possibly destructive. Emacs ``--eval`` code is read for
``shell-command``/``call-process`` (judged when literal) and file deletion.
"""

from __future__ import annotations

import re

from aw_lookahead.lookahead._shell_programs import Effect, EffectRule, Recurse
from aw_lookahead.lookahead.shell_parse import DYN, PROC

__all__ = ["EDITORS"]

_RANGE = re.compile(r"^[\s:]*(?:[%.$]|\d+|'[a-z<>]|/[^/]*/|\?[^?]*\?|[,;+-])*\s*")
_HARMLESS = re.compile(r"^(?:q|qa|q!|qa!|quit|set?|se|echo|ec|syn|syntax|ve|version|noh|f)\b!?")
_WRITE = re.compile(r"^(?:w|wq|wa|wqa|x|xa|xit|up|update|sav|saveas|exi|exit|wall)\b!?\s*(.*)$")
_DELETE = re.compile(r"^(?:d|de|del|delete|c|ch|change|g|global|v|vglobal|s|su|substitute|m|t|j)\b")
_RUN = re.compile(
    r"^(?:norm|normal|exe|execute|py|python|py3|python3|pyx|lua|perl|ruby|so|source|ru"
    r"|runtime|call|let|au|autocmd|bufdo|windo|argdo|cdo|terminal|term|redir|e|edit|r|read)\b"
)


def _ex(command: str, r: Recurse, deleted: list[bool]) -> list[Effect]:
    text = command.strip()
    if DYN in text or PROC in text:
        return [Effect("destroys", "the editor runs commands the text does not show")]
    body = _RANGE.sub("", text, count=1)
    if not body:
        return []
    if body.startswith("!"):
        return r.code(body[1:])
    bang = re.match(r"^(?:r|read|w|write)\s*!(.*)$", body, re.DOTALL)
    if bang:
        return r.code(bang.group(1))
    system = re.search(r"system(?:list)?\(\s*(['\"])((?:(?!\1).)*)\1\s*\)", body)
    if system:
        return r.code(system.group(2))
    if _HARMLESS.match(body):
        return []
    write = _WRITE.match(body)
    if write:
        if deleted[0]:
            return [Effect("destroys", "the editor deletes lines and writes the file")]
        return [Effect("overwrites", "the editor writes the file")]
    if _DELETE.match(body):
        deleted[0] = True
        return []
    if _RUN.match(body) or "delete(" in body or "system(" in body:
        return [Effect("destroys", f"the editor command {body[:40]!r} may run or delete")]
    return [Effect("destroys", f"the editor command {body[:40]!r} is not one this reader knows")]


def _ex_script(commands: list[str], r: Recurse) -> list[Effect]:
    out: list[Effect] = []
    deleted = [False]
    for command in commands:
        if command.lstrip(" :").startswith("!"):
            out += _ex(command, r, deleted)
            continue
        for part in command.split("|"):
            out += _ex(part, r, deleted)
    return out


def _stdin_lines(r: Recurse, what: str) -> list[str] | Effect | None:
    stdin, unknown = getattr(r, "stdin", (None, False))
    if isinstance(stdin, str):
        return stdin.splitlines()
    if unknown:
        return Effect("destroys", f"{what} reads commands from input the text does not show")
    return None


def _vim(name: str) -> EffectRule:
    def rule(args: list[str], r: Recurse) -> list[Effect]:
        commands: list[str] = []
        out: list[Effect] = []
        ex_mode = name == "ex"
        for i, a in enumerate(args):
            nxt = args[i + 1] if i + 1 < len(args) else ""
            if a in ("-c", "--cmd"):
                commands.append(nxt)
            elif a.startswith("+") and len(a) > 1:
                commands.append(a[1:])
            elif a in ("-S", "-s", "-u", "-U", "--script"):
                if nxt in ("-", "/dev/stdin") or DYN in nxt or PROC in nxt:
                    lines = _stdin_lines(r, name) if nxt in ("-", "/dev/stdin") else None
                    if isinstance(lines, list):
                        commands += lines
                    else:
                        out.append(Effect("destroys", f"{name} {a} runs a script not shown"))
            elif re.fullmatch(r"-[a-zA-Z]*[eE][a-zA-Z]*", a) and a not in ("-d",):
                ex_mode = True
        if ex_mode:
            lines = _stdin_lines(r, name)
            if isinstance(lines, Effect):
                out.append(lines)
            elif lines:
                commands += lines
        return out + _ex_script(commands, r)

    return rule


def _ed(args: list[str], r: Recurse) -> list[Effect]:
    lines = _stdin_lines(r, "ed")
    if isinstance(lines, Effect):
        return [lines]
    out: list[Effect] = []
    deleted = False
    for line in lines or []:
        body = _RANGE.sub("", line, count=1)
        if body.startswith("!") or re.match(r"^[erw]\s*!", body):
            out += r.code(body.split("!", 1)[1])
        elif re.match(r"^[dc]\b|^[dc]$|^s/", body):
            deleted = True
        elif re.match(r"^(?:w|wq|W)\b|^(?:w|wq|W)$", body):
            out.append(
                Effect("destroys", "ed deletes lines and writes the file")
                if deleted
                else Effect("overwrites", "ed writes the file")
            )
    return out


_ELISP_SHELL = re.compile(
    r"\((?:async-)?shell-command(?:-to-string)?\s+(\"((?:[^\"\\]|\\.)*)\"|[^\s)]+)"
    r"|\(call-process-shell-command\s+(\"((?:[^\"\\]|\\.)*)\"|[^\s)]+)"
)
_ELISP_PROCESS = re.compile(r"\((?:call-process|start-process|process-file|make-process)\b([^)]*)")
_ELISP_DANGER = re.compile(
    r"\((?:delete-file|delete-directory|rename-file|write-region|erase-buffer|eval|funcall"
    r"|apply|intern|load|load-file|shell|term|compile|make-network-process)\b"
)


def _emacs(args: list[str], r: Recurse) -> list[Effect]:
    out: list[Effect] = []
    codes: list[str] = []
    for i, a in enumerate(args):
        if a in ("--eval", "-eval") and i + 1 < len(args):
            codes.append(args[i + 1])
        elif a.startswith("--eval="):
            codes.append(a.split("=", 1)[1])
        elif (
            a in ("-f", "--funcall", "-l", "--load", "--script", "-x")
            and i + 1 < len(args)
            and (DYN in args[i + 1] or PROC in args[i + 1])
        ):
            out.append(Effect("destroys", f"emacs {a} runs code the text does not show"))
    for code in codes:
        if DYN in code or PROC in code:
            out.append(Effect("destroys", "emacs --eval runs code the text does not show"))
            continue
        for m in _ELISP_SHELL.finditer(code):
            literal = m.group(2) if m.group(2) is not None else m.group(4)
            if literal is None:
                out.append(Effect("destroys", "emacs runs a computed shell command"))
            else:
                out += r.code(literal.replace('\\"', '"'))
        for m in _ELISP_PROCESS.finditer(code):
            strings = re.findall(r"\"((?:[^\"\\]|\\.)*)\"", m.group(1))
            out += r.argv(strings) if strings else [Effect("destroys", "emacs runs a process")]
        danger = _ELISP_DANGER.search(code)
        if danger:
            out.append(Effect("destroys", f"emacs {danger.group(0)[1:]} may delete or run code"))
    return out


EDITORS: dict[str, EffectRule] = {
    **{n: _vim(n) for n in ("vim", "vi", "nvim", "view", "gvim", "vimdiff", "rvim", "ex")},
    **{n: _vim(n) for n in ("vim.basic", "vim.tiny", "nvi", "elvis", "exim_ex")},
    "ed": _ed,
    "red": _ed,
    "emacs": _emacs,
    "emacs-nox": _emacs,
}
