"""Terminal families: files and directories, permissions, archives.

Listings never show dates or owners (``stat -c`` with chosen fields, ``tar
-t`` without ``-v``), so the observations are the same on every run.
"""

from __future__ import annotations

import random

from aw_lookahead.datagen.terminal.spec import (
    DIRS,
    EXTS,
    TaskSpec,
    bad,
    family,
    lines_file,
    ok,
    pick,
    printf_cmd,
    typo,
    words,
)


@family("files_mkdir_touch")
def _mkdir_touch(rng: random.Random) -> TaskSpec:
    top, sub = pick(rng, DIRS, 2)
    names = [f"{w}.{rng.choice(EXTS)}" for w in words(rng, rng.randint(2, 4))]
    wrong = typo(rng, top)
    steps = [
        ok(f"mkdir -p {top}/{sub}"),
        ok(f"cd {top}/{sub} && touch {' '.join(names)} && cd ../.."),
        bad(f"ls {wrong}"),
        ok(f"ls {top}/{sub}"),
        ok(f"find {top} -type f | sort"),
    ]
    return TaskSpec(f"Create the {top}/{sub} folder with a few empty files and list them.", steps)


@family("files_copy_move")
def _copy_move(rng: random.Random) -> TaskSpec:
    a, b = words(rng, 2)
    dest = rng.choice(DIRS)
    text = " ".join(words(rng, 3))
    steps = [
        ok(f"echo '{text}' > {a}.txt"),
        ok(f"cp {a}.txt {b}.txt"),
        bad(f"mv {b}.txt {dest}/"),
        ok(f"mkdir {dest} && mv {b}.txt {dest}/"),
        ok(f"ls . {dest}"),
        ok(f"cat {dest}/{b}.txt"),
    ]
    return TaskSpec(f"Copy {a}.txt to {b}.txt and move the copy into {dest}/.", steps)


@family("files_remove")
def _remove(rng: random.Random) -> TaskSpec:
    d = rng.choice(DIRS)
    names = words(rng, 3)
    steps = [
        ok(f"mkdir {d} && touch {' '.join(f'{d}/{n}.tmp' for n in names)}"),
        ok(f"rm {d}/{names[0]}.tmp && ls {d}"),
        bad(f"rm {d}/{names[0]}.tmp"),
        bad(f"rm {d}"),
        ok(f"rm -r {d} && ls"),
    ]
    return TaskSpec(f"Clean up the temporary files in {d}/ and then the folder itself.", steps)


@family("files_cat_missing")
def _cat_missing(rng: random.Random) -> TaskSpec:
    name = rng.choice(words(rng, 4))
    lines = [f"{w} {rng.randint(1, 99)}" for w in words(rng, rng.randint(3, 6))]
    files = {f"{name}.txt": lines_file(lines)}
    steps = [
        bad(f"cat {typo(rng, name)}.txt"),
        ok("ls"),
        ok(f"cat {name}.txt"),
        ok(f"head -n 2 {name}.txt"),
    ]
    if rng.random() < 0.5:
        steps.append(bad(f"cat {name}.txt.bak"))
    return TaskSpec(f"Show the contents of the {name} notes file.", steps, files)


@family("files_sizes")
def _sizes(rng: random.Random) -> TaskSpec:
    names = words(rng, 3)
    counts = [rng.randint(2, 40) for _ in names]
    make = " && ".join(f"seq {c} > {n}.txt" for n, c in zip(names, counts, strict=True))
    steps = [
        ok(make),
        ok("wc -c *.txt"),
        ok("ls -S"),
        ok("stat -c '%s %n' *.txt | sort -n | tail -1"),
        bad(f"stat -c '%s %n' {typo(rng, names[0])}.txt"),
    ]
    return TaskSpec("Find which of the generated files is the largest.", steps)


