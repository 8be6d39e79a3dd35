"""What one program needs, by program: readers, copies, archives, find, git, make, interpreters.

:func:`program_steps` is the part of a command's plan its program and arguments give
(the redirections and the program lookup are :mod:`.needs`'s); a program whose effects
on the files are not read ends the plan with :class:`~.plan.Unknown`.
"""

from __future__ import annotations

from typing import Literal

from aw_lookahead.lookahead._shell_programs import has_option, operands

from .plan import Chdir, Creates, Need, Plan, Unknown, is_pattern, is_static
from .programs import NO_EFFECT, READERS, Reader, word_set

__all__ = ["program_steps"]


def _reader_steps(name: str, reader: Reader, args: list[str]) -> Plan:
    if has_option(args, *reader.quiet, value_short=reader.value_short):
        return []
    given = has_option(args, *reader.code_given, value_short=reader.value_short)
    files = operands(args, reader.value_short, reader.value_long)
    if reader.first_is_script and not given:
        files = files[1:]
    if reader.skip_assignments:
        files = [f for f in files if not ("=" in f and f.split("=", 1)[0].isidentifier())]
    if reader.inputs is not None:
        files = files[: reader.inputs]
    return [
        Need(
            "path",
            f,
            f"{name} reads it",
            want=reader.want,
            suffixes=reader.suffixes,
            glob=not is_static(f),
        )
        for f in files
        if f != "-" and (is_static(f) or is_pattern(f))
    ]


def _copy_steps(name: str, args: list[str]) -> Plan:
    files = [f for f in operands(args, "tS", ("--target-directory", "--suffix")) if is_static(f)]
    target = next(
        (
            args[i + 1] if a == "-t" and i + 1 < len(args) else a.split("=", 1)[1]
            for i, a in enumerate(args)
            if a == "-t" or a.startswith("--target-directory=")
        ),
        None,
    )
    if target is not None:
        sources, dest = files, target
    elif len(files) >= 2:
        sources, dest = files[:-1], files[-1]
    else:
        return []
    plan: Plan = [Need("path", s, f"{name} reads it") for s in sources]
    if not is_static(dest):
        return [*plan, Unknown(f"{name} into a folder known only when it runs")]
    if target is not None or len(sources) > 1 or dest.endswith("/"):
        plan.append(Need("path", dest, f"{name} puts files into it", want="dir"))
        plan.append(
            Creates(
                tuple(f"{dest.rstrip('/')}/{s.rstrip('/').rsplit('/', 1)[-1]}" for s in sources)
            )
        )
    else:
        plan.append(Need("parent", dest, f"{name} writes there"))
        plan.append(Need("fresh", dest, f"{name} writes onto it"))
        plan.append(Creates((dest,)))
    return plan


def _ln_steps(args: list[str]) -> Plan:
    """``ln [-s] TARGET [LINK]``: a hard link's target exists; with one operand the link is
    ``TARGET``'s last part in the working directory, which must be free. Forms that replace,
    back up or go into a folder are not read."""
    paths = [p for p in operands(args, "tS", ("--target-directory", "--suffix")) if is_static(p)]
    replaces = ("--force", "--interactive", "--backup", "--target-directory")
    if has_option(args, "fibt", replaces) or len(paths) not in (1, 2):
        return [Unknown("ln in a form whose effect is not read")]
    target = paths[0]
    plan: Plan = []
    if not has_option(args, "s", ("--symbolic",)):
        plan.append(Need("path", target, "ln links to it"))
    if len(paths) == 1:
        link = target.rstrip("/").rsplit("/", 1)[-1]
        plan.append(Need("absent", link, "ln creates the link"))
    else:
        link = paths[1]
        plan.append(Need("parent", link, "ln creates the link there"))
    return [*plan, Creates((link,))]


