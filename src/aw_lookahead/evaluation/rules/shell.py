"""Terminal (and SWE shell) rules: prompt and command echo, per-command tiers.

An observation is split into segments at its command-echo lines (``$ cmd``
as the sandbox writes them, or ``user@host:path# cmd`` as a tmux screen
shows them). Each segment's output is tiered by its command: commands that
read the pre-existing environment (``uname``, ``ps``, ``df``, ``cat /etc/...``,
``--version``) give *environment* lines; every other line is *runtime* when
masking changes it, else *deterministic*.
"""

from __future__ import annotations

import re
import shlex
from collections import Counter

from aw_lookahead.trajectory import Action

from .masking import mask, normalize_ws
from .tiers import TierResult, plausibility

__all__ = [
    "ECHO_RE",
    "action_commands",
    "check_shell",
    "is_environment_command",
    "mask_shell",
    "segments",
]

ECHO_RE = re.compile(r"^(?:(?:\([\w.-]+\) )?[\w.-]+@[\w.-]+:[^\n]*?[$#]|\$) (?P<cmd>.*)$")
_CONTROL = re.compile(r"^(?:C|M)-.$|^(?:Enter|Escape|Tab|BSpace|Up|Down|Left|Right)$")

_ENV_WORDS = (
    "uname hostname whoami id groups ps top htop df du free uptime env printenv lsb_release "
    "nproc ip ifconfig mount lscpu lsblk w who last dmesg journalctl systemctl apt apt-get "
    "apt-cache dpkg rpm pip pip3 conda which type command locale getconf sysctl netstat ss "
    "lsof docker ulimit arch tty"
)
ENV_COMMANDS = frozenset(_ENV_WORDS.split())
_SAFE_ABS = ("/tmp", "/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/urandom")


def action_commands(action: Action) -> list[str]:
    """The command lines an action types (keystroke lists, plain text, or ``{"command": ...}``)."""
    text = ""
    if isinstance(action, str):
        text = action
    elif isinstance(action, dict):
        text = str(action.get("keystrokes") or action.get("command") or action.get("cmd") or "")
    elif isinstance(action, list):
        for item in action:
            keys = item.get("keystrokes", "") if isinstance(item, dict) else str(item)
            if not _CONTROL.match(str(keys).strip()):
                text += str(keys)
    return [c.strip() for c in text.split("\n") if c.strip()]


def is_environment_command(command: str) -> bool:
    """Whether ``command`` reads state that existed before the trajectory."""
    for part in re.split(r"\|\|?|&&|;", command):
        try:
            words = shlex.split(part)
        except ValueError:
            words = part.split()
        words = [w for w in words if "=" not in w or w.startswith("-")]
        if not words:
            continue
        if words[0].rsplit("/", 1)[-1] in ENV_COMMANDS:
            return True
        if any(w in ("--version", "-V", "version") for w in words[1:]):
            return True
        for w in words[1:]:
            if w.startswith("/") and not w.startswith(_SAFE_ABS):
                return True
    return False


def segments(text: str) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """Split ``text`` into lines before the first echo and ``(command, output lines)`` pairs."""
    prelude: list[str] = []
    out: list[tuple[str, list[str]]] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        m = ECHO_RE.match(line.rstrip())
        if m:
            out.append((normalize_ws(m.group("cmd")), []))
        elif out:
            out[-1][1].append(line)
        else:
            prelude.append(line)
    return prelude, out


def mask_shell(text: str) -> str:
    """:func:`~.masking.mask` each command's output with that command's extra masks."""
    prelude, segs = segments(text)
    parts = [mask("\n".join(prelude))] if prelude else []
    for cmd, lines in segs:
        parts.append(f"$ {cmd}")
        parts.append(mask("\n".join(lines), command=cmd))
    return "\n".join(parts)


def _pairs(lines: list[str], command: str | None) -> list[tuple[str, str]]:
    """``(normalised line, masked normalised line)`` for each non-blank line."""
    out = []
    for line in lines:
        raw = normalize_ws(line)
        if raw:
            out.append((raw, normalize_ws(mask(raw, command=command))))
    return out


def _norm_lines(lines: list[str], command: str | None) -> list[str]:
    return [m for _, m in _pairs(lines, command)]


def check_shell(
    prediction: str, truth: str, action: Action, context: str = ""
) -> tuple[list[str], dict[str, TierResult]]:
    """Format issues and tier results for a shell observation."""
    fmt: list[str] = []
    t_pre, t_segs = segments(truth)
    p_pre, p_segs = segments(prediction)
    p_by_cmd: dict[str, list[str]] = {}
    for cmd, lines in p_segs:
        p_by_cmd.setdefault(cmd, []).extend(lines)
    if t_segs and not p_segs:
        fmt.append("no shell prompt / command echo line")
    for cmd, _ in t_segs:
        if p_segs and cmd not in p_by_cmd:
            fmt.append(f"command echo {cmd[:60]!r} missing")
    typed = [normalize_ws(c) for c in action_commands(action)]
    if typed and t_segs and not any(c in p_by_cmd for c in typed):
        fmt.append("the echoed command is not the one the action typed")

    det, run, env = TierResult(), TierResult(), TierResult()
    ctx = normalize_ws(mask(context))
    all_pred = Counter(_norm_lines(prediction.split("\n"), None))
    pre_pred = Counter(_norm_lines(p_pre, None))
    for line in _norm_lines(t_pre, None):
        tier = det if line in ctx else env
        tier.total += 1
        if pre_pred[line] > 0 or all_pred[line] > 0 or tier is env:
            tier.matched += 1
        else:
            tier.issues.append(f"screen line {line[:60]!r} missing")
    for cmd, lines in t_segs:
        pred_lines = p_by_cmd.get(cmd, prediction.split("\n") if not p_segs else [])
        if is_environment_command(cmd):
            env.total += 1
            issues = plausibility("\n".join(pred_lines), "\n".join(lines))
            env.matched += 0 if issues else 1
            env.issues.extend(f"{cmd[:40]!r}: {i}" for i in issues)
            continue
        pred = Counter(_norm_lines(pred_lines, cmd))
        for raw_line, line in _pairs(lines, cmd):
            tier = run if line != raw_line else det
            tier.total += 1
            if pred[line] > 0:
                pred[line] -= 1
                tier.matched += 1
            else:
                tier.issues.append(f"{cmd[:40]!r}: line {line[:60]!r} missing")
    return fmt, {"deterministic": det, "runtime": run, "environment": env}
