"""Walk a shell action's plan against the files under a root: the look itself.

:class:`Look` checks each need of a plan (:mod:`.plan`) in order, with what the
plan's earlier commands may have created or changed (a folder made first, a ``cd``),
and stops at the first need observed missing, at anything unknown, or at its time
bound. Only :mod:`.files` touches the disk (read-only).
"""

from __future__ import annotations

import fnmatch
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import files
from .files import Tree, executables, git_dir, git_refs, make_targets, ref_is_unknowable, which
from .observation import Fact, Observation
from .plan import Chdir, Creates, Need, Plan, Unknown
from .similar import similar_names

__all__ = ["Look"]

_SHOWN_FOLDERS = 3


@dataclass
class Look:
    """One look: walk a plan against ``tree`` from ``cwd``; :meth:`run` gives the observation."""

    tree: Tree
    cwd: Path
    search_path: str
    budget_s: float
    vetoes_programs: bool
    facts: list[Fact] = field(default_factory=list)
    folders: list[Path] = field(default_factory=list)
    created: list[Path] = field(default_factory=list)
    missing: Fact | None = None
    complete: bool = True
    found: dict[str, str | None] = field(default_factory=dict)  # programs on PATH, as seen

    def run(self, plan: Plan) -> Observation:
        start = time.perf_counter()
        stop = time.thread_time() + self.budget_s  # CPU time: a busy machine delays, not cuts
        cwd_ok = self.tree.inside(self.cwd)
        for step in plan:
            if time.thread_time() > stop:
                self.complete = False
                break
            if isinstance(step, Unknown):
                self.complete = False
                break
            if isinstance(step, Creates):
                self.created.extend(p for p in map(self._abs, step.paths) if p is not None)
            elif isinstance(step, Chdir):
                target = self._abs(step.path)
                if target is None or self._made(target):
                    self.complete = False
                    break
                self.cwd = target
            elif step.kind == "program" or cwd_ok:
                self._need(step)
                if self.missing is not None:
                    break
        listings: dict[str, list[str]] = {}
        for folder in [self.cwd, *self.folders][: _SHOWN_FOLDERS + 1]:
            if not self.tree.inside(folder):
                continue
            entries = self.tree.listing(folder)
            if entries is not None:
                listings.setdefault(self.tree.display(folder), entries)
        return Observation(
            facts=self.facts,
            listings=listings,
            cwd=self.tree.display(self.cwd) if cwd_ok else str(self.cwd),
            missing=self.missing,
            complete=self.complete and cwd_ok,
            seconds=time.perf_counter() - start,
        )

    def _abs(self, word: str) -> Path | None:
        return self.tree.absolute(self.cwd, word)

    def _made(self, path: Path) -> bool:
        return any(c == path or c in path.parents or path in c.parents for c in self.created)

    def _fail(self, fact: Fact) -> None:
        self.facts.append(fact)
        self.missing = fact

    def _need(self, need: Need) -> None:
        if need.kind == "program":
            self._program(need)
        elif need.kind in ("path", "parent", "absent"):
            self._path(need)
        elif need.kind == "fresh":
            self._fresh(need)
        elif need.kind == "option":
            self._option(need)
        elif need.kind in ("repo", "ref"):
            self._git(need)
        else:
            self._make(need)

    def _which(self, name: str) -> str | None:
        if name not in self.found:
            self.found[name] = which(name, self.search_path)
        return self.found[name]

    def _program(self, need: Need) -> None:
        found = self._which(need.subject)
        here = (
            [e.rstrip("/") for e in self.tree.listing(self.cwd) or []]
            if "." in need.subject
            else []
        )
        if found is not None:
            self.facts.append(
                Fact(kind="program", subject=need.subject, found=True, where="PATH", detail=found)
            )
            return
        fact = Fact(
            kind="program",
            subject=need.subject,
            found=False,
            where="PATH",
            role=need.role,
            similar=similar_names(need.subject, here or executables(self.search_path)),
            detail=(
                "it starts a command (each line, `;` or `&&` starts one), and it names no program"
                if here
                else ""
            ),
        )
        if self.vetoes_programs:
            self._fail(fact)
        else:
            self.facts.append(fact)

    def _option(self, need: Need) -> None:
        found = self._which(need.program) if "/" not in need.program else None
        similar = files.unknown_long_option(found, need.subject) if found is not None else None
        if similar is not None:
            detail = f"GNU {need.program} answers: unrecognized option '--{need.subject}'"
            self._fail(
                Fact(kind="option", subject=f"--{need.subject}", found=False, where=found or "",
                     role=need.program, detail=detail, similar=similar)
            )  # fmt: skip

    def _fresh(self, need: Need) -> None:
        """A path written onto: seen absent or present, never a veto; unknown when the text
        may have made it first or it cannot be looked at."""
        target = self._abs(need.subject)
        if target is None or target == self.tree.root:
            return
        made = self._made(target)  # the text may have written it first: count it as there
        exists, _st, _real = (True, None, target) if made else self.tree.stat(target)
        if exists is None:
            return
        self.facts.append(
            Fact(
                kind="fresh",
                subject=need.subject,
                found=exists,
                where=self.tree.display(target.parent),
                role=need.role,
            )
        )

    def _path(self, need: Need) -> None:
        if need.glob:
            self._glob(need)
            return
        target = self._abs(need.subject)
        if target is None or self._made(target):
            self.complete = False
            return
        check = target.parent if need.kind == "parent" else target
        if self._made(check) or check == self.tree.root:
            return
        exists, st, _real = self.tree.stat(check)
        if exists is None:
            self.complete = False
            return
        if not exists and self._found_elsewhere(need):
            return
        self.folders.append(check.parent)
        shown = self.tree.display(check.parent)
        if need.kind == "absent":
            if exists:
                self._fail(
                    Fact(
                        kind="absent",
                        subject=need.subject,
                        found=True,
                        where=shown,
                        role=need.role,
                        detail=f"{need.role.split()[0]} refuses an existing name",
                    )
                )
            return
        if exists and st is not None:
            kind = "folder" if stat.S_ISDIR(st.st_mode) else "file"
            wanted = "folder" if need.want == "dir" or need.kind == "parent" else need.want
            if wanted in ("file", "folder") and kind != wanted:
                fact = Fact(
                    kind="path",
                    subject=check.name if need.kind == "parent" else need.subject,
                    found=False,
                    where=shown,
                    role=need.role,
                    detail=f"is a {kind}, not a {wanted}",
                )
                self._fail(fact)
                return
            if need.want == "exec" and kind == "file" and not st.st_mode & 0o111:
                fact = Fact(
                    kind="path",
                    subject=need.subject,
                    found=False,
                    where=shown,
                    role=need.role,
                    detail="is not executable, so bash answers Permission denied "
                    "(chmod +x it, or run it with its interpreter)",
                )
                self._fail(fact)
                return
            size = f", {st.st_size} bytes" if kind == "file" else ""
            self.facts.append(
                Fact(
                    kind=need.kind,
                    subject=need.subject,
                    found=True,
                    where=shown,
                    detail=kind + size,
                )
            )
            return
        self._fail(self._missing_path(need, check))

    def _glob(self, need: Need) -> None:
        """A ``*``/``?`` pattern in the last part: some name in its folder must match it."""
        folder_word, _, pattern = need.subject.rpartition("/")
        folder = self._abs(folder_word or ".")
        if folder is None or self._made(folder):
            self.complete = False
            return
        exists, _st, _real = self.tree.stat(folder)
        if exists is None:
            self.complete = False
            return
        if not exists:
            self._fail(self._missing_path(need, folder / "_"))
            return
        entries = [e.rstrip("/") for e in self.tree.listing(folder) or []]
        hidden = pattern.startswith(".")
        if any(fnmatch.fnmatchcase(e, pattern) for e in entries if hidden or not e.startswith(".")):
            return
        self.folders.append(folder)
        self._fail(
            Fact(
                kind="path",
                subject=need.subject,
                found=False,
                where=self.tree.display(folder),
                role=need.role,
                detail=f"matches no name in {self.tree.display(folder)}, so bash passes it on "
                "as it is",
            )
        )

    def _found_elsewhere(self, need: Need) -> bool:
        """Found under another name the program also tries (``f.gz``), or on PATH (``bash f``)."""
        for suffix in need.suffixes:
            alt = self._abs(need.subject + suffix)
            if alt is not None and self.tree.stat(alt)[0]:
                return True
        on_path = need.on_path and "/" not in need.subject
        return on_path and which(need.subject, self.search_path) is not None

    def _missing_path(self, need: Need, target: Path) -> Fact:
        """The first missing folder on the way to ``target``, with the names that do exist there."""
        folder = target.parent
        name = target.name
        while folder != self.tree.root and not self.tree.stat(folder)[0]:
            name, folder = folder.name, folder.parent
        entries = [e.rstrip("/") for e in self.tree.listing(folder) or []]
        last = name == target.name and folder == target.parent
        written = need.subject.rstrip("/")
        hint = [
            written[: len(written) - len(name)] + h if last else written.replace(name, h, 1)
            for h in similar_names(name, entries)
        ]
        where = self.tree.display(folder)
        parent = need.kind == "parent"
        return Fact(
            kind="parent" if parent else "path",
            subject=need.subject,
            found=False,
            where=where,
            role=need.role,
            similar=hint,
            detail=f"`{name}` does not exist in {where}"
            if parent
            else ""
            if last
            else f"cannot be reached: the folder `{name}` does not exist",
        )

    def _git(self, need: Need) -> None:
        gitdir = git_dir(self.tree, self.cwd)
        if gitdir is None:
            self.facts.append(
                Fact(
                    kind="repo",
                    subject=".",
                    found=False,
                    where=self.tree.display(self.cwd),
                    detail="no .git folder from here up to the root",
                )
            )
            self.complete = False
            return
        if need.kind == "repo":
            return
        if ref_is_unknowable(need.subject):
            return
        refs = git_refs(gitdir)
        as_path = self._abs(need.subject)
        if need.subject in refs or (as_path is not None and self.tree.stat(as_path)[0]):
            self.facts.append(Fact(kind="ref", subject=need.subject, found=True, where="git"))
            return
        shown = ", ".join(sorted(refs)[:8]) or "none yet"
        self._fail(
            Fact(
                kind="ref",
                subject=need.subject,
                found=False,
                where=f"the repository at {self.tree.display(gitdir.parent)}",
                role=need.role,
                detail=f"refs: {shown}",
                similar=similar_names(need.subject, refs),
            )
        )

    def _make(self, need: Need) -> None:
        names = ("GNUmakefile", "makefile", "Makefile")
        makefile = next((self.cwd / n for n in names if self.tree.stat(self.cwd / n)[0]), None)
        where = self.tree.display(self.cwd)
        entries = [e.rstrip("/") for e in self.tree.listing(self.cwd) or []]
        if need.subject and (
            need.subject in entries or any(e.startswith(need.subject + ".") for e in entries)
        ):
            return  # a file of that name, or a built-in rule's source: make may build it
        if makefile is None:
            if not need.subject:
                self._fail(Fact(kind="target", subject="", found=False, where=where, role="make"))
            else:
                self._fail(
                    Fact(
                        kind="target",
                        subject=need.subject,
                        found=False,
                        where=where,
                        role="make",
                        detail="there is no makefile",
                    )
                )
            return
        if not need.subject:
            return
        targets = make_targets(makefile)
        if targets is None:
            self.complete = False
            return
        if need.subject in targets:
            self.facts.append(
                Fact(
                    kind="target",
                    subject=need.subject,
                    found=True,
                    where=self.tree.display(makefile.parent) + makefile.name,
                )
            )
            return
        shown = ", ".join(sorted(t for t in targets if not t.startswith("."))[:10])
        self._fail(
            Fact(
                kind="target",
                subject=need.subject,
                found=False,
                where=self.tree.display(makefile.parent) + makefile.name,
                role="make",
                detail=f"targets: {shown}",
                similar=similar_names(need.subject, targets),
            )
        )