def _tar_steps(args: list[str]) -> Plan:
    """``tar`` in its three spellings (``-xzf a.tgz``, ``xzf a.tgz``, ``-x -f a.tgz``)."""
    letters = ""
    archive: str | None = None
    for i, a in enumerate(args):
        if a.startswith("--file="):
            archive = a.split("=", 1)[1]
        elif a == "--file" and i + 1 < len(args):
            archive = args[i + 1]
        elif (a.startswith("-") and not a.startswith("--")) or (i == 0 and a.isalpha()):
            bundle = a.lstrip("-")
            letters += bundle
            if "f" in bundle and i + 1 < len(args) and bundle.endswith("f"):
                archive = args[i + 1]
        elif a in ("--extract", "--get"):
            letters += "x"
        elif a == "--list":
            letters += "t"
        elif a == "--create":
            letters += "c"
    if archive is None or archive == "-" or not is_static(archive):
        return [Unknown("tar without an archive named in the text")]
    if "c" in letters:
        inputs = (
            []
            if "C" in letters or any(a.startswith("--directory") for a in args)
            else [
                Need("path", a, "tar puts it in the archive")
                for a in args[1:]
                if not a.startswith("-") and a != archive and is_static(a)
            ]
        )
        return [
            *inputs,
            Need("parent", archive, "tar writes the archive there"),
            Creates((archive,)),
        ]
    if "x" in letters or "t" in letters:
        steps: Plan = [Need("path", archive, "tar reads it", want="file")]
        return [*steps, Unknown("tar extracts files")] if "x" in letters else steps
    return [Unknown("tar in a mode not read")]


def _find_steps(args: list[str]) -> Plan:
    """``find``'s starting points must exist; its actions (``-delete``, ``-exec``) are not read."""
    i = 0
    while i < len(args) and args[i] in ("-H", "-L", "-P", "-D", "-O"):
        i += 2 if args[i] in ("-D", "-O") else 1
    starts: list[str] = []
    for a in args[i:]:
        if a.startswith("-") or a in ("(", "!", ")", ","):
            break
        starts.append(a)
    plan: Plan = [Need("path", s, "find starts there") for s in starts if is_static(s)]
    acts = ("-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprintf", "-fls")
    if any(a in acts for a in args):
        plan.append(Unknown("find runs actions"))
    return plan


def _git_steps(args: list[str]) -> Plan:
    if not args or args[0].startswith("-"):
        return [Unknown("git with global options")]
    sub, rest = args[0], args[1:]
    if sub in ("init", "clone"):
        return [Unknown(f"git {sub} makes a repository")]
    if sub not in _GIT_IN_REPO:
        return [Unknown(f"git {sub} needs it")]
    plan: Plan = [Need("repo", ".", f"git {sub} needs it")]
    names = [a for a in rest if not a.startswith("-")]
    creating = has_option(rest, "bBcCd", ("--create", "--force-create", "--orphan", "--detach"))
    if sub in ("checkout", "switch", "merge") and len(names) == 1 and not creating:
        ref = names[0]
        if is_static(ref) and "--" not in rest:
            plan.append(Need("ref", ref, f"git {sub} needs it"))
    if sub not in _GIT_READS:
        plan.append(Unknown(f"git {sub} changes the working tree"))
    return plan


_GIT_READS = word_set(
    "status log diff show branch rev-parse ls-files blame grep describe shortlog reflog tag "
    "remote add commit"
)


_GIT_IN_REPO = _GIT_READS | word_set(
    "checkout switch merge rebase reset restore stash pull push fetch cherry-pick revert "
    "clean mv rm am bisect worktree submodule"
)


def _make_steps(args: list[str]) -> Plan:
    allowed = ("-n", "-s", "-k", "-B", "--dry-run")
    if any(a.startswith("-") and a not in allowed and not a.startswith("-j") for a in args):
        return [Unknown("make with options")]
    targets = [a for a in args if not a.startswith("-") and "=" not in a]
    if not all(is_static(t) for t in targets):
        return [Unknown("make of a target known only when it runs")]
    needs: Plan = [Need("target", t, "make builds it") for t in targets] or [
        Need("target", "", "make reads it")
    ]
    return [*needs, Unknown("make runs its recipes")]