@family("files_rename_ext")
def _rename_ext(rng: random.Random) -> TaskSpec:
    names = words(rng, rng.randint(2, 4))
    old, new = pick(rng, ("txt", "md", "log", "bak"), 2)
    steps = [
        ok(f"touch {' '.join(f'{n}.{old}' for n in names)}"),
        ok("ls"),
        bad(f"mv *.{old} *.{new}"),
        ok(f'for f in *.{old}; do mv "$f" "${{f%.{old}}}.{new}"; done'),
        ok("ls"),
    ]
    return TaskSpec(f"Rename every .{old} file to .{new}.", steps)


@family("files_symlink")
def _symlink(rng: random.Random) -> TaskSpec:
    target, link = words(rng, 2)
    text = " ".join(words(rng, 4))
    steps = [
        ok(f"echo '{text}' > {target}.txt && ln -s {target}.txt {link}"),
        ok(f"readlink {link}"),
        ok(f"cat {link}"),
        ok(f"rm {target}.txt"),
        bad(f"cat {link}"),
        ok(f"ls -L {link} 2>&1 || echo 'dangling link'"),
    ]
    return TaskSpec(f"Point a symlink {link} at {target}.txt, then remove the target.", steps)


@family("files_hidden")
def _hidden(rng: random.Random) -> TaskSpec:
    visible = words(rng, 2)
    hidden = words(rng, 2)
    files = {f"{n}.txt": "x\n" for n in visible}
    files.update({f".{n}rc": "set=1\n" for n in hidden})
    steps = [
        ok("ls"),
        ok("ls -A"),
        bad(rng.choice(["ls -y", "ls --hidden", "ls -Q -z"])),
        ok("ls -d .[!.]* | wc -l"),
    ]
    return TaskSpec("Find the hidden configuration files in the home folder.", steps, files)


@family("files_diff_cmp")
def _diff(rng: random.Random) -> TaskSpec:
    base = words(rng, rng.randint(3, 5))
    changed = list(base)
    i = rng.randrange(len(changed))
    changed[i] = rng.choice([w for w in words(rng, 6) if w not in base])
    files = {"old.txt": lines_file(base), "new.txt": lines_file(changed)}
    steps = [
        ok("diff old.txt new.txt"),
        ok("cmp old.txt new.txt"),
        ok("diff -q old.txt old.txt && echo same"),
        bad(f"diff old.txt {typo(rng, 'new')}.txt"),
    ]
    return TaskSpec("Compare two versions of a word list.", steps, files)


@family("files_find_name")
def _find_name(rng: random.Random) -> TaskSpec:
    dirs = pick(rng, DIRS, 3)
    ext = rng.choice(("py", "md", "log"))
    made = []
    for d in dirs:
        for w in words(rng, rng.randint(1, 2)):
            made.append(f"{d}/{w}.{rng.choice((ext, 'txt'))}")
    files = {path: "" for path in made}
    steps = [
        ok(f"find . -name '*.{ext}' | sort"),
        bad(f"find . -nmae '*.{ext}'"),
        ok(f"find . -name '*.{ext}' | wc -l"),
        ok("find . -type d | sort"),
    ]
    return TaskSpec(f"Locate all .{ext} files in the tree.", steps, files)


@family("perm_exec_script")
def _exec_script(rng: random.Random) -> TaskSpec:
    name = rng.choice(words(rng, 3))
    msg = " ".join(words(rng, 2))
    files = {f"{name}.sh": f"#!/bin/sh\necho '{msg}'\n"}
    steps = [
        ok("stat -c '%A %n' *.sh"),
        bad(f"./{name}.sh"),
        ok(f"chmod +x {name}.sh && stat -c '%A %n' {name}.sh"),
        ok(f"./{name}.sh"),
    ]
    if rng.random() < 0.5:
        steps.insert(2, bad(f"{name}.sh"))
    return TaskSpec(f"Run the {name}.sh script.", steps, files)


