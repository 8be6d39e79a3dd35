"""Filesystem families: ``@modelcontextprotocol/server-filesystem`` on a fresh small tree."""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path

from aw_lookahead.datagen.mcp.content import BAD_TOOLS, OUTSIDE, WORDS, random_files
from aw_lookahead.datagen.mcp.session import Family, Plan, pick, typo

FIXED_MTIME = 1_767_225_600  # 2026-01-01T00:00:00Z: every file starts with the same times


@dataclass
class FsWorkspace:
    """The allowed directory of one trajectory and the files written into it."""

    root: Path
    files: dict[str, str]

    def path(self, rel: str) -> str:
        return str(self.root / rel)

    def any_file(self, rng: random.Random) -> str:
        return str(pick(rng, sorted(self.files)))

    def dirs(self) -> list[str]:
        return sorted({str(Path(f).parent) for f in self.files if "/" in f})


def make_fs_workspace(root: Path, rng: random.Random) -> FsWorkspace:
    """Fill the (new, empty) ``root`` with 3-6 small files and fixed modification times."""
    files = random_files(rng)
    for rel, content in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    for path in sorted(root.rglob("*"), reverse=True):
        os.utime(path, (FIXED_MTIME, FIXED_MTIME))
    os.utime(root, (FIXED_MTIME, FIXED_MTIME))
    return FsWorkspace(root, files)


def _missing(rng: random.Random, ws: FsWorkspace) -> str:
    """A path inside the root that names nothing: a misspelt file or a made-up name."""
    taken = {*ws.files, *ws.dirs()}
    for _ in range(10):
        rel = typo(rng, ws.any_file(rng)) if rng.random() < 0.6 else f"{pick(rng, WORDS)}.txt"
        if rel not in taken:
            return ws.path(rel)
    return ws.path("no-such-file.txt")


def _outside(rng: random.Random, ws: FsWorkspace) -> str:
    if rng.random() < 0.52:
        return f"{ws.root}/../{pick(rng, WORDS)}/{ws.any_file(rng)}"
    return str(pick(rng, OUTSIDE))


def read_files(rng: random.Random, ws: FsWorkspace) -> Plan:
    plan = Plan(f"Read the files of the project in {ws.root}")
    plan.add("list_directory", path=str(ws.root))
    for _ in range(rng.randrange(1, 4)):
        if rng.random() < 0.47:
            plan.add("read_text_file", True, path=_missing(rng, ws))
        else:
            plan.add("read_text_file", path=ws.path(ws.any_file(rng)))
    return plan


def head_tail(rng: random.Random, ws: FsWorkspace) -> Plan:
    plan = Plan("Peek at the start and end of a file")
    rel = ws.any_file(rng)
    plan.add("read_text_file", path=ws.path(rel), head=rng.randrange(1, 4))
    if rng.random() < 0.52:
        plan.add("read_text_file", True, path=ws.path(rel), tail=str(rng.randrange(1, 4)))
    plan.add("read_text_file", path=ws.path(rel), tail=rng.randrange(1, 4))
    if rng.random() < 0.42:
        plan.add("read_text_file", True, path=ws.path(rel), head=2, tail=2)
    return plan


def write_then_read(rng: random.Random, ws: FsWorkspace) -> Plan:
    plan = Plan("Write a new note and check it landed")
    name = f"{pick(rng, WORDS)}-{rng.randrange(1, 99)}.md"
    folder = pick(rng, [*ws.dirs(), "."])
    if rng.random() < 0.25:
        plan.add("write_file", True, path=ws.path(f"drafts/{name}"), content="draft\n")
    target = ws.path(f"{folder}/{name}" if folder != "." else name)
    plan.add("write_file", path=target, content=f"# {name}\nowner: {pick(rng, WORDS)}\n")
    plan.add("read_text_file", path=target)
    plan.add("list_directory", path=str(Path(target).parent))
    return plan


