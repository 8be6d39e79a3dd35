"""A real, persistent bash session: the ground truth for terminal predictions.

:class:`TerminalSandbox` keeps one ``bash --noprofile --norc`` process alive in
a private directory (its own ``HOME`` and working directory, a minimal
environment, ``LC_ALL=C.UTF-8``), so ``cd``, variables and files persist from
one command to the next as in a real terminal. Each command is handed to the
shell as data (``eval`` of a quoted string), so a syntax error in it is an
ordinary failed command, never a broken session. A random sentinel printed
after the command, with ``$?`` and ``$PWD``, marks its end. The shell runs
interactive without line editing (``-i --noediting``, empty ``PS1``/``PS2``,
history off), so messages read as in a terminal (``bash: foo: command not
found``, not ``bash: line 7: ...``) and background jobs print ``[1] <pid>``.
That wire protocol lives in :mod:`._shell`, the cycle of one command (begin, wait,
stop, settle) in :mod:`._bash_process`; this module owns the session.

Guarantees:

* Commands read stdin from ``/dev/null``; stderr is merged into stdout in the
  order the shell wrote them.
* A timeout or ``C-c`` signals only the command's processes (the shell's
  descendants and process group), so the session survives. When the shell
  itself is stuck (a builtin loop), it is restarted in the last known working
  directory at the timeout, told apart from a shell that is only slow to
  report by its CPU use (within half a second); exported variables are then
  lost.
* :meth:`TerminalSandbox.close` kills every process the session started:
  where a cgroup v2 hierarchy is writable (root on most hosts) the session
  has a cgroup leaf of its own, killed whole (``cleanup == "cgroup"``)
  whatever its processes did (``env -u``/``env -i``, ``setsid``, a double
  fork); besides, and alone elsewhere (``cleanup == "marker"``, warned once),
  the process group, the descendants and every process carrying the marker
  ``AW_SANDBOX_SESSION``. It returns within about two seconds even when an
  escaped child holds the shell's output pipe, and removes the leaf and the
  directory it created; so do garbage collection and interpreter exit.
* With ``network=False`` the shell runs under ``unshare --net --map-root-user``
  when this machine allows it (probed once per process);
  ``network_isolated`` tells whether it did.

**Not a security boundary.** Commands run as the calling user (root in most
containers) and can read and write anything that user can, outside the
directory too (a root process can even move itself out of the cgroup); without
network isolation they reach the network. The sandbox contains honest commands
(a private working directory and ``HOME``, a minimal environment, optional
network isolation, all processes killed on close); run untrusted commands
inside a container or VM.

Errors: misuse (an unknown control key, a path outside the sandbox, a
non-positive timeout) raises :class:`~aw_lookahead.errors.UsageError`; a
session that has ended (``exit``, ``C-d``) raises
:class:`~aw_lookahead.errors.DownstreamError` on the next command.
"""

from __future__ import annotations

import asyncio
import secrets
import tempfile
import time
import weakref
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Literal

from aw_lookahead.errors import DownstreamError, UsageError

from ._bash_process import BashProcess
from ._blocking import BlockingTwins
from ._cgroup import new_leaf, remove_leaf
from ._keys import KEY_ENTER, KEY_EOF, KEY_INTERRUPT, KEY_KILL_LINE, KEY_NOOP, parse_keystrokes
from ._procs import kill_session as _cleanup
from ._procs import kill_shell, network_isolation_available
from ._result import CommandResult, combine, observation
from ._shell import DEFAULT_PATH, Running

__all__ = ["DEFAULT_MAX_OUTPUT_BYTES", "CommandResult", "TerminalSandbox", "observation"]

DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024