@family("perm_chmod_modes")
def _chmod_modes(rng: random.Random) -> TaskSpec:
    names = words(rng, 3)
    modes = [rng.choice(("600", "640", "644", "700", "755")) for _ in names]
    steps = [ok(f"touch {' '.join(names)}")]
    steps += [ok(f"chmod {m} {n}") for n, m in zip(names[:2], modes, strict=False)]
    steps += [
        bad(f"chmod {rng.choice(('999', '8644', 'u+k'))} {names[2]}"),
        ok("stat -c '%a %A %n' " + " ".join(names)),
    ]
    return TaskSpec("Set the permissions of a few files and check them.", steps)


@family("perm_umask")
def _umask(rng: random.Random) -> TaskSpec:
    mask = rng.choice(("022", "027", "077"))
    a, b = words(rng, 2)
    steps = [
        ok("umask"),
        ok(f"touch {a} && stat -c '%a %n' {a}"),
        ok(f"umask {mask} && touch {b} && mkdir {b}.d"),
        ok(f"stat -c '%a %n' {b} {b}.d"),
        bad("umask 999"),
    ]
    return TaskSpec(f"See how umask {mask} changes the mode of new files.", steps)


@family("tar_roundtrip")
def _tar_roundtrip(rng: random.Random) -> TaskSpec:
    d = rng.choice(DIRS)
    names = words(rng, rng.randint(2, 3))
    files = {f"{d}/{n}.txt": f"{n}\n" for n in names}
    z = rng.choice(("", "z"))
    ext = "tar.gz" if z else "tar"
    steps = [
        ok(f"tar -c{z}f backup.{ext} {d}"),
        ok(f"tar -t{z}f backup.{ext} | sort"),
        ok(f"rm -r {d} && ls"),
        bad(f"tar -x{z}f backup.{'tgz' if z else 'tar.gz'}"),
        ok(f"tar -x{z}f backup.{ext} && cat {d}/{names[0]}.txt"),
    ]
    return TaskSpec(f"Back up {d}/ into an archive, delete it and restore it.", steps, files)


@family("tar_errors")
def _tar_errors(rng: random.Random) -> TaskSpec:
    present = words(rng, 2)
    missing = rng.choice([w for w in words(rng, 5) if w not in present])
    files = {f"{n}.txt": f"{n}\n" for n in present}
    steps = [
        bad(f"tar -cf out.tar {present[0]}.txt {missing}.txt"),
        ok("tar -tf out.tar"),
        ok(f"tar -cf out.tar {' '.join(f'{n}.txt' for n in present)} && tar -tf out.tar"),
        bad("tar -xf other.tar"),
        bad("tar out.tar"),
    ]
    return TaskSpec("Pack two text files into out.tar.", steps, files)


@family("gzip_files")
def _gzip(rng: random.Random) -> TaskSpec:
    name = rng.choice(words(rng, 3))
    n = rng.randint(5, 60)
    steps = [
        ok(f"seq {n} > {name}.txt && gzip {name}.txt && ls"),
        ok(f"zcat {name}.txt.gz | tail -n 2"),
        bad(f"gzip {name}.txt"),
        ok(f"gunzip {name}.txt.gz && wc -l {name}.txt"),
        bad(f"gunzip {name}.txt"),
    ]
    return TaskSpec(f"Compress {name}.txt, peek inside, and decompress it.", steps)


@family("files_append_log")
def _append_log(rng: random.Random) -> TaskSpec:
    name = rng.choice(words(rng, 3))
    entries = words(rng, rng.randint(2, 4))
    steps = [ok(printf_cmd([entries[0]], f"{name}.log"))]
    steps += [ok(f"echo {e} >> {name}.log") for e in entries[1:]]
    steps += [
        ok(f"cat {name}.log"),
        bad(f"echo done >> {rng.choice(DIRS)}/{name}.log"),
        ok(f"wc -l < {name}.log"),
    ]
    return TaskSpec(f"Append entries to {name}.log and count them.", steps)
