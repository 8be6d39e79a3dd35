"""The wire protocol between :class:`~aw_lookahead.sandbox.terminal.TerminalSandbox` and bash.

How the shell is launched (argv, minimal environment, the bootstrap line),
how a command is wrapped (``eval`` of a quoted string, followed by a sentinel
line carrying ``$?`` and ``$PWD``), and how the shell's stdout is read back
into one command's capped output (:class:`Running`, :func:`collect`). Kept
apart from the session lifecycle (start, stop, restart, keystrokes) in
:mod:`.terminal`, which owns the process and calls these.
"""

from __future__ import annotations

import asyncio
import functools
import getpass
import re
import shlex
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ._procs import MARKER_VAR, isolation_argv

__all__ = [
    "BOOTSTRAP",
    "DEFAULT_PATH",
    "Running",
    "clean_output",
    "collect",
    "command_script",
    "shell_argv",
    "shell_environment",
]

# Interactive bash without a tty complains when a job dies of a signal; a real
# terminal never shows this line, and its pids would make outputs differ.
_TTY_NOISE = re.compile(rb"bash: \[\d+: \d+ \(\d+\)\] tcsetattr: [^\n]*\n")
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

BOOTSTRAP = b'set +o history; unset HISTFILE; __aw_rc=0; __aw_set_rc() { return "$1"; }\n'
"""The first line the shell reads: history off, and the ``$?`` carried between commands."""


@dataclass
class Running:
    """A command handed to the shell, and what its collector has read so far."""

    command: str
    token: bytes
    started: float
    cap: int
    out: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    exit_code: int | None = None
    eof: bool = False
    task: asyncio.Task[None] | None = None

    def append(self, data: bytes) -> None:
        room = self.cap - len(self.out)
        if len(data) > room:
            self.truncated = True
        self.out += data[: max(room, 0)]


@functools.cache
def _default_signals_argv() -> tuple[str, ...]:
    """``env --default-signal=INT,QUIT`` where coreutils has it (8.31+), else nothing.

    A process started with SIGINT ignored (a background job of a script, ``nohup``
    in some shells) passes that to its children, and bash cannot undo it, so
    ``C-c`` would not interrupt anything in the sandbox.
    """
    argv = ("env", "--default-signal=INT,QUIT")
    try:
        done = subprocess.run([*argv, "true"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ()
    return argv if done.returncode == 0 else ()


def shell_argv(*, isolated: bool) -> list[str]:
    """Interactive bash without line editing, profile or rc files; ``isolated`` adds unshare.

    SIGINT and SIGQUIT start at their defaults whatever this process inherited.
    """
    argv = [*_default_signals_argv(), "bash", "--noprofile", "--norc", "--noediting", "-i"]
    return [*isolation_argv(), *argv] if isolated else argv


def shell_environment(root: Path, extra: Mapping[str, str], marker: str) -> dict[str, str]:
    """The minimal environment of a session rooted at ``root``, plus ``extra`` and the marker.

    The marker (``AW_SANDBOX_SESSION``) is set last, so ``extra`` cannot drop
    it: every process of the session inherits it and cleanup finds them by it.
    """
    env = {
        "PATH": DEFAULT_PATH,
        "HOME": str(root),
        "PWD": str(root),
        "USER": getpass.getuser(),
        "SHELL": "/bin/bash",
        "TERM": "dumb",
        "PAGER": "cat",
        "GIT_PAGER": "cat",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PS1": "",
        "PS2": "",
    }
    env.update(extra)
    env[MARKER_VAR] = marker
    return env


def command_script(command: str, token: str) -> str:
    """The shell input that runs ``command`` as data and then prints the sentinel line."""
    return (
        f'__aw_set_rc "$__aw_rc"; {{ eval {shlex.quote(command)}\n}} </dev/null 2>&1; '
        f'__aw_rc=$?; builtin printf \'\\n%s %d %s\\n\' {token} "$__aw_rc" "$PWD"\n'
    )


async def collect(
    stdout: asyncio.StreamReader, running: Running, carry: bytes
) -> tuple[bytes, Path | None]:
    """Read ``running``'s output up to its sentinel; return the bytes after it and the cwd.

    ``carry`` is what the previous collector read past its own sentinel. At
    end of file the output so far is kept, ``running.eof`` is set, and
    ``(b"", None)`` is returned.
    """
    marker = b"\n" + running.token + b" "
    buf = bytearray(carry)
    while True:
        at = buf.find(marker)
        if at >= 0:
            end = buf.find(b"\n", at + len(marker))
            if end >= 0:
                running.append(bytes(buf[:at]))
                fields = bytes(buf[at + len(marker) : end]).decode(errors="replace")
                code, _, cwd = fields.partition(" ")
                running.exit_code = int(code)
                return bytes(buf[end + 1 :]), Path(cwd)
        else:
            keep = len(marker) - 1
            if len(buf) > keep:
                running.append(bytes(buf[:-keep]))
                del buf[:-keep]
        chunk = await stdout.read(65536)
        if not chunk:
            running.append(bytes(buf))
            running.eof = True
            return b"", None
        buf += chunk


def clean_output(raw: bytes | bytearray) -> str:
    """A command's captured bytes as text, without bash's tty-less job-control noise."""
    return _TTY_NOISE.sub(b"", raw).decode("utf-8", errors="replace")
