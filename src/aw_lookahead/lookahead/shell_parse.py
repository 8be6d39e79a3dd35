"""Shell text -> the simple commands it runs, with tree-sitter-bash (a real bash grammar).

One parse per text serves every reader of it (the read-only router, the rule judge, the
effect classifier, the grounded look): :func:`parse_script` keeps the last texts it
parsed, and the :class:`Script` it returns is shared and must not be changed.

What a :class:`Script` holds, for every simple command anywhere in the text
(lists, pipelines, subshells, groups, loops, conditionals, function bodies,
command and process substitutions, heredoc bodies):

* its words after quote removal (``'rm'``, ``r"m"`` and ``\\rm`` all read
  ``rm``); a part that expands at run time (``$x``, ``$(...)``, backticks,
  arithmetic) reads :data:`DYN`, a process substitution :data:`PROC`;
* the redirections that apply to it, its own and those of every enclosing
  statement (``{ a; b; } > f`` applies ``> f`` to both; ``a && b > f`` and
  ``a | b > f`` to ``b`` only, as bash does);
* what it reads on stdin when the text shows it: a heredoc or here-string
  body, or the literal output of an ``echo``/``printf`` piped into it; and
  whether stdin comes from somewhere the text does not show (a file, a
  non-literal producer);
* the static words of its whole pipeline (to see ``sort f > f``);
* whether it is *guarded*: it runs only under a condition or its failure is
  handled by the text (an ``if``/``while``/``until``/``case``/``for`` part, the
  left of ``||``, a negated pipeline, a function body), so its failure is not
  the text's failure.

``problems`` lists what the grammar could not read (syntax errors, missing tokens, a
reserved word where a command should be). Parsing never raises.
"""

from __future__ import annotations

import functools
import re
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .shell_words import DYN, PROC, ansi_c, node_text, shell_quote_dyn, word_value

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

__all__ = [
    "DYN",
    "MAX_COMMANDS",
    "PROC",
    "Command",
    "Redirect",
    "Script",
    "parse_script",
    "program_names",
    "shell_quote_dyn",
]

_RESERVED = frozenset(
    {"then", "else", "elif", "fi", "do", "done", "esac", "in", "}", "{", "!", "[[", "]]"}
)
_GUARDING = frozenset(
    {
        "if_statement",
        "while_statement",
        "for_statement",
        "c_style_for_statement",
        "case_statement",
        "function_definition",
        "negated_command",
    }
)
_COMPOUND = (_GUARDING - {"negated_command"}) | {"subshell", "compound_statement"}
_local = threading.local()
_MAX_NESTING = 200
MAX_COMMANDS = 1000
"""More simple commands than this in one text are not read (a problem, not a hang)."""


@dataclass(frozen=True)
class Redirect:
    """One redirection: ``op`` as written (``>``, ``>>``, ``&>``, ``<``, ``<<<``, ``<<``...)."""

    op: str
    target: str
    fd: str | None = None


@dataclass
class Command:
    """One simple command as it will run."""

    words: list[str]
    redirects: list[Redirect] = field(default_factory=list)
    stdin: str | None = None
    stdin_unknown: bool = False
    peers: tuple[str, ...] = ()
    assignments: list[str] = field(default_factory=list)
    guarded: bool = False
    offset: int = 0


@dataclass
class Script:
    """Every simple command of a shell text, plus what could not be parsed."""

    commands: list[Command] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    substitutions: int = 0
    assigns: bool = False
    background: bool = False
    compound: bool = False
    functions: set[str] = field(default_factory=set)
    assignments: list[str] = field(default_factory=list)
    """Every ``NAME=value`` anywhere in the text (raw), those alone on a line included."""


def _parser() -> Parser:
    parser: Parser | None = getattr(_local, "parser", None)
    if parser is None:
        import tree_sitter_bash
        from tree_sitter import Language
        from tree_sitter import Parser as _Parser

        parser = _Parser(Language(tree_sitter_bash.language()))
        _local.parser = parser
    return parser


