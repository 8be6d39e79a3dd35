"""Masking of runtime metadata: values that differ from run to run of the same actions.

Timestamps, process ids, UUIDs, hashes, durations, sizes, temporary paths and
container ids are replaced by typed placeholders (``<TIMESTAMP>``, ``<PID>``,
...). Two texts that differ only in such values mask to the same string; a
value of the wrong *format* is not masked and therefore still differs. That is
how the rule verifier checks runtime metadata "for format only".

Guarantees:

* :func:`mask` is deterministic and idempotent (masking a masked text changes
  nothing), so ground truth and prediction can be masked independently.
* Masks never touch a placeholder, and whitespace is normalised by
  :func:`normalize_ws` separately (runs of blanks to one space, trailing blanks
  and blank lines at the ends dropped).
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["PLACEHOLDER_RE", "command_masks", "mask", "normalize_ws"]

_MON = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_DAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_B = r"[ \t]+"

PLACEHOLDER_RE = re.compile(r"<[A-Z]+>")

# Order matters: longer, more specific patterns first.
_MASKS: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(
            r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
        ),
        "<UUID>",
    ),
    # ISO 8601 timestamps and dates
    (
        re.compile(
            r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?"
            r"(?:Z|[+-]\d{2}:?\d{2}|\s?[A-Z]{3,4}\b)?"
        ),
        "<TIMESTAMP>",
    ),
    # `date` / ctime style: Sun Nov 29 07:11:40 UTC 2026
    (
        re.compile(
            rf"\b{_DAY},? +(?:\d{{1,2}} +{_MON}|{_MON} +\d{{1,2}}),? +\d{{1,2}}:\d{{2}}:\d{{2}}"
            r"(?: +[AP]M)?(?: +[A-Z]{2,5}| +[+-]\d{4})?(?: +\d{4})?"
        ),
        "<TIMESTAMP>",
    ),
    # ls -l line: keep type/mode and name, mask links, owner, group, size, mtime
    (
        re.compile(
            rf"^([-dlcbps][-rwxsStT]{{9}}[.+@]?){_B}\d+{_B}\S+{_B}\S+{_B}\d+(?:,{_B}?\d+)?"
            rf"{_B}{_MON}{_B}\d{{1,2}}{_B}(?:\d{{1,2}}:\d{{2}}|\d{{4}}){_B}",
            re.MULTILINE,
        ),
        r"\1 <LINKS> <OWNER> <GROUP> <SIZE> <MTIME> ",
    ),
    (re.compile(r"^total \d+(?:[.,]\d+)?[KMGT]?$", re.MULTILINE), "total <SIZE>"),
    (re.compile(rf"\b{_MON} +\d{{1,2}} +\d{{1,2}}:\d{{2}}\b"), "<MTIME>"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}\b"), "<DATE>"),
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<TIME>"),
    (re.compile(r"\b[0-9a-fA-F]{32,128}\b"), "<HASH>"),
    # short hex ids (git, docker): 7-16 hex chars with at least one digit and one letter
    (re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,16}\b"), "<HEXID>"),
    (re.compile(r"\b0x[0-9a-fA-F]{6,16}\b"), "<ADDR>"),
    (re.compile(r"\b\d+m\d+(?:\.\d+)?s\b"), "<DURATION>"),
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|µs|us|ns|sec|secs|seconds|s)\b"), "<DURATION>"),
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:[KMGTP]i?B|[KMGTP]|bytes|B)\b"), "<SIZE>"),
    (re.compile(r"(?:/private)?/(?:tmp|var/folders)/[\w.+-]+(?:/[\w.+-]+)*"), "<TMPPATH>"),
    (re.compile(r"\b(?:pid|PID|process)[ =:]+\d+\b"), "pid <PID>"),
    (re.compile(r"^\[\d+\]\+? +\d+$", re.MULTILINE), "[<JOB>] <PID>"),
)

_INT = re.compile(r"(?<![\w.<])\d+(?![\w.>])")


def _mask_ints(tag: str) -> Callable[[str], str]:
    def apply(text: str) -> str:
        return _INT.sub(tag, text)

    return apply


# Commands whose bare-number output is a process id, a random value, ...
_COMMAND_RULES: tuple[tuple[re.Pattern[str], Callable[[str], str]], ...] = (
    (re.compile(r"\$\$|\$!|\$BASHPID|\$PPID|\bpgrep\b|\bpidof\b|\bjobs -p\b"), _mask_ints("<PID>")),
    (re.compile(r"\$RANDOM|\bshuf\b|\bod\b.*urandom|\burandom\b"), _mask_ints("<RANDOM>")),
    (re.compile(r"\bdate\b.*\+%s|\bdate\b.*%[sN]"), _mask_ints("<EPOCH>")),
    (re.compile(r"\bmktemp\b"), lambda s: re.sub(r"\S*tmp\S*", "<TMPPATH>", s)),
)


def command_masks(command: str) -> list[Callable[[str], str]]:
    """Extra masks for the output of ``command`` (e.g. ``echo $$`` prints a bare PID)."""
    return [fn for pattern, fn in _COMMAND_RULES if pattern.search(command)]


def mask(text: str, *, command: str | None = None) -> str:
    """Replace runtime metadata in ``text`` with typed placeholders."""
    out = text
    for pattern, repl in _MASKS:
        out = pattern.sub(repl, out)
    if command:
        for fn in command_masks(command):
            out = fn(out)
    return out


_BLANKS = re.compile(r"[ \t\r\f\v]+")


def normalize_ws(text: str) -> str:
    """Whitespace normalisation: blank runs to one space, lines stripped, outer blank lines cut."""
    lines = [_BLANKS.sub(" ", line).strip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)
