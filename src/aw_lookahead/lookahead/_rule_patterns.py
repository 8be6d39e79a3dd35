"""The rule families' patterns: the text each family looks for in a predicted observation.

The data behind :mod:`.rules` (whose docstring tables the families and their
domains): every :class:`PatternRule` is a name, the outcome it signals, a compiled
pattern and a short reason. Kept apart so the table reads (and grows) apart
from the code that applies it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from aw_lookahead.trajectory import Domain

from ._mcp_text import MCP_TEXT_RULES
from .types import Outcome

__all__ = ["DOMAIN_FAMILIES", "FAMILIES", "PatternRule"]


@dataclass(frozen=True)
class PatternRule:
    """One pattern of a family and what a match means."""

    name: str
    outcome: Outcome
    pattern: re.Pattern[str]
    detail: str


def _r(name: str, outcome: Outcome, pattern: str, detail: str, flags: int = 0) -> PatternRule:
    return PatternRule(name, outcome, re.compile(pattern, flags | re.MULTILINE), detail)


F, R, N, S = Outcome.FAILURE, Outcome.RISKY, Outcome.NO_OP, Outcome.SUCCESS
_I = re.IGNORECASE

_SHELL = (
    _r(
        "shell.command_not_found",
        F,
        r"command not found|: not found$",
        "the command does not exist",
    ),
    _r("shell.no_such_file", F, r"No such file or directory", "a path does not exist"),
    _r(
        "shell.permission_denied",
        F,
        r"Permission denied|Operation not permitted",
        "the action is not allowed",
    ),
    _r(
        "shell.nonzero_exit",
        F,
        r"(?:exit(?:ed)? (?:code|status)|returned non-zero exit status|\[exit)[:= ]*[1-9]\d*\b"
        r"|\*\*\* \[[^\]\n]+\] Error [1-9]\d*",
        "the command exits with a non-zero status",
        _I,
    ),
    _r("python.traceback", F, r"^Traceback \(most recent call last\):", "Python raised"),
    _r(
        "python.syntax_error",
        F,
        r"^\s*(?:SyntaxError|IndentationError|TabError): .*",
        "Python code does not parse",
    ),
    _r(
        "shell.syntax_error",
        F,
        r"syntax error near unexpected token|unexpected EOF while looking",
        "the shell line does not parse",
    ),
    _r("git.fatal", F, r"^fatal: .*", "git refused"),
    _r("tool.error_line", F, r"^error: .*", "the tool reported an error"),
    _r("shell.is_a_directory", F, r"Is a directory|Not a directory", "wrong kind of path"),
    _r("process.no_such_process", F, r"No such process", "the process does not exist"),
)
_SWE = (
    _r(
        "swe.tests_failed",
        F,
        r"^=*\s*(?:\d+ \w+, )*\d+ (?:failed|errors?)\b.*\bin [\d.]+s\b.*$",
        "tests fail",
    ),
    _r("swe.test_failed", F, r"^FAILED \S+.*", "a test fails"),
    _r("swe.unittest_failed", F, r"^FAILED \((?:failures|errors)=\d+.*\)", "unittest fails"),
    _r("swe.assertion", F, r"^E\s+AssertionError.*|^AssertionError.*", "an assertion fails"),
    _r(
        "swe.collection_error",
        F,
        r"^ERROR collecting .*|^E\s+ModuleNotFoundError.*",
        "tests cannot be collected",
    ),
    _r(
        "swe.patch_rejected",
        F,
        r"patch does not apply|Hunk #\d+ FAILED|malformed patch",
        "the patch does not apply",
    ),
    _r(
        "swe.tests_passed",
        S,
        r"^=*\s*\d+ passed(?:, \d+ (?:skipped|warnings?|deselected|xfailed|xpassed))*"
        r" in [\d.]+s\b.*$",
        "tests pass",
    ),
)
_HTTP_REASONS = (
    "Bad Request|Unauthorized|Forbidden|Not Found|Method Not Allowed|Conflict|Gone|"
    "Unprocessable (?:Entity|Content)|Too Many Requests|Internal Server Error|Bad Gateway|"
    "Service Unavailable|Gateway Timeout"
)
_MCP = (
    _r(
        "http.error_status",
        F,
        rf"\b[45]\d\d (?:{_HTTP_REASONS})\b|\bHTTP/\d(?:\.\d)? [45]\d\d\b"
        r"|\bstatus(?:[ _]?code)?\"?[:= ]+[45]\d\d\b",
        "an HTTP error status",
        _I,
    ),
    *(_r(name, F, pattern, detail, _I) for name, pattern, detail in MCP_TEXT_RULES),
)
_SEARCH = (
    _r(
        "search.no_results",
        N,
        r"\bno (?:results|matches|documents|items) (?:were )?found\b|\b0 results\b"
        r"|did not match any (?:documents|results)|^\s*\"?results\"?\s*:\s*\[\s*\]",
        "nothing found",
        _I,
    ),
)
_GUI = (
    _r(
        "gui.element_not_found",
        F,
        r"\b(?:element|node|widget|button|id)\b[^\n]{0,60}\bnot found\b"
        r"|\b(?:could not|cannot|unable to) (?:find|locate) (?:the )?(?:element|node|widget)\b"
        r"|\bno (?:such )?element\b",
        "the target element does not exist",
        _I,
    ),
)
_RISK = (
    _r(
        "risk.deleted",
        R,
        r"^removed (?:directory )?'.+'$|^rm '.+'$|\bDeleted branch \S+"
        r"|\b(?:deleted|removed|dropped) \d+ (?:files?|rows?|records?|items?|objects?)\b"
        r"|^DELETE [1-9]\d*$",
        "data is deleted",
        _I,
    ),
    _r(
        "risk.overwritten",
        R,
        r"\boverwrit(?:e|ten|ing)\b|^HEAD is now at \S+"
        r"|\bdiscard(?:ed|ing) (?:local )?changes\b",
        "data is overwritten",
        _I,
    ),
    _r(
        "risk.killed",
        R,
        r"^\[\d+\][+-]?\s+(?:Terminated|Killed)\b.*|\bkilled process\b"
        r"|\b\d+ (?:Terminated|Killed)\s+\S+"
        r"|^Killed$",
        "a process is killed",
        _I,
    ),
    _r(
        "risk.force_push",
        R,
        r"\(forced update\)|\bforce[- ]pushed\b",
        "history is overwritten on a remote",
        _I,
    ),
    _r(
        "risk.dropped_table",
        R,
        r"^DROP (?:TABLE|DATABASE|SCHEMA)\b|\b(?:table|database) \S+ "
        r"(?:was )?dropped\b",
        "a table or database is dropped",
        _I,
    ),
)

FAMILIES: dict[str, tuple[PatternRule, ...]] = {
    "shell": _SHELL,
    "swe": _SWE,
    "mcp": _MCP,
    "search": _SEARCH,
    "gui": _GUI,
    "risk": _RISK,
}
DOMAIN_FAMILIES: dict[Domain, tuple[str, ...]] = {
    Domain.TERMINAL: ("shell", "swe", "risk"),
    Domain.SWE: ("shell", "swe", "risk"),
    Domain.OS: ("shell", "gui", "risk"),
    Domain.MCP: ("mcp", "risk"),
    Domain.SEARCH: ("search", "mcp"),
    Domain.ANDROID: ("gui", "risk"),
    Domain.WEB: ("gui", "mcp", "risk"),
}