class _Walker:
    def __init__(self, script: Script) -> None:
        self.script = script
        self.depth = 0
        self.too_deep = False
        self.guard = 0
        self.piped: list[Node] = []  # commands a heredoc's owner pipes into (`cat <<E | sh`)

    def visit(self, node: Node, inherited: tuple[Redirect, ...] = ()) -> None:
        self.depth += 1
        try:
            if self.depth > _MAX_NESTING:
                if not self.too_deep:
                    self.too_deep = True
                    self.script.problems.append("the text nests too deeply to read")
                return
            self._visit(node, inherited)
        finally:
            self.depth -= 1

    def _visit(self, node: Node, inherited: tuple[Redirect, ...]) -> None:
        kind = node.type
        if len(self.script.commands) > MAX_COMMANDS:
            if not self.too_deep:
                self.too_deep = True
                self.script.problems.append(f"more than {MAX_COMMANDS} commands to read")
            return
        if node.is_error or node.is_missing:
            self.script.problems.append(f"cannot parse {node_text(node)[:60]!r}")
        if kind in ("command_substitution", "process_substitution"):
            self.script.substitutions += 1
        if kind == "redirected_statement":
            self._redirected(node, inherited)
            return
        if kind == "pipeline":
            self._pipeline(node, inherited)
            return
        if kind == "command":
            self._command(node, inherited)
            return
        if kind == "list" and any(c.type == "||" for c in node.children):
            left = node.children[0]
            self.guard += 1
            try:
                self.visit(left, inherited)
            finally:
                self.guard -= 1
            for child in node.children[1:]:
                self.visit(child, inherited)
            return
        if kind == "function_definition":
            name = node.child_by_field_name("name")
            if name is not None:
                self.script.functions.add(node_text(name))
        if kind == "variable_assignment":
            self.script.assigns = True
            self.script.assignments.append(node_text(node))
        if kind in ("declaration_command", "unset_command"):
            words = [node_text(c) if not c.is_named else word_value(c) for c in node.children]
            self.script.commands.append(
                Command(words=words, redirects=list(inherited), guarded=self.guard > 0)
            )
        if kind in _COMPOUND:
            self.script.compound = True
        if kind == "&":
            self.script.background = True
        guarding = kind in _GUARDING
        self.guard += guarding
        try:
            for child in node.children:
                self.visit(child, inherited)
        finally:
            self.guard -= guarding

    def _redirects(self, node: Node) -> list[Redirect]:
        out: list[Redirect] = []
        for child in node.children:
            if child.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                out.append(self._redirect(child))
        return out

    def _redirect(self, node: Node) -> Redirect:
        fd: str | None = None
        op = ""
        target = ""
        previous = ""
        for child in node.children:
            after, previous = previous, child.type
            first = child.children[0].type if child.children else ""
            if node.type == "heredoc_redirect" and (
                (after in ("|", "|&") and child.is_named)
                or (child.type == "pipeline" and first in ("|", "|&"))
            ):
                self.piped.append(child)  # visited once the heredoc's owner is recorded
            elif child.type == "file_descriptor":
                fd = node_text(child)
            elif not child.is_named and not op:
                op = child.type
            elif child.type == "heredoc_body":
                target = node_text(child)
                self.visit(child)
            elif child.type in ("heredoc_start", "heredoc_end"):
                continue
            elif child.is_named and not target:
                target = word_value(child)
                self.visit(child)
        return Redirect(op=op, target=target, fd=fd)

    def _redirected(self, node: Node, inherited: tuple[Redirect, ...]) -> None:
        own = tuple(self._redirects(node))
        body = node.child_by_field_name("body")
        if body is None:
            body = next(
                (c for c in node.children if c.is_named and not c.type.endswith("redirect")), None
            )
        if body is None:  # `> f` alone: a null command with redirections
            self.script.commands.append(
                Command(words=[], redirects=[*inherited, *own], guarded=self.guard > 0)
            )
            return
        files = tuple(r for r in own if r.op not in ("<<", "<<-", "<<<"))
        if body.type in ("list", "pipeline") and files:
            # bash binds `a && b > f` and `a | b > f` to the last command only; the grammar
            # hangs the redirection on the whole statement
            start = len(self.script.commands)
            self.visit(body, (*inherited, *(r for r in own if r not in files)))
            last = [c for c in body.children if c.is_named][-1].start_byte
            for command in self.script.commands[start:]:
                if command.offset >= last:
                    command.redirects.extend(files)
                    command.stdin_unknown |= any(r.op == "<" for r in files)
            if len(self.script.commands) > start:
                self._flush_pipes(self.script.commands[-1])
            return
        before = len(self.script.commands)
        self.visit(body, (*inherited, *own))
        if len(self.script.commands) > before:
            self._flush_pipes(self.script.commands[-1])

    def _flush_pipes(self, producer: Command) -> None:
        """Visit what a heredoc's owner pipes into, fed with its literal output."""
        pipes, self.piped = self.piped, []
        for node in pipes:
            start = len(self.script.commands)
            self.visit(node)
            new = self.script.commands[start:]
            if new and new[0].stdin is None and not new[0].stdin_unknown:
                literal = _literal_output(producer)
                new[0].stdin, new[0].stdin_unknown = literal, literal is None

    def _pipeline(self, node: Node, inherited: tuple[Redirect, ...]) -> None:
        stages = [c for c in node.children if c.is_named]
        start = len(self.script.commands)
        literal: str | None = None
        for i, stage in enumerate(stages):
            before = len(self.script.commands)
            self.visit(stage, inherited)
            new = self.script.commands[before:]
            if i > 0 and new:
                first = new[0]
                if first.stdin is None and not first.stdin_unknown:
                    first.stdin, first.stdin_unknown = literal, literal is None
            literal = _literal_output(new[-1]) if len(new) == 1 else None
        peers = tuple(w for c in self.script.commands[start:] for w in c.words)
        for command in self.script.commands[start:]:
            command.peers = peers

    def _command(self, node: Node, inherited: tuple[Redirect, ...]) -> None:
        words: list[str] = []
        assignments: list[str] = []
        own: list[Redirect] = []
        for i, child in enumerate(node.children):
            field_name = node.field_name_for_child(i)
            if child.type == "variable_assignment":
                assignments.append(node_text(child))
                self.visit(child)
            elif child.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                own.append(self._redirect(child))
            elif child.type == "command_name" or field_name in ("name", "argument"):
                inner = child.children[0] if child.type == "command_name" else child
                words.append(word_value(inner))
                self.visit(inner)
            elif child.is_named:
                self.visit(child)
        if words and words[0] in _RESERVED and words[0] not in ("!", "[["):
            self.script.problems.append(f"reserved word {words[0]!r} where a command belongs")
        redirects = [*inherited, *own]
        command = Command(
            words=words,
            redirects=redirects,
            assignments=assignments,
            peers=(),
            guarded=self.guard > 0,
            offset=node.start_byte,
        )
        for r in redirects:
            if r.op in ("<<<", "<<", "<<-"):
                command.stdin = r.target
            elif r.op == "<":
                command.stdin_unknown = True
        command.peers = tuple(words)
        self.script.commands.append(command)
        if self.piped:
            self._flush_pipes(command)