def fresh_writes(rng: random.Random, ws: FsWorkspace) -> Plan:
    """What an IDE agent does first in a session: new files, edits of text that is there, a
    folder; nothing listed or read before. Its mistakes are the ones the call itself shows."""
    plan = Plan("Start a change: add files and edit existing ones")
    folders = [*ws.dirs(), "."]
    for _ in range(rng.randrange(2, 5)):
        roll = rng.random()
        if roll < 0.45:
            folder = pick(rng, folders)
            name = f"{pick(rng, WORDS)}-{rng.randrange(1, 99)}{pick(rng, ['.md', '.txt', '.py'])}"
            target = ws.path(name if folder == "." else f"{folder}/{name}")
            plan.add("write_file", path=target, content=f"{pick(rng, WORDS)} {pick(rng, WORDS)}\n")
        elif roll < 0.8:
            rel = ws.any_file(rng)
            lines = [ln for ln in ws.files[rel].splitlines() if ln.strip()]
            old = pick(rng, lines)
            plan.add(
                "edit_file", path=ws.path(rel), edits=[{"oldText": old, "newText": old + " !"}]
            )
        elif roll < 0.9:
            plan.add("create_directory", path=ws.path(f"{pick(rng, WORDS)}-{rng.randrange(1, 99)}"))
        elif roll < 0.95:
            plan.add("write_file", True, path=f"{_outside(rng, ws)}.new", content="x\n")
        else:
            plan.add("write_file", True, path=ws.path(f"{pick(rng, WORDS)}.txt"))
    return plan


def edit_file(rng: random.Random, ws: FsWorkspace) -> Plan:
    plan = Plan("Change one line of a file")
    rel = ws.any_file(rng)
    lines = [ln for ln in ws.files[rel].splitlines() if ln.strip()]
    old = pick(rng, lines)
    new = old.replace(old.split()[-1], pick(rng, WORDS)) if old.split() else "x"
    plan.add("read_text_file", path=ws.path(rel))
    if rng.random() < 0.3:
        plan.add(
            "edit_file", True, path=_missing(rng, ws), edits=[{"oldText": old, "newText": new}]
        )
    if rng.random() < 0.7:
        wrong = old.upper() if old.upper() != old else old + " (old)"
        plan.add("edit_file", True, path=ws.path(rel), edits=[{"oldText": wrong, "newText": new}])
    dry = rng.random() < 0.5
    plan.add("edit_file", path=ws.path(rel), edits=[{"oldText": old, "newText": new}], dryRun=dry)
    if not dry:
        plan.add("read_text_file", path=ws.path(rel))
    return plan


def mkdir_move(rng: random.Random, ws: FsWorkspace) -> Plan:
    plan = Plan("Move a file into a new archive folder")
    rel = ws.any_file(rng)
    folder = ws.path(f"archive-{pick(rng, WORDS)}")
    dest = f"{folder}/{Path(rel).name}"
    if rng.random() < 0.55:
        plan.add("move_file", True, source=ws.path(rel), destination=dest)
    plan.add("create_directory", path=folder)
    plan.add("move_file", source=ws.path(rel), destination=dest)
    if rng.random() < 0.55:
        plan.add("move_file", True, source=ws.path(rel), destination=dest)
    plan.add("list_directory", path=folder)
    return plan


def search_and_read(rng: random.Random, ws: FsWorkspace) -> Plan:
    plan = Plan("Find files by pattern and read them together")
    rel = ws.any_file(rng)
    ext = Path(rel).suffix or ".txt"
    pattern = pick(rng, [f"*{ext}", f"**/*{ext}", Path(rel).name])
    if rng.random() < 0.4:
        outside = pick(rng, [str(ws.root.parent), "/etc", "/var/log"])
        plan.add("search_files", True, path=outside, pattern=pattern)
    plan.add("search_files", path=str(ws.root), pattern=pattern)
    paths = [ws.path(f) for f in sorted(ws.files) if f.endswith(ext)][:3]
    if rng.random() < 0.52:
        paths.append(_missing(rng, ws))
    plan.add("read_multiple_files", paths=paths)
    if rng.random() < 0.6:
        plan.add("read_multiple_files", True, paths=[])
    return plan


