"""Read-only looks at a folder tree under a root: stat, list, PATH, git refs, make targets.

Nothing outside ``root`` is read but the directories on PATH (a lookup, as
``which`` does) and a GNU program's own file (the long options it knows, read
from its bytes); a symlink that leads out of the root makes its path unknown,
never followed. Nothing here writes, and nothing runs a program.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from .similar import similar_names

__all__ = ["Tree", "gnu_long_options", "unknown_long_option"]

_MAX_HOPS = 40
_MAX_LIST = 2000
_MAX_MAKEFILE = 256 * 1024
_PATH_TTL_S = 30.0
_executables: dict[str, tuple[float, frozenset[str]]] = {}
_MAX_PROGRAM = 8 * 1024 * 1024
_GNU = re.compile(rb"GNU (?:coreutils|tar|grep|sed|diffutils|gzip|findutils)\b")
_DASHED = re.compile(rb"--([a-z][a-z0-9-]{1,40})")
_RUN = re.compile(rb"[a-z][a-z0-9-]{1,60}")
_programs: dict[tuple[str, int, int], tuple[frozenset[str], frozenset[str]] | None] = {}


class Tree:
    """A folder tree seen from ``root``; paths are resolved without leaving it."""

    def __init__(self, root: Path, home: Path | None = None) -> None:
        self.root = Path(os.path.normpath(os.path.abspath(root)))
        self.home = home

    def inside(self, path: Path) -> bool:
        return path == self.root or self.root in path.parents

    def absolute(self, base: Path, word: str) -> Path | None:
        """The lexical absolute path of ``word`` from ``base``; ``None`` outside the root."""
        if word == "~" or word.startswith("~/"):
            if self.home is None:
                return None
            word = str(self.home) + word[1:]
        path = Path(os.path.normpath(os.path.join(base, word)))
        return path if self.inside(path) else None

    def stat(self, path: Path) -> tuple[bool | None, os.stat_result | None, Path]:
        """``(exists, stat, real path)``; ``exists`` is ``None`` when it cannot be told
        (a symlink out of the root, a permission error, too many links)."""
        parts = list(path.relative_to(self.root).parts)
        current = self.root
        hops = 0
        st: os.stat_result | None = None
        while parts:
            nxt = current / parts.pop(0)
            try:
                st = os.lstat(nxt)
            except (FileNotFoundError, NotADirectoryError):
                return False, None, nxt
            except OSError:
                return None, None, nxt
            if stat.S_ISLNK(st.st_mode):
                hops += 1
                if hops > _MAX_HOPS:
                    return None, None, nxt
                target = Path(os.path.normpath(os.path.join(current, os.readlink(nxt))))
                if not self.inside(target):
                    return None, None, nxt
                parts = list(target.relative_to(self.root).parts) + parts
                current = self.root
                continue
            current = nxt
        if st is None:
            try:
                st = os.stat(self.root)
            except OSError:
                return None, None, self.root
        return True, st, current

    def listing(self, folder: Path) -> list[str] | None:
        """Sorted entries of ``folder`` (folders end in ``/``), at most a bounded number."""
        exists, st, real = self.stat(folder)
        if not exists or st is None or not stat.S_ISDIR(st.st_mode):
            return None
        out: list[str] = []
        try:
            with os.scandir(real) as it:
                for entry in it:
                    if len(out) >= _MAX_LIST:
                        break
                    try:
                        is_dir = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        is_dir = False
                    out.append(entry.name + ("/" if is_dir else ""))
        except OSError:
            return None
        return sorted(out)

    def display(self, path: Path) -> str:
        """Folder ``path`` relative to the root, as an agent writes it (``./``, ``cfg/``)."""
        rel = path.relative_to(self.root).as_posix()
        return "./" if rel == "." else rel + "/"


def which(name: str, search_path: str) -> str | None:
    """The executable ``name`` on ``search_path``, as bash finds it, or ``None``."""
    for folder in search_path.split(os.pathsep):
        if not folder:
            continue
        candidate = os.path.join(folder, name)
        try:
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
        except OSError:
            continue
    return None


def executables(search_path: str) -> frozenset[str]:
    """Every executable name on ``search_path`` (for did-you-mean), cached briefly."""
    now = time.monotonic()
    cached = _executables.get(search_path)
    if cached is not None and now - cached[0] < _PATH_TTL_S:
        return cached[1]
    names: set[str] = set()
    for folder in search_path.split(os.pathsep):
        try:
            names.update(os.listdir(folder))
        except OSError:
            continue
    found = frozenset(names)
    _executables[search_path] = (now, found)
    return found


_REF_UNKNOWN = re.compile(r"[~^:@{}\\]|^(HEAD|ORIG_HEAD|FETCH_HEAD|MERGE_HEAD|-)$|^[0-9a-f]{4,40}$")


def git_dir(tree: Tree, cwd: Path) -> Path | None:
    """The ``.git`` folder of the repository ``cwd`` is in, looking up to the root only."""
    for folder in (cwd, *cwd.parents):
        if not tree.inside(folder):
            return None
        exists, st, real = tree.stat(folder / ".git")
        if exists and st is not None and stat.S_ISDIR(st.st_mode):
            return real
        if exists is None or exists:
            return None  # a .git file (worktree, submodule) or an unreadable one: not read
    return None


def _files_under(folder: Path) -> Iterator[str]:
    for base, _dirs, files in os.walk(folder):
        for f in files:
            yield os.path.relpath(os.path.join(base, f), folder)


def git_refs(gitdir: Path) -> set[str]:
    """Short names of the branches, tags and remote branches (``origin/x`` and ``x``)."""
    names: set[str] = set()
    for kind in ("heads", "tags"):
        names.update(_files_under(gitdir / "refs" / kind))
    for remote_ref in _files_under(gitdir / "refs" / "remotes"):
        names.add(remote_ref)
        names.add(remote_ref.split("/", 1)[-1])
    try:
        packed = (gitdir / "packed-refs").read_text(encoding="utf-8", errors="replace")
    except OSError:
        packed = ""
    for line in packed.splitlines():
        parts = line.split(" ", 1)
        if len(parts) == 2 and parts[1].startswith("refs/"):
            ref = parts[1].split("/", 2)
            if len(ref) == 3:
                names.add(ref[2])
                if ref[1] == "remotes":
                    names.add(ref[2].split("/", 1)[-1])
    return names


def ref_is_unknowable(name: str) -> bool:
    """A commit id, ``HEAD~2``, ``@{u}``...: names git resolves without a ref file."""
    return bool(_REF_UNKNOWN.search(name))


_RULE = re.compile(r"^([^\s#:=][^:=]*?)\s*::?(?![=])", re.MULTILINE)


def make_targets(makefile: Path) -> set[str] | None:
    """The explicit targets of ``makefile``; ``None`` when they cannot all be read
    (includes, pattern rules, targets named by variables)."""
    try:
        with makefile.open("rb") as f:
            raw = f.read(_MAX_MAKEFILE + 1)
    except OSError:
        return None
    if len(raw) > _MAX_MAKEFILE:
        return None
    text = raw.decode("utf-8", "replace")
    if re.search(r"^\s*-?include\b|^\.DEFAULT\s*:", text, re.MULTILINE):
        return None
    targets: set[str] = set()
    for match in _RULE.finditer(text):
        for name in match.group(1).split():
            if "%" in name or "$" in name:
                return None
            targets.add(name)
    return targets


def gnu_long_options(program: str) -> tuple[frozenset[str], frozenset[str]] | None:
    """What a GNU tool's executable says of its long options: ``(the names its help shows as
    --NAME, every run of lower-case letters, digits and dashes in its bytes)``, or ``None``
    when the file is not such a tool (not ELF, no GNU package named in it, too large,
    unreadable): then nothing is known.

    GNU's getopt takes any unambiguous prefix of a long option, an option may be left out of
    the help, and the linker may store its name inside a longer string (``gzip`` in
    ``ungzip``); so an option is unknown only when no name of the first set starts with it
    and no run of the second contains it (:func:`unknown_long_option`).
    """
    try:
        st = os.stat(program)
        key = (program, st.st_mtime_ns, st.st_size)
        if key in _programs:
            return _programs[key]
        if st.st_size > _MAX_PROGRAM:
            return None
        with open(program, "rb") as f:
            raw = f.read(_MAX_PROGRAM)
    except OSError:
        return None
    found = None
    if raw.startswith(b"\x7fELF") and _GNU.search(raw) and b"--help" in raw:
        dashed = frozenset(m.decode() for m in _DASHED.findall(raw))
        found = (dashed, frozenset(m.decode() for m in _RUN.findall(raw)))
    _programs[key] = found
    return found


def unknown_long_option(program: str, option: str) -> list[str] | None:
    """For ``--option`` given to the GNU tool at ``program``: ``None`` when it may be known
    (or nothing is known), else the nearest long options its help shows (did-you-mean)."""
    known = gnu_long_options(program)
    if known is None or not option:
        return None
    dashed, runs = known
    if any(name.startswith(option) for name in dashed) or any(option in run for run in runs):
        return None
    return ["--" + name for name in similar_names(option, dashed)]
