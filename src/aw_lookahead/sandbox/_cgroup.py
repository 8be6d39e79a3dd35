"""One cgroup v2 leaf per sandbox session: cleanup that no process of the session can leave.

The session's shell is moved into a fresh child of this process's own cgroup
as it starts, before its first command (it forks nothing until then), so
every process it ever starts is in that leaf whatever it does to its
environment, session or parentage (``env -u``/``env -i``, ``setsid``, a double fork). Closing the
session writes ``1`` to the leaf's ``cgroup.kill`` (Linux 5.14+), which
SIGKILLs all of them at once, and then removes the leaf. Nothing changes for
the commands: pids, ``$$``, ``ps`` and signals are those of the host.

Where that is not possible (cgroup v1 only, a read-only ``/sys/fs/cgroup`` in
a container, no permission, a kernel without ``cgroup.kill``) :func:`new_leaf`
returns None, logs one warning per process, and the sandbox falls back to its
process tree, group and marker variable (:mod:`._procs`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from pathlib import Path

__all__ = ["enter_leaf", "kill_leaf", "new_leaf", "remove_leaf"]

_log = logging.getLogger("aw_lookahead")
_REMOVE_S = 2.0
_POLL_S = 0.005
_state: dict[str, object] = {}
"""The parent directory once found (``"parent"``), or why there is none (``"unavailable"``)."""


def _own_cgroup_dir() -> Path:
    """This process's cgroup v2 directory; OSError saying why there is none."""
    relative = None
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        hierarchy, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if hierarchy == "0" and controllers == "":
            relative = path
    if relative is None:
        raise OSError("no cgroup v2 hierarchy in /proc/self/cgroup (cgroup v1 only)")
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields, _, tail = line.partition(" - ")
        parts = fields.split()
        if tail.split()[:1] != ["cgroup2"] or len(parts) < 5:
            continue
        root, mount = parts[3], parts[4]
        if relative == root or relative.startswith(root.rstrip("/") + "/"):
            return Path(mount) / relative[len(root) :].lstrip("/")
    raise OSError("the cgroup v2 hierarchy is not mounted here")


def _parent() -> Path | None:
    """Where leaves are made (this process's cgroup), found once; None when unavailable."""
    if "parent" not in _state and "unavailable" not in _state:
        try:
            found = _own_cgroup_dir()
            if not os.access(found, os.W_OK):
                raise OSError(f"{found} is not writable by this user")
            _state["parent"] = found
        except OSError as exc:
            _unavailable(str(exc))
    parent = _state.get("parent")
    return parent if isinstance(parent, Path) else None


def _unavailable(why: str) -> None:
    """Remember that leaves cannot be used here, and say so once per process."""
    _state.pop("parent", None)
    if "unavailable" in _state:
        return
    _state["unavailable"] = why
    _log.warning(
        "TerminalSandbox: no cgroup to contain sessions (%s); close() falls back to the "
        "process tree, group and AW_SANDBOX_SESSION marker, which a process that clears its "
        "environment and leaves the session survives. Run where a cgroup v2 hierarchy is "
        "writable (root on a cgroup v2 host, or a delegated cgroup) for full cleanup.",
        why,
    )


def new_leaf(token: str) -> Path | None:
    """A fresh, empty leaf for the session ``token``; None (warned once) when unavailable."""
    parent = _parent()
    if parent is None:
        return None
    leaf = parent / f"aw-sandbox-{token}"
    try:
        leaf.mkdir()
    except OSError as exc:
        _unavailable(f"cannot create {leaf}: {exc.strerror or exc}")
        return None
    if not (leaf / "cgroup.kill").exists():
        with contextlib.suppress(OSError):
            leaf.rmdir()
        _unavailable("the kernel has no cgroup.kill (Linux 5.14 or later has it)")
        return None
    return leaf


def enter_leaf(leaf: Path, pid: int) -> bool:
    """Move process ``pid`` into ``leaf``; False (warned once, leaf removed) when refused."""
    try:
        (leaf / "cgroup.procs").write_text(f"{pid}\n")
    except OSError as exc:
        _unavailable(f"cannot move a process into {leaf}: {exc.strerror or exc}")
        with contextlib.suppress(OSError):
            leaf.rmdir()
        return False
    return True


def kill_leaf(leaf: Path) -> None:
    """SIGKILL every process in ``leaf`` at once (those forking meanwhile too)."""
    with contextlib.suppress(OSError):
        (leaf / "cgroup.kill").write_text("1\n")


def remove_leaf(leaf: Path) -> bool:
    """Kill what is left in ``leaf`` and remove it, waiting up to two seconds for it to empty.

    Blocking (killed processes take a moment to exit): async callers run it in a thread.
    """
    kill_leaf(leaf)
    deadline = time.monotonic() + _REMOVE_S
    while True:
        try:
            leaf.rmdir()
        except FileNotFoundError:
            return True
        except OSError:
            if time.monotonic() > deadline:
                _log.warning("TerminalSandbox: could not remove %s; it is left behind", leaf)
                return False
            time.sleep(_POLL_S)
        else:
            return True