def _literal_output(command: Command) -> str | None:
    """What ``echo``/``printf``/``cat <<EOF`` prints, when the text shows it."""
    if not command.words:
        return None
    name, args = command.words[0], command.words[1:]
    if name == "echo":
        flags = ""
        while args and re.fullmatch(r"-[neE]+", args[0]):
            flags, args = flags + args[0][1:], args[1:]
        text = " ".join(args)
        if flags.rfind("e") > flags.rfind("E"):
            text = ansi_c(re.sub(r"\\0([0-7]{1,3})", lambda m: chr(int(m.group(1), 8)), text))
        return text + ("" if "n" in flags else "\n")
    if name == "printf" and args:
        fmt, values = ansi_c(args[0]), args[1:]
        specs = len(re.findall(r"%[-+ #0-9.]*[sbdqc]", fmt))
        if not specs:
            return fmt + " ".join(values)
        out = []
        while True:
            chunk, values = values[:specs], values[specs:]
            pieces = re.split(r"%[-+ #0-9.]*[sbdqc]", fmt)
            fill = [*chunk, *[""] * (specs - len(chunk))]
            out.append("".join(p + (fill[k] if k < specs else "") for k, p in enumerate(pieces)))
            if not values:
                return "".join(out)
    if name == "cat" and not args and command.stdin is not None:
        return command.stdin
    return None


_SHORT_TEXT = 4096  # longer texts get a small cache: a few actions' worth


def parse_script(text: str) -> Script:
    """Parse shell text; never raises (what cannot be read is in ``problems``). The same
    text is parsed once: a later call returns the same :class:`Script`, shared, unchanged."""
    return _parse_short(text) if len(text) <= _SHORT_TEXT else _parse_long(text)


def _parse(text: str) -> Script:
    script = Script()
    tree = _parser().parse(text.encode("utf-8", "surrogatepass"))
    root = tree.root_node
    _Walker(script).visit(root)
    if root.has_error and not script.problems:
        script.problems.append("the text does not parse as shell")
    return script


_NAME = re.compile(r"[A-Za-z_][\w.+-]*")


def program_names(text: str) -> frozenset[str]:
    """The programs a shell text runs, by base name (``/usr/bin/sed`` reads ``sed``): the
    names a failing program puts before its message (``sed: -e expression ...``)."""
    names = set()
    for command in parse_script(text).commands:
        if command.words:
            found = _NAME.match(command.words[0].rsplit("/", 1)[-1])
            if found:
                names.add(found.group(0))
    return frozenset(names)


_parse_short = functools.lru_cache(maxsize=2048)(_parse)
_parse_long = functools.lru_cache(maxsize=8)(_parse)
