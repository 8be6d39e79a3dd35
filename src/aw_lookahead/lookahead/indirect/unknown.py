"""What a program the tables do not know may run or destroy, judged by behaviour.

The tables (:mod:`._shell_programs`, :mod:`._infra_effects`, :mod:`.indirect.runners`) can
never list every wrapper, so a program that is neither in them nor known to be
inert (``echo``, ``grep``...) is read for what it is handed:

* another program's argv anywhere in its arguments (``unshare -r rm -rf data``,
  ``xyz --opt bash -c '...'``) is judged as that argv;
* an argument that reads as shell text (it holds a blank or a shell operator:
  ``sg staff -c 'rm -rf data'``, ``gdb -ex 'shell rm -rf data'``, ``!cmd``) is
  judged as shell code;
* a code option (``-c``, ``-e``, ``--eval``...) whose value the text does not
  show is possibly destructive;
* a deleting verb among its first operands (``virsh destroy``, ``rclone purge``,
  ``kind delete``), a deleting long option (``--delete``, ``--remove-files``,
  ``--purge``, ``--rm``), an HTTP method that deletes however it is spelled
  (``-XDELETE``, ``--request=DELETE``, ``http DELETE``, a method-override
  header or ``_method=DELETE``), SQL that drops or deletes in any argument.

Assignments that name a program or code to run (``PAGER=``, ``PROMPT_COMMAND=``,
``GIT_SSH_COMMAND=``, ``LESSOPEN=``, ``PS1='$(...)'``) are judged by that program;
those that load code from a file or an option (``BASH_ENV``, ``LD_PRELOAD``,
``NODE_OPTIONS=--require``...) are possibly destructive.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from aw_lookahead.lookahead._code_effects import sql_effects
from aw_lookahead.lookahead._shell_programs import Effect, Recurse
from aw_lookahead.lookahead.shell_parse import DYN, PROC, parse_script

__all__ = [
    "INERT",
    "assignment_effects",
    "assignments_in",
    "http_effects",
    "unknown_effects",
]

_INERT_NAMES = """
    echo printf cat tac ls head tail grep egrep fgrep rg ag wc pwd which type whereis whoami
    id uname printenv stat du df cut tr diff cmp md5sum sha1sum sha256sum sha512sum basename
    dirname realpath readlink ps free uptime nl column jq yq cd true false : test [ [[ sleep
    mkdir touch man info help apropos whatis date hostname history jobs clear reset tput
    nproc xxd od hexdump strings less more file seq yes expr bc dc lsof pgrep pidof top htop
    locale tty stty groups users who w last wait read shift return exit break continue set
    unset shopt local declare typeset export readonly let getopts umask ulimit hash dirs
    pushd popd disown fg bg suspend logout times compgen complete compopt caller mapfile
    readarray cal look rev fold fmt pr paste join comm split csplit expand unexpand tsort
    numfmt base32 base64 basenc cksum sum b2sum iconv envsubst gettext ngettext lscpu lsblk
    lsusb lspci ip6tables-save iptables-save getent nslookup dig host ping traceroute
    netstat ss arp whoami dmesg journalctl vmstat iostat mpstat sar
"""
INERT = frozenset(_INERT_NAMES.split())
"""Programs that neither run their arguments nor delete (their own options included)."""

_CODE_OPTIONS = frozenset(
    {"-c", "-e", "-ex", "-x", "--command", "--eval", "--exec", "--execute", "--run"}
    | {"-Command", "-command", "--cmd", "-eval", "--eval-command", "-q", "--query"}
)
_SHELLISH = re.compile(r"[\s;&|`$<>()]")
_DELETE_STEMS = (
    "delete",
    "destroy",
    "remove",
    "purge",
    "prune",
    "wipe",
    "erase",
    "uninstall",
    "undefine",
    "truncate",
    "flush",
    "terminate",
    "deregister",
    "rollback",
    "labelclear",
    "mklabel",
    "mktable",
    "zap",
)
_DELETE_WORDS = frozenset({"rm", "rmi", "del", "rb", "drop", "reset", "kill", "clean", "dropdb"})
_DELETE_LONG = re.compile(
    r"^--(?:delete|remove|purge|destroy|wipe|erase|drop|zap|zero|flush|force-delete|rm$"
    r"|discard|unlink|shred)",
    re.IGNORECASE,
)
_HTTP_METHOD = re.compile(r"^-[A-Za-z]*X(.+)$")
_HTTP_VALUE_OPTIONS = frozenset({"-X", "--request", "--method", "--custom-request", "-m"})
_HTTP_CLIENTS = frozenset({"http", "https", "xh", "xhs", "curlie", "httpie", "hurl"})
_OVERRIDE = re.compile(r"(?i)method-override\s*:\s*(delete|purge)|[?&]_method=(delete|purge)")


def _verb(word: str) -> bool:
    low = word.lower()
    if low in _DELETE_WORDS:
        return True
    return any(stem in low for stem in _DELETE_STEMS)


def _method_effect(value: str) -> list[Effect]:
    method = value.strip("'\" ").upper()
    if DYN in value or PROC in value:
        return [Effect("destroys", "the HTTP method is an expansion, so it may delete")]
    if method in ("DELETE", "PURGE"):
        return [Effect("destroys", f"the HTTP {method} deletes the resource")]
    if method in ("PUT", "PATCH"):
        return [Effect("overwrites", f"the HTTP {method} replaces or changes the resource")]
    return []


def http_effects(base: str, args: list[str]) -> list[Effect]:
    """The HTTP method an HTTP client sends, however it is spelled, and method overrides."""
    out: list[Effect] = []
    for i, a in enumerate(args):
        if a in _HTTP_VALUE_OPTIONS and i + 1 < len(args):
            out += _method_effect(args[i + 1])
        elif a.startswith(("--request=", "--method=", "--custom-request=")):
            out += _method_effect(a.split("=", 1)[1])
        elif not a.startswith("--") and (m := _HTTP_METHOD.match(a)):
            out += _method_effect(m.group(1))
        override = _OVERRIDE.search(a)
        if override:
            out.append(Effect("destroys", "a method override asks the server to DELETE"))
    if base in _HTTP_CLIENTS:
        ops = [a for a in args if not a.startswith("-")]
        if ops:
            out += _method_effect(ops[0]) if ops[0].isalpha() else []
    return out


def _sql_in(args: list[str]) -> list[Effect]:
    texts = []
    for a in args:
        texts.append(a.split("=", 1)[1] if a.startswith("--") and "=" in a else a)
        if re.match(r"^-[A-Za-z]{1,2}\S", a):
            texts.append(a[2:])
    return sql_effects("sql", texts)


def unknown_effects(
    base: str, args: list[str], r: Recurse, is_known: Callable[[str], bool]
) -> list[Effect]:
    """Effects of ``base`` with ``args`` when no table knows ``base`` (see the module doc)."""
    out: list[Effect] = []
    for k, a in enumerate(args[:64]):
        name = a.rsplit("/", 1)[-1]
        if name and is_known(name):
            out += r.argv(args[k:])
    for k, a in enumerate(args):
        prev = args[k - 1] if k else ""
        value = a.split("=", 1)[1] if a.startswith("--") and "=" in a else a
        if prev in _CODE_OPTIONS and value.replace(DYN, "").replace(PROC, "").strip() == "":
            out.append(Effect("destroys", f"{base} {prev} runs code the text does not show"))
        elif PROC in value and prev.startswith("-"):
            out.append(Effect("destroys", f"{base} reads a file the text does not show"))
        elif _SHELLISH.search(value) or value.startswith(("!", ":!")):
            out += r.guess(value.lstrip(":!"))
    ops = [a for a in args if not a.startswith("-")]
    verb = next((w for w in ops[:3] if _verb(w)), None)
    if verb is not None:
        out.append(Effect("destroys", f"{base} {verb} deletes, purges or resets what it names"))
    option = next((a for a in args if _DELETE_LONG.match(a)), None)
    if option is not None:
        out.append(Effect("destroys", f"{base} {option} deletes what it acts on"))
    out += http_effects(base, args)
    out += _sql_in(args)
    return out


# --------------------------------------------------------------------------- assignments

_CODE_VARS_NAMES = """
    PROMPT_COMMAND PAGER GIT_PAGER MANPAGER SYSTEMD_PAGER BAT_PAGER DELTA_PAGER PSQL_PAGER
    EDITOR VISUAL GIT_EDITOR SUDO_EDITOR FCEDIT GIT_SEQUENCE_EDITOR GIT_SSH_COMMAND GIT_SSH
    GIT_PROXY_COMMAND GIT_EXTERNAL_DIFF GIT_ASKPASS SSH_ASKPASS SUDO_ASKPASS BROWSER
    LESSOPEN LESSCLOSE SHELL CC CXX LD MAKESHELL TERMINAL EXINIT VIMINIT PS0 PS1 PS2 PS3 PS4
    RSYNC_RSH CVS_RSH RSH TAR_RSH_COMMAND
"""
_CODE_VARS = frozenset(_CODE_VARS_NAMES.split())
_FILE_VARS_NAMES = """
    BASH_ENV ENV LD_PRELOAD LD_AUDIT INPUTRC ZDOTDIR GCONV_PATH GIT_EXEC_PATH PYTHONSTARTUP
    PROMPT_FILE
"""
_FILE_VARS = frozenset(_FILE_VARS_NAMES.split())
_OPTION_VARS = {
    "NODE_OPTIONS": re.compile(r"--require|--import|--loader|--experimental-loader|(^|\s)-r\b"),
    "PERL5OPT": re.compile(r"-[MmdI]"),
    "RUBYOPT": re.compile(r"-r"),
    "JAVA_TOOL_OPTIONS": re.compile(r"-javaagent|-agentpath|-agentlib"),
    "_JAVA_OPTIONS": re.compile(r"-javaagent|-agentpath|-agentlib"),
}


def assignment_effects(pairs: Iterable[tuple[str, str]], r: Recurse) -> list[Effect]:
    """Effects of ``NAME=value`` assignments whose variable names a program or code to run."""
    out: list[Effect] = []
    for name, value in pairs:
        if name in _CODE_VARS or re.fullmatch(r"GIT_CONFIG_VALUE_\d+", name):
            code = value.lstrip("|!: ")
            if name.startswith("PS") or name in ("CC", "CXX", "LD", "SHELL", "TERMINAL"):
                out += [Effect(e.severity, f"{name} runs: {e.reason}") for e in r.guess(code)]
            else:
                out += [Effect(e.severity, f"{name} runs: {e.reason}") for e in r.code(code)]
        elif (name in _FILE_VARS and value not in ("", "/dev/null")) or (
            name in _OPTION_VARS and _OPTION_VARS[name].search(value)
        ):
            out.append(Effect("destroys", f"{name} loads code the text does not show"))
    return out


def _value(raw: str) -> str:
    """The value of an assignment word as the shell reads it (quotes removed)."""
    if not raw or raw.startswith("("):
        return raw
    commands = parse_script(": " + raw).commands
    words = commands[0].words if commands else []
    return words[1] if len(words) > 1 else raw


def assignments_in(words: Iterable[str], *, raw: bool = False) -> list[tuple[str, str]]:
    """``(name, value)`` of the ``NAME=value`` words (raw assignment text when ``raw``)."""
    out = []
    for w in words:
        name, eq, value = w.partition("=")
        name = name.removesuffix("+")
        if eq and name.isidentifier():
            out.append((name, _value(value) if raw else value))
    return out
