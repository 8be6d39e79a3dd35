"""Families that edit configuration and text in place: ``json_config``, ``bulk_rewrite``,
``dotenv_files``.
"""

from __future__ import annotations

from aw_lookahead.evaluation.agent_tasks.task import AgentTask, _put, _py, _same

__all__ = ["BULK_REWRITE", "DOTENV_FILES", "JSON_CONFIG"]

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