def program_steps(name: str, args: list[str]) -> Plan:
    reader = READERS.get(name)
    if reader is not None:
        steps = _reader_steps(name, reader, args)
        return steps if name in NO_EFFECT else [*steps, Unknown(f"{name} may write files")]
    if name == "tar":
        return _tar_steps(args)
    if name == "find":
        return _find_steps(args)
    if name == "cd":
        dirs = [a for a in args if not a.startswith("-") or a == "-"]
        if not dirs or dirs[0] == "-" or not is_static(dirs[0]):
            return [Unknown("cd to a folder known only when it runs")]
        return [Need("path", dirs[0], "cd enters it", want="dir"), Chdir(dirs[0])]
    if name in ("cp", "mv"):
        return _copy_steps(name, args)
    if name == "ln":
        return _ln_steps(args)
    if name in ("mkdir", "touch", "tee"):
        files = [f for f in operands(args, "m", ("--mode",)) if is_static(f)]
        parents = name == "mkdir" and has_option(args, "p", ("--parents",), value_short="m")
        plan: Plan = []
        for f in files:
            if not parents:
                plan.append(Need("parent", f, f"{name} creates it there"))
            if name == "mkdir" and not parents:
                plan.append(Need("absent", f, "mkdir creates it"))
        return [*plan, Creates(tuple(files))]
    if name in ("rm", "rmdir", "chmod", "chown", "chgrp"):
        if has_option(args, "f", ("--force", "--ignore-fail-on-non-empty", "--silent", "--quiet")):
            return []
        files = operands(args, "", ("--reference",))
        if name in ("chmod", "chown", "chgrp") and not any(
            a.startswith("--reference") for a in args
        ):
            files = files[1:]
        plain = name == "rm" and not has_option(args, "rRd", ("--recursive", "--dir"))
        want: Literal["file", "dir", "any"] = (
            "file" if plain else "dir" if name == "rmdir" else "any"
        )
        return [Need("path", f, f"{name} needs it", want=want) for f in files if is_static(f)]
    if name in _INTERPRETERS:
        return _interpreter_steps(name, args)
    if name == "git":
        return _git_steps(args)
    if name == "make":
        return _make_steps(args)
    if name in NO_EFFECT:
        return []
    return [Unknown(f"what {name} does to the files is not read")]


_INTERPRETERS: dict[str, tuple[str, tuple[str, ...], bool]] = {
    # name: (short options taking a value, options that give the code, script looked up on PATH)
    "python": ("WXQ", ("-c", "-m"), False),
    "python3": ("WXQ", ("-c", "-m"), False),
    "node": ("r", ("-e", "-p", "--eval", "--print"), False),
    "ruby": ("rIC", ("-e",), False),
    "perl": ("IMm", ("-e", "-E"), False),
    "bash": ("oO", ("-c", "-s"), True),
    "sh": ("oO", ("-c", "-s"), True),
    "zsh": ("oO", ("-c", "-s"), True),
    "dash": ("oO", ("-c", "-s"), True),
}


def _interpreter_steps(name: str, args: list[str]) -> Plan:
    short, code, search = _INTERPRETERS[name]
    for a in args:
        if a in code or any(a.startswith(c) and len(c) == 2 and len(a) > 2 for c in code):
            return [Unknown(f"{name} runs code given in its arguments")]
        if not a.startswith("-"):
            break
    files = operands(args, short, ())
    if not files or files[0] == "-" or not is_static(files[0]):
        return [Unknown(f"{name} reads code from stdin")]
    need = Need("path", files[0], f"{name} runs it", want="file", on_path=search)
    return [need, Unknown(f"what the {name} script does is not read")]