def tree_and_sizes(rng: random.Random, ws: FsWorkspace) -> Plan:
    plan = Plan("Get an overview of the project layout and sizes")
    if rng.random() < 0.4:
        absent = [d for d in ("src", "lib", "app", "notes", "build") if d not in ws.dirs()]
        plan.add("directory_tree", True, path=ws.path(pick(rng, absent)))
    plan.add("directory_tree", path=str(ws.root))
    if rng.random() < 0.6:
        plan.add("list_directory_with_sizes", True, path=str(ws.root), sortBy="date")
    plan.add("list_directory_with_sizes", path=str(ws.root), sortBy=pick(rng, ["name", "size"]))
    if ws.dirs():
        plan.add("list_directory", path=ws.path(pick(rng, ws.dirs())))
    return plan


def outside_root(rng: random.Random, ws: FsWorkspace) -> Plan:
    plan = Plan("Check which folders may be read, then read a file")
    plan.add("list_allowed_directories")
    plan.add("read_text_file", True, path=_outside(rng, ws))
    if rng.random() < 0.5:
        plan.add("list_directory", True, path=str(ws.root.parent))
    plan.add("read_text_file", path=ws.path(ws.any_file(rng)))
    return plan


def wrong_kind(rng: random.Random, ws: FsWorkspace) -> Plan:
    plan = Plan("Open things that are not what they seem")
    folder = pick(rng, ws.dirs()) if ws.dirs() else None
    rel = ws.any_file(rng)
    if folder is not None:
        plan.add("read_text_file", True, path=ws.path(folder))
    plan.add("list_directory", True, path=ws.path(rel))
    plan.add("create_directory", True, path=f"{ws.path(rel)}/sub")
    plan.add("list_directory", path=str(ws.root))
    return plan


def bad_calls(rng: random.Random, ws: FsWorkspace) -> Plan:
    plan = Plan("Clean up an old file")
    rel = ws.any_file(rng)
    plan.add("list_directory", path=str(ws.root))
    plan.add(pick(rng, BAD_TOOLS), True, path=ws.path(rel))
    plan.add("write_file", True, path=ws.path(rel))
    if rng.random() < 0.5:
        plan.add("edit_file", True, path=ws.path(rel), edits="replace everything")
    plan.add("write_file", path=ws.path(rel), content="")
    return plan


def file_info(rng: random.Random, ws: FsWorkspace) -> Plan:
    plan = Plan("Look up file metadata")
    plan.add("get_file_info", path=ws.path(ws.any_file(rng)))
    if rng.random() < 0.75:
        plan.add("get_file_info", True, path=_missing(rng, ws))
    plan.add("get_file_info", path=str(ws.root))
    return plan


FS_FAMILIES: tuple[Family, ...] = (
    Family("fs.read_files", "filesystem", read_files),
    Family("fs.head_tail", "filesystem", head_tail),
    Family("fs.write_then_read", "filesystem", write_then_read),
    Family("fs.edit_file", "filesystem", edit_file),
    Family("fs.fresh_writes", "filesystem", fresh_writes),
    Family("fs.mkdir_move", "filesystem", mkdir_move),
    Family("fs.search_and_read", "filesystem", search_and_read),
    Family("fs.tree_and_sizes", "filesystem", tree_and_sizes),
    Family("fs.outside_root", "filesystem", outside_root),
    Family("fs.wrong_kind", "filesystem", wrong_kind),
    Family("fs.bad_calls", "filesystem", bad_calls),
    # "created"/"accessed" times are set by the kernel, not by us
    Family("fs.file_info", "filesystem", file_info, deterministic=False),
)