class TerminalSandbox(BashProcess, BlockingTwins):
    """A persistent bash session in a private directory; use as an async context manager.

    ``root`` runs the session in an existing directory (left in place on
    close); otherwise a fresh temporary directory is created and removed.
    ``env`` adds to (or overrides) the minimal environment.

    Blocking code uses it as a plain context manager with the ``_sync``
    methods (``run_sync``, ``send_keys_sync``; see :class:`BlockingTwins`);
    one sandbox is used one way or the other, never both.
    """

    def __init__(
        self,
        *,
        network: bool = False,
        root: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    ) -> None:
        if max_output_bytes < 1:
            raise UsageError(f"max_output_bytes must be positive, got {max_output_bytes}")
        self.network = network
        self.network_isolated = False
        self.cleanup: Literal["cgroup", "marker"] | None = None  # known once started
        self.max_output_bytes = max_output_bytes
        self._root_arg = Path(root) if root is not None else None
        self._extra_env = dict(env or {})
        self._root: Path | None = None
        self._cwd: Path | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self._leaf: Path | None = None
        self._carry = b""
        self._serial = 0
        self._token = secrets.token_hex(8)
        self._lock = asyncio.Lock()
        self._ended = False
        self._closed = False
        self._typed = ""
        self._state: dict[str, object] = {"marker": self._token}
        self._finalizer = weakref.finalize(self, _cleanup, self._state)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> TerminalSandbox:
        """Start the shell (done implicitly by the first command); returns ``self``."""
        self._refuse_blocking_owner()
        if self._closed:
            raise UsageError("this TerminalSandbox is closed; create a new one")
        if self._proc is not None:
            return self
        self._root = self._make_root()
        self._cwd = self._root
        self.network_isolated = not self.network and await network_isolation_available()
        self._state["cgroup"] = self._leaf = new_leaf(self._token)
        await self._spawn(self._root)
        return self

    def _make_root(self) -> Path:
        if self._root_arg is None:
            root = Path(tempfile.mkdtemp(prefix="aw-sandbox-")).resolve()
            self._state["owned_dir"] = str(root)
            return root
        root = self._root_arg.resolve()
        root.mkdir(parents=True, exist_ok=True)
        return root

    async def __aenter__(self) -> TerminalSandbox:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Kill every process of the session and remove the directory this sandbox created."""
        if self._closed:
            return
        self._closed = True
        if self._proc is not None:
            await kill_shell(self._proc, self._token, self._leaf)
        if self._leaf is not None:
            await asyncio.to_thread(remove_leaf, self._leaf)
        self._finalizer()

    @property
    def path(self) -> Path:
        """The sandbox's root directory (its ``HOME`` and first working directory)."""
        if self._root is None:
            raise UsageError("the sandbox is not started; use `async with TerminalSandbox()`")
        return self._root

    @property
    def cwd(self) -> Path:
        """The shell's working directory after the last command."""
        return self._cwd or self.path

    @property
    def search_path(self) -> str:
        """The PATH the session's shell looks programs up on (as started)."""
        return self._extra_env.get("PATH", DEFAULT_PATH)

    @property
    def pid(self) -> int | None:
        """The shell's pid, which is also its process group id (``None`` before start)."""
        return self._proc.pid if self._proc is not None else None

    @property
    def alive(self) -> bool:
        """Whether the session still accepts commands."""
        return self._proc is not None and not self._ended and not self._closed

    def write_file(self, rel: str | Path, text: str) -> Path:
        """Write ``text`` to ``rel`` under :attr:`path` (parents created); returns the path."""
        target = (self.path / rel).resolve()
        if not target.is_relative_to(self.path):
            raise UsageError(f"{rel!s} is outside the sandbox; give a path relative to it")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        return target

    # ------------------------------------------------------------------ commands

    async def run(self, command: str, *, timeout: float = 10.0) -> CommandResult:  # noqa: ASYNC109
        """Run ``command`` in the session; kill it after ``timeout`` seconds (``timed_out``)."""
        _check_timeout(timeout)
        async with self._lock:
            await self._ready()
            return await self._settle(await self._begin(command), timeout)

    async def send_keys(self, action: object, *, timeout: float = 10.0) -> CommandResult:  # noqa: ASYNC109
        """Type a keystroke action: a list of ``{"keystrokes", "duration"}`` or command text.

        Text accumulates on the current line; each ``"\\n"`` (or ``Enter``)
        runs the line as a command, and the action waits up to the item's
        ``duration`` for it before the next item (like tmux). ``C-c``
        interrupts the running command (or discards the typed line), ``C-d``
        on an empty line ends the session, ``C-u`` clears the typed line,
        ``C-l`` does nothing. A call never leaves a command running: whatever
        still runs after the last item gets ``timeout`` seconds, then is killed.
        The returned result covers every command the action ran (see
        :func:`observation`).
        """
        _check_timeout(timeout)
        keys = parse_keystrokes(action)
        started = time.monotonic()
        steps: list[CommandResult] = []
        async with self._lock:
            await self._ready()
            running: Running | None = None
            for kind, value, duration in keys:
                if kind == KEY_INTERRUPT:
                    if running is not None:
                        steps.append(await self._interrupt(running))
                        running = None
                    else:
                        steps.append(
                            CommandResult(command=self._typed + "^C", output="", exit_code=130)
                        )
                        self._typed = ""
                elif kind == KEY_EOF and running is None and not self._typed:
                    steps.append(await self._end_session(timeout))
                    break
                elif kind == KEY_KILL_LINE:
                    self._typed = ""
                elif kind in (KEY_ENTER, "text"):
                    text = "\n" if kind == KEY_ENTER else value
                    *lines, self._typed = (self._typed + text).split("\n")
                    for line in lines:
                        if running is not None:
                            steps.append(await self._settle(running, timeout))
                        running = await self._begin(line)
                # KEY_NOOP and a C-d that reaches a running command change nothing.
                if running is not None and kind != KEY_NOOP and duration > 0:
                    await self._wait(running, duration)
            if running is not None:
                steps.append(await self._settle(running, timeout))
        return combine(steps, self._typed, time.monotonic() - started)

    # ------------------------------------------------------------------ internals

    async def _ready(self) -> None:
        self._refuse_blocking_owner()
        if self._proc is None:
            await self.start()
        if self._closed:
            raise UsageError("this TerminalSandbox is closed; create a new one")
        if self._ended:
            raise DownstreamError(
                "the shell session has ended (exit or C-d); start a new TerminalSandbox"
            )


def _check_timeout(timeout: float) -> None:
    if not timeout > 0:
        raise UsageError(f"timeout must be a positive number of seconds, got {timeout!r}")
