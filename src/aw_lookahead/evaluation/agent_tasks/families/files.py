"""Families that archive, move and script files: ``backup_archive``, ``script_authoring``,
``file_organize``.
"""

from __future__ import annotations

from aw_lookahead.evaluation.agent_tasks.task import AgentTask, _put

__all__ = ["BACKUP_ARCHIVE", "FILE_ORGANIZE", "SCRIPT_AUTHORING"]

BACKUP_ARCHIVE = (
    AgentTask(
        "backup-docs",
        "backup_archive",
        "Make a gzip-compressed tar archive of the docs folder at backup/docs.tar.gz "
        "(create backup/). Keep the docs folder.",
        (_put("docs/intro.md", "# Intro\n"), _put("docs/usage.md", "# Usage\n")),
        "test -f docs/intro.md && tar -tzf backup/docs.tar.gz | grep -qx docs/intro.md "
        "&& tar -tzf backup/docs.tar.gz | grep -qx docs/usage.md",
        ("mkdir -p backup && tar -czf backup/docs.tar.gz docs",),
    ),
    AgentTask(
        "extract-release",
        "backup_archive",
        "Unpack release.tar.gz into a new folder named out, so that its files land under out/.",
        (
            _put("app/VERSION", "1.4.2\n"),
            "tar -czf release.tar.gz app && rm -r app",
        ),
        "grep -qx 1.4.2 out/app/VERSION",
        ("mkdir -p out && tar -xzf release.tar.gz -C out",),
    ),
    AgentTask(
        "compress-logs",
        "backup_archive",
        "Compress every .log file in logs/ with gzip, so that only the .log.gz files remain.",
        (_put("logs/web.log", "GET /\n"), _put("logs/db.log", "SELECT 1\n")),
        "test ! -e logs/web.log && test ! -e logs/db.log "
        "&& zcat logs/web.log.gz | grep -qx 'GET /' "
        "&& zcat logs/db.log.gz | grep -qx 'SELECT 1'",
        ("gzip logs/*.log",),
    ),
    AgentTask(
        "archive-csv-only",
        "backup_archive",
        "Create an uncompressed tar archive csv.tar holding only the .csv files of data/ "
        "(with their data/ paths), not the .tmp files.",
        (
            _put("data/jan.csv", "a,1\n"),
            _put("data/feb.csv", "b,2\n"),
            _put("data/scratch.tmp", "junk\n"),
        ),
        "tar -tf csv.tar | sort | diff - <(printf 'data/feb.csv\\ndata/jan.csv\\n')",
        ("tar -cf csv.tar data/*.csv",),
    ),
)

SCRIPT_AUTHORING = (
    AgentTask(
        "greet-script",
        "script_authoring",
        "Write an executable script greet.sh that prints 'Hello, NAME!' for the name given as "
        "its first argument.",
        (),
        "test -x greet.sh && ./greet.sh Ada | grep -qx 'Hello, Ada!' "
        "&& ./greet.sh Bo | grep -qx 'Hello, Bo!'",
        ("printf '#!/bin/sh\\necho \"Hello, $1!\"\\n' > greet.sh && chmod +x greet.sh",),
    ),
    AgentTask(
        "sum-script",
        "script_authoring",
        "Write an executable script add.sh that prints the sum of all the numbers given as "
        "its arguments.",
        (),
        'test -x add.sh && test "$(./add.sh 2 3 4)" = 9 && test "$(./add.sh 10)" = 10',
        (
            'printf \'#!/bin/bash\\ns=0\\nfor n in "$@"; do s=$((s+n)); done'
            "\\necho $s\\n' > add.sh",
            "chmod +x add.sh",
        ),
    ),
    AgentTask(
        "count-files-script",
        "script_authoring",
        "Write an executable script count.sh that prints how many files the folder given as "
        "its argument holds.",
        (),
        'test -x count.sh && d=$(mktemp -d) && touch "$d/a" "$d/b" "$d/c" '
        '&& test "$(./count.sh "$d")" = 3 && rm -r "$d"',
        ("printf '#!/bin/sh\\nls -A \"$1\" | wc -l\\n' > count.sh && chmod +x count.sh",),
    ),
    AgentTask(
        "backup-script",
        "script_authoring",
        "Write an executable script mkbak.sh that copies the file given as its argument to the "
        "same name with .bak appended (notes.txt -> notes.txt.bak).",
        (),
        "test -x mkbak.sh && echo probe > probe.txt && ./mkbak.sh probe.txt "
        "&& cmp probe.txt probe.txt.bak",
        ('printf \'#!/bin/sh\\ncp "$1" "$1.bak"\\n\' > mkbak.sh && chmod +x mkbak.sh',),
    ),
)

FILE_ORGANIZE = (
    AgentTask(
        "sort-by-extension",
        "file_organize",
        "Move each file in inbox/ into a subfolder of inbox/ named after its extension "
        "(inbox/a.jpg -> inbox/jpg/a.jpg).",
        (
            "mkdir inbox",
            "touch inbox/a.jpg inbox/b.png inbox/c.txt inbox/d.jpg",
        ),
        "test -f inbox/jpg/a.jpg && test -f inbox/jpg/d.jpg && test -f inbox/png/b.png "
        '&& test -f inbox/txt/c.txt && test -z "$(find inbox -maxdepth 1 -type f)"',
        ('cd inbox && for f in *.*; do mkdir -p "${f##*.}" && mv "$f" "${f##*.}/"; done',),
    ),
    AgentTask(
        "lowercase-names",
        "file_organize",
        "Rename the files in photos/ to lower-case names (IMG_1.JPG -> img_1.jpg).",
        ("mkdir photos", "echo 1 > photos/IMG_1.JPG", "echo 2 > photos/IMG_2.JPG"),
        "test \"$(ls photos | tr '\\n' ' ')\" = 'img_1.jpg img_2.jpg ' "
        "&& grep -qx 2 photos/img_2.jpg",
        ('cd photos && for f in *; do mv "$f" "$(echo "$f" | tr A-Z a-z)"; done',),
    ),
    AgentTask(
        "flatten-tree",
        "file_organize",
        "Copy every .txt file found anywhere under nested/ into a new folder flat/ (no "
        "subfolders in flat/). Keep nested/ as it is.",
        (_put("nested/x/y/one.txt", "1\n"), _put("nested/z/two.txt", "2\n")),
        "test -f nested/x/y/one.txt && grep -qx 1 flat/one.txt && grep -qx 2 flat/two.txt "
        '&& test "$(ls flat | wc -l)" -eq 2',
        ("mkdir -p flat && find nested -name '*.txt' -exec cp {} flat/ \\;",),
    ),
    AgentTask(
        "clean-build-junk",
        "file_organize",
        "Delete the .o and .tmp files in project/ and keep every other file there.",
        (
            _put("project/main.c", "int main(void) { return 0; }\n"),
            _put("project/main.o", "obj\n"),
            _put("project/notes.tmp", "tmp\n"),
            _put("project/README", "read me\n"),
        ),
        "test \"$(ls project | tr '\\n' ' ')\" = 'README main.c '",
        ("rm project/*.o project/*.tmp",),
    ),
)
