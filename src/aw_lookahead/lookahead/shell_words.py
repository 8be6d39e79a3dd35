"""Shell words as bash reads them: quotes removed, what expands at run time marked.

Used by :mod:`.shell_parse` for every word of a command and a redirection.
"""

from __future__ import annotations

import codecs
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["DYN", "PROC", "ansi_c", "node_text", "shell_quote_dyn", "word_value"]

DYN = "\x00"
"""Stands for a part of a word that expands at run time."""
PROC = "\x01"
"""Stands for a process substitution (``<(...)``, ``>(...)``)."""


def node_text(node: Node) -> str:
    raw = node.text
    return raw.decode("utf-8", "replace") if raw is not None else ""


_UNESCAPE = re.compile(r"\\(.)", re.DOTALL)
_DQ_UNESCAPE = re.compile(r"\\([\\\"$`\n])")


def ansi_c(body: str) -> str:
    try:
        return codecs.decode(body.encode("latin-1", "backslashreplace"), "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return body


def word_value(node: Node) -> str:
    """The static value of a word node (quotes removed, expansions as DYN/PROC)."""
    kind = node.type
    if kind == "word":
        return _UNESCAPE.sub(r"\1", node_text(node))
    if kind in ("raw_string", "number", "variable_name", "special_variable_name"):
        text = node_text(node)
        return text[1:-1] if kind == "raw_string" and len(text) >= 2 else text
    if kind == "ansi_c_string":
        return ansi_c(node_text(node)[2:-1])
    if kind in ("string", "translated_string"):
        out = []
        for child in node.children:
            if child.type == "string_content":
                out.append(_DQ_UNESCAPE.sub(r"\1", node_text(child)))
            elif child.type not in ('"', "$"):
                out.append(word_value(child))
        return "".join(out)
    if kind == "concatenation":
        return "".join(word_value(c) for c in node.children)
    if kind == "process_substitution":
        return PROC
    if kind in ("simple_expansion", "expansion", "command_substitution", "arithmetic_expansion"):
        return DYN
    return node_text(node)


def shell_quote_dyn(text: str) -> str:
    """Shell text for re-parsing a word's value: DYN/PROC become an expansion again."""
    return text.replace(DYN, "${__aw_dyn}").replace(PROC, "${__aw_dyn}")
