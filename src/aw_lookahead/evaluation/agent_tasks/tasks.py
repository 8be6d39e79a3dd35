"""The agent task suite's data: closed-loop terminal tasks in families held out from training.

Each :class:`AgentTask` is run in a fresh :class:`~aw_lookahead.sandbox.TerminalSandbox`:
its ``setup`` commands build the starting files, the agent gets the ``instruction``
(what a user would ask for), and the task succeeded when ``check`` exits 0 afterwards
(it runs from the sandbox's home folder). ``solution`` is one known-good sequence of
commands; only tests use it (``tests/test_evaluation_agent_tasks.py`` checks, in the
real sandbox, that ``check`` fails after ``setup`` alone and passes after ``solution``).

:data:`FAMILIES` are disjoint from every family of the terminal data generator
(``aw_lookahead.datagen.terminal.spec.FAMILIES``) and of the trap suite
(``bench/trap_tasks.py``), so no policy or world model was trained on them; a test
checks that against the live registry. The tools are those of a plain Debian
(coreutils, sed, mawk, grep, tar, gzip, python3), which the training families use too:
what is held out is the task, not the command vocabulary.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from aw_lookahead.errors import ConfigError

__all__ = ["FAMILIES", "TASKS", "AgentTask", "select_tasks"]


@dataclass(frozen=True)
class AgentTask:
    """One closed-loop terminal task (see the module docstring)."""

    name: str
    family: str
    instruction: str
    setup: tuple[str, ...]
    check: str
    solution: tuple[str, ...]


def _put(path: str, text: str) -> str:
    """A setup command that writes ``text`` to ``path`` (its folder created)."""
    folder = path.rpartition("/")[0]
    mkdir = f"mkdir -p {shlex.quote(folder)} && " if folder else ""
    return f"{mkdir}printf '%s' {shlex.quote(text)} > {shlex.quote(path)}"


def _same(path: str, text: str) -> str:
    """A check: ``path`` holds exactly ``text`` (a missing final newline is forgiven)."""
    return (
        f"test -f {shlex.quote(path)} && diff <(printf '%s\\n' {shlex.quote(text.rstrip())}) "
        f'<(cat {shlex.quote(path)}; [ -n "$(tail -c1 {shlex.quote(path)})" ] && echo)'
    )


def _py(code: str) -> str:
    """A check (or step) written in Python."""
    return f"python3 -c {shlex.quote(code)}"


_SALES = "region,amount\nnorth,120\nsouth,80\nnorth,30\neast,55\nsouth,20\n"
_LOG = (
    "2026-11-02 10:00:01 INFO server started\n"
    "2026-11-02 10:00:07 ERROR disk quota exceeded\n"
    "2026-11-02 10:01:12 WARN slow response 1200ms\n"
    "2026-11-02 10:02:40 ERROR connection reset by peer\n"
    "2026-11-02 10:03:05 INFO request served\n"
    "2026-11-02 10:04:51 ERROR cache miss storm\n"
    "2026-11-02 10:05:00 INFO shutting down\n"
)
_ACCESS = (
    "10.0.0.7 GET /index.html 200\n"
    "10.0.0.3 GET /about 200\n"
    "10.0.0.7 POST /login 302\n"
    "192.168.1.20 GET /index.html 404\n"
    "10.0.0.3 GET /contact 200\n"
)

CSV_REPORT = (
    AgentTask(
        "sales-by-region",
        "csv_report",
        "sales.csv lists sales as region,amount (with a header line). Write the total amount "
        "per region to totals.txt, one 'region total' line per region, sorted by region name.",
        (_put("sales.csv", _SALES),),
        _same("totals.txt", "east 55\nnorth 150\nsouth 100"),
        ("awk -F, 'NR>1{s[$1]+=$2} END{for(r in s) print r, s[r]}' sales.csv | sort > totals.txt",),
    ),
    AgentTask(
        "average-score",
        "csv_report",
        "scores.csv has a header line and then name,score rows. Write the average score "
        "(a whole number) to avg.txt.",
        (_put("scores.csv", "name,score\nada,90\nbob,70\ncy,95\ndee,85\n"),),
        _same("avg.txt", "85"),
        ("awk -F, 'NR>1{s+=$2; n++} END{print s/n}' scores.csv > avg.txt",),
    ),
    AgentTask(
        "hottest-city",
        "csv_report",
        "temps.csv has a header line and then city,temperature rows. Write the name of the "
        "city with the highest temperature to hottest.txt.",
        (_put("temps.csv", "city,temp\nOslo,4\nCairo,31\nLima,19\nPerth,27\n"),),
        _same("hottest.txt", "Cairo"),
        ("tail -n +2 temps.csv | sort -t, -k2 -n | tail -1 | cut -d, -f1 > hottest.txt",),
    ),
    AgentTask(
        "email-column",
        "csv_report",
        "users.csv has a header line and then id,name,email rows. Write the email addresses "
        "to emails.txt, one per line, in the file's order, without the header.",
        (_put("users.csv", "id,name,email\n1,Ada,ada@example.org\n2,Bo,bo@example.org\n"),),
        _same("emails.txt", "ada@example.org\nbo@example.org"),
        ("tail -n +2 users.csv | cut -d, -f3 > emails.txt",),
    ),
)

JSON_CONFIG = (
    AgentTask(
        "set-server-port",
        "json_config",
        "In config.json, change the server port to 9090. Keep every other setting.",
        (_put("config.json", '{"server": {"host": "0.0.0.0", "port": 8080}, "debug": true}\n'),),
        _py(
            "import json; c = json.load(open('config.json'));"
            "assert c == {'server': {'host': '0.0.0.0', 'port': 9090}, 'debug': True}, c"
        ),
        (
            _py(
                "import json; c = json.load(open('config.json')); c['server']['port'] = 9090;"
                "json.dump(c, open('config.json', 'w'))"
            ),
        ),
    ),
    AgentTask(
        "disable-debug",
        "json_config",
        'In settings.json, set "debug" to false and add "log_level": "warn". Keep the rest.',
        (_put("settings.json", '{"name": "shop", "debug": true}\n'),),
        _py(
            "import json; c = json.load(open('settings.json'));"
            "assert c == {'name': 'shop', 'debug': False, 'log_level': 'warn'}, c"
        ),
        (
            _py(
                "import json; c = json.load(open('settings.json')); c['debug'] = False;"
                "c['log_level'] = 'warn'; json.dump(c, open('settings.json', 'w'))"
            ),
        ),
    ),
    AgentTask(
        "add-feature-flag",
        "json_config",
        'Add "dark_mode" at the end of the "features" list in flags.json.',
        (_put("flags.json", '{"features": ["search", "export"], "version": 3}\n'),),
        _py(
            "import json; c = json.load(open('flags.json'));"
            "assert c == {'features': ['search', 'export', 'dark_mode'], 'version': 3}, c"
        ),
        (
            _py(
                "import json; c = json.load(open('flags.json')); c['features'].append('dark_mode');"
                "json.dump(c, open('flags.json', 'w'))"
            ),
        ),
    ),
    AgentTask(
        "pin-dependencies",
        "json_config",
        'deps.json maps package names to versions under "dependencies". Write them to '
        "requirements.txt as name==version lines, sorted by name.",
        (
            _put(
                "deps.json",
                '{"dependencies": {"requests": "2.31", "flask": "3.0", "attrs": "23.1"}}',
            ),
        ),
        _same("requirements.txt", "attrs==23.1\nflask==3.0\nrequests==2.31"),
        (
            _py(
                "import json; d = json.load(open('deps.json'))['dependencies'];"
                "open('requirements.txt', 'w').write(''.join(f'{k}=={d[k]}\\n' for k in sorted(d)))"
            ),
        ),
    ),
)

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

LOG_TRIAGE = (
    AgentTask(
        "count-errors",
        "log_triage",
        "Count the ERROR lines in app.log and write just the number to error_count.txt.",
        (_put("app.log", _LOG),),
        _same("error_count.txt", "3"),
        ("grep -c ERROR app.log > error_count.txt",),
    ),
    AgentTask(
        "unique-client-ips",
        "log_triage",
        "access.log starts each line with a client IP. Write each distinct IP once to ips.txt, "
        "sorted.",
        (_put("access.log", _ACCESS),),
        _same("ips.txt", "10.0.0.3\n10.0.0.7\n192.168.1.20"),
        ("cut -d' ' -f1 access.log | sort -u > ips.txt",),
    ),
    AgentTask(
        "failed-logins",
        "log_triage",
        "auth.log records logins. Write the user names of the failed logins to failed.txt, "
        "each once, sorted.",
        (
            _put(
                "auth.log",
                "ok login for ada\nFAILED login for bob\nFAILED login for eve\n"
                "ok login for bob\nFAILED login for bob\n",
            ),
        ),
        _same("failed.txt", "bob\neve"),
        ("grep FAILED auth.log | awk '{print $4}' | sort -u > failed.txt",),
    ),
    AgentTask(
        "last-error",
        "log_triage",
        "Write the message of the last ERROR line of app.log (the text after 'ERROR ') "
        "to last_error.txt.",
        (_put("app.log", _LOG),),
        _same("last_error.txt", "cache miss storm"),
        ("grep ERROR app.log | tail -1 | sed 's/.*ERROR //' > last_error.txt",),
    ),
)

BULK_REWRITE = (
    AgentTask(
        "rename-function",
        "bulk_rewrite",
        "Rename the function fetch_rows to load_rows everywhere in the .py files under src/.",
        (
            _put("src/db.py", "def fetch_rows():\n    return [1, 2]\n"),
            _put("src/app.py", "from db import fetch_rows\n\nprint(fetch_rows())\n"),
        ),
        '! grep -rq fetch_rows src && test "$(grep -ro load_rows src | wc -l)" -eq 3 '
        "&& cd src && python3 app.py | grep -qx '\\[1, 2\\]'",
        ("sed -i 's/fetch_rows/load_rows/g' src/*.py",),
    ),
    AgentTask(
        "bump-version",
        "bulk_rewrite",
        "Change the version 1.2.3 to 1.3.0 in VERSION, setup.cfg and README.md.",
        (
            _put("VERSION", "1.2.3\n"),
            _put("setup.cfg", "[metadata]\nname = tool\nversion = 1.2.3\n"),
            _put("README.md", "# tool 1.2.3\n\nInstall tool 1.2.3 with pip.\n"),
        ),
        "! grep -q 1.2.3 VERSION setup.cfg README.md && grep -qx 1.3.0 VERSION "
        "&& grep -qx 'version = 1.3.0' setup.cfg "
        '&& test "$(grep -o 1.3.0 README.md | wc -l)" -eq 2',
        ("sed -i 's/1\\.2\\.3/1.3.0/g' VERSION setup.cfg README.md",),
    ),
    AgentTask(
        "move-db-host",
        "bulk_rewrite",
        "The database moved from db.old.internal to db.new.internal: update every .conf file "
        "in conf/. Leave notes.txt as it is.",
        (
            _put("conf/app.conf", "db_host=db.old.internal\nport=5432\n"),
            _put("conf/worker.conf", "upstream=db.old.internal:5432\n"),
            _put("notes.txt", "we used db.old.internal until november\n"),
        ),
        "! grep -q db.old conf/*.conf && grep -qx db_host=db.new.internal conf/app.conf "
        "&& grep -qx upstream=db.new.internal:5432 conf/worker.conf && grep -q db.old notes.txt",
        ("sed -i 's/db\\.old\\.internal/db.new.internal/g' conf/*.conf",),
    ),
    AgentTask(
        "strip-trailing-spaces",
        "bulk_rewrite",
        "Remove the trailing spaces at the ends of lines in every .md file here; change "
        "nothing else.",
        (_put("a.md", "title  \nbody text \n"), _put("b.md", "one\ntwo   \n")),
        "! grep -q ' $' a.md b.md && diff a.md <(printf 'title\\nbody text\\n') "
        "&& diff b.md <(printf 'one\\ntwo\\n')",
        ("sed -i 's/ *$//' *.md",),
    ),
)

DOTENV_FILES = (
    AgentTask(
        "env-change-port",
        "dotenv_files",
        "In .env, change PORT to 4000. Keep the other variables.",
        (_put(".env", "DEBUG=true\nPORT=3000\nNAME=shop\n"),),
        _same(".env", "DEBUG=true\nPORT=4000\nNAME=shop"),
        ("sed -i 's/^PORT=.*/PORT=4000/' .env",),
    ),
    AgentTask(
        "env-from-example",
        "dotenv_files",
        "Create .env from .env.example: the same variables in the same order, but with "
        "APP_ENV=production.",
        (_put(".env.example", "APP_ENV=development\nWORKERS=2\nCACHE_DIR=/tmp/cache\n"),),
        _same(".env", "APP_ENV=production\nWORKERS=2\nCACHE_DIR=/tmp/cache")
        + " && grep -q APP_ENV=development .env.example",
        ("sed 's/^APP_ENV=.*/APP_ENV=production/' .env.example > .env",),
    ),
    AgentTask(
        "env-drop-legacy",
        "dotenv_files",
        "Remove the LEGACY_MODE variable from .env and keep every other line.",
        (_put(".env", "HOST=localhost\nLEGACY_MODE=1\nTIMEOUT=30\n"),),
        _same(".env", "HOST=localhost\nTIMEOUT=30"),
        ("sed -i '/^LEGACY_MODE=/d' .env",),
    ),
    AgentTask(
        "env-export-script",
        "dotenv_files",
        "Write env.sh that exports every variable of .env (one 'export NAME=value' line "
        "each), so that '. ./env.sh' sets them in a shell.",
        (_put(".env", "REGION=eu-west\nRETRIES=5\n"),),
        "grep -qx 'export REGION=eu-west' env.sh && grep -qx 'export RETRIES=5' env.sh "
        '&& env -i bash -c \'. ./env.sh && test "$REGION" = eu-west && test "$RETRIES" = 5\'',
        ("sed 's/^/export /' .env > env.sh",),
    ),
)

SORTED_OUTPUTS = (
    AgentTask(
        "dedup-emails",
        "sorted_outputs",
        "emails.txt has repeated addresses. Write each address once, sorted, to unique.txt.",
        (_put("emails.txt", "zoe@x.org\nada@x.org\nzoe@x.org\nmo@x.org\nada@x.org\n"),),
        _same("unique.txt", "ada@x.org\nmo@x.org\nzoe@x.org"),
        ("sort -u emails.txt > unique.txt",),
    ),
    AgentTask(
        "most-common-word",
        "sorted_outputs",
        "words.txt holds one word per line. Write the word that occurs most often to top.txt.",
        (_put("words.txt", "pear\nfig\npear\nplum\nfig\npear\n"),),
        _same("top.txt", "pear"),
        ("sort words.txt | uniq -c | sort -rn | head -1 | awk '{print $2}' > top.txt",),
    ),
    AgentTask(
        "merge-lists",
        "sorted_outputs",
        "Combine the lines of a.txt and b.txt into all.txt: sorted, each line once.",
        (_put("a.txt", "delta\nalpha\n"), _put("b.txt", "charlie\nalpha\nbravo\n")),
        _same("all.txt", "alpha\nbravo\ncharlie\ndelta"),
        ("sort -u a.txt b.txt > all.txt",),
    ),
    AgentTask(
        "largest-first",
        "sorted_outputs",
        "sizes.txt has 'name size' lines. Write the names to order.txt, largest size first.",
        (_put("sizes.txt", "logs 120\nsrc 9\nmedia 4400\ncache 310\n"),),
        _same("order.txt", "media\ncache\nlogs\nsrc"),
        ("sort -k2 -rn sizes.txt | cut -d' ' -f1 > order.txt",),
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

TASKS: tuple[AgentTask, ...] = (
    *CSV_REPORT,
    *JSON_CONFIG,
    *BACKUP_ARCHIVE,
    *LOG_TRIAGE,
    *BULK_REWRITE,
    *DOTENV_FILES,
    *SORTED_OUTPUTS,
    *SCRIPT_AUTHORING,
    *FILE_ORGANIZE,
)
"""Every task of the suite, family by family."""

FAMILIES: tuple[str, ...] = tuple(dict.fromkeys(t.family for t in TASKS))
"""The suite's families, in order."""


def select_tasks(
    families: tuple[str, ...] | list[str] = (), names: tuple[str, ...] | list[str] = ()
) -> list[AgentTask]:
    """The tasks of ``families`` and the tasks named in ``names`` (all tasks when both are empty).

    Raises :class:`~aw_lookahead.errors.ConfigError` for an unknown family or name, listing
    the valid ones.
    """
    unknown = sorted(set(families) - set(FAMILIES))
    if unknown:
        raise ConfigError(f"unknown task family {unknown[0]!r}; choose from {', '.join(FAMILIES)}")
    known = {t.name for t in TASKS}
    missing = sorted(set(names) - known)
    if missing:
        raise ConfigError(
            f"unknown task {missing[0]!r}; the {len(known)} tasks are listed in "
            "aw_lookahead.evaluation.agent_tasks.TASKS"
        )
    if not families and not names:
        return list(TASKS)
    return [t for t in TASKS if t.family in families or t.name in names]
