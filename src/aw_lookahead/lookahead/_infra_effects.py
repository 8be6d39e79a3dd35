"""Effects on processes, services, containers, clusters, clouds and installed packages.

Kills (``kill``, ``pkill``, ``killall``, service stops, ``shutdown``),
container and cluster deletions (``docker rm``/``prune``/``compose down``,
``kubectl delete``/``drain``, ``helm uninstall``), cloud deletions
(``aws s3 rm``, ``gcloud ... delete``, ``terraform destroy``) and package
removals. ``docker exec`` and ``kubectl exec -- cmd`` are judged by the
command they run.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._shell_programs import Effect, EffectRule, Recurse, command_after, has_option, operands

__all__ = ["INFRA_PROGRAMS"]


def _d(reason: str) -> list[Effect]:
    return [Effect("destroys", reason)]


def _kill(args: list[str], _r: Recurse) -> list[Effect]:
    if not args or args[0] in ("-l", "-L", "--list", "--table"):
        return []
    if args[0] in ("-0", "-s0") or args[:2] in (["-s", "0"], ["--signal", "0"]):
        return []
    return _d("kill signals processes to stop")


def _killer(name: str) -> EffectRule:
    def rule(args: list[str], _r: Recurse) -> list[Effect]:
        if set(args) <= {"--help", "--version", "-l", "--list"} and args:
            return []
        return _d(f"{name} kills processes")

    return rule


def _subcommand(
    table: dict[str, str], value_short: str = "", value_long: Sequence[str] = ()
) -> EffectRule:
    """Programs whose first operand picks what they do (``systemctl stop``...)."""

    def rule(args: list[str], _r: Recurse) -> list[Effect]:
        ops = operands(args, value_short, value_long)
        for word in ops[:3]:
            if word.lower() in table:
                return _d(table[word.lower()])
        return []

    return rule


_STOPS = dict.fromkeys(
    ("stop", "kill", "disable", "mask", "poweroff", "reboot", "halt"), "stops services"
)


def _service(args: list[str], _r: Recurse) -> list[Effect]:
    return _d("service stops or restarts a service") if set(args) & {"stop", "restart"} else []


_TMUX_SHELL = frozenset(
    {"new", "new-session", "new-window", "neww", "split-window", "splitw", "respawn-pane"}
    | {"respawnp", "respawn-window", "respawnw", "run-shell", "run", "if-shell", "if"}
    | {"pipe-pane", "pipep", "display-popup", "popup"}
)


def _tmux(args: list[str], r: Recurse) -> list[Effect]:
    """tmux commands (split at ``;``): kills, shell commands it starts, keys it types."""
    out: list[Effect] = []
    commands: list[list[str]] = [[]]
    for a in args:
        if a in (";", "\\;"):
            commands.append([])
        else:
            commands[-1].append(a)
    for words in commands:
        ops = operands(words, "LSfcT")
        if not ops:
            continue
        sub, rest = ops[0], words[words.index(ops[0]) + 1 :]
        if sub.startswith("kill-"):
            out += _d("tmux kills sessions or panes")
        elif sub in _TMUX_SHELL:
            shell = operands(rest, "cefFlnstxyNT")
            if shell:
                out += [
                    Effect(e.severity, f"tmux {sub} runs: {e.reason}")
                    for e in r.code(" ".join(shell))
                ]
        elif sub in ("send-keys", "send"):
            out += _typed(
                operands(rest, "NtT"), "l" in "".join(a for a in rest if a.startswith("-")), r
            )
    return out


def _typed(keys: list[str], literal: bool, r: Recurse) -> list[Effect]:
    from .keystrokes.reader import reduce_keys  # the readline reader: keys as the shell reads them

    items = [{"keystrokes": k} for k in keys]
    reduced = reduce_keys(items, literal=literal)
    if reduced.unknown is not None:
        return _d(f"tmux send-keys types keys that cannot be read as a line ({reduced.unknown})")
    text = "\n".join([*reduced.lines, reduced.pending])
    return [Effect(e.severity, f"tmux send-keys types: {e.reason}") for e in r.code(text)]


def _fuser(args: list[str], _r: Recurse) -> list[Effect]:
    return _d("fuser -k kills processes") if has_option(args, "k", ("--kill",)) else []


_CONTAINER_DELETE = frozenset({"rm", "rmi", "kill", "prune", "down", "remove", "delete"})


def _docker(args: list[str], r: Recurse) -> list[Effect]:
    ops = operands(args, "Hc", ("--host", "--context", "--config", "--log-level"))
    if not ops:
        return []
    if ops[0] == "exec":
        rest = args[args.index("exec") + 1 :]
        inner = command_after(rest, "euw", ("--env", "--user", "--workdir", "--env-file"), 1)
        return [Effect(e.severity, f"docker exec runs: {e.reason}") for e in r.argv(inner)]
    if ops[0] in ("run", "create", "debug"):
        rest = args[args.index(ops[0]) + 1 :]
        out: list[Effect] = []
        for k, word in enumerate(rest):  # the image's command: each tail read as an argv
            if not word.startswith("-") and "\x00" not in word:
                out += r.argv(rest[k:])
        return [Effect(e.severity, f"docker {ops[0]} runs: {e.reason}") for e in out]
    if set(ops[:3]) & _CONTAINER_DELETE:
        return _d(f"docker {' '.join(ops[:2])} deletes containers, images, volumes or networks")
    return []


def _kubectl(args: list[str], r: Recurse) -> list[Effect]:
    ops = operands(args, "ns", ("--namespace", "--context", "--kubeconfig", "--cluster", "--user"))
    if not ops:
        return []
    if ops[0] == "exec" and "--" in args:
        inner = args[args.index("--") + 1 :]
        return [Effect(e.severity, f"kubectl exec runs: {e.reason}") for e in r.argv(inner)]
    if ops[0] in ("delete", "drain"):
        return _d(f"kubectl {ops[0]} removes cluster resources")
    return []


def _cloud(name: str) -> EffectRule:
    def rule(args: list[str], _r: Recurse) -> list[Effect]:
        for a in operands(args, "npg", ("--profile", "--region", "--project", "--name")):
            low = a.lower()
            if low in ("rm", "rb", "delete", "destroy", "uninstall", "del", "un", "purge") or (
                low.startswith(("delete-", "terminate-", "remove-", "deregister-"))
            ):
                return _d(f"{name} {a} deletes cloud resources")
        if "--delete" in args:
            return _d(f"{name} --delete deletes remote data")
        return []

    return rule


def _terraform(args: list[str], _r: Recurse) -> list[Effect]:
    if "destroy" in args or "-destroy" in args:
        return _d("terraform destroys infrastructure")
    return []


def _packages(verbs: Sequence[str]) -> EffectRule:
    def rule(args: list[str], _r: Recurse) -> list[Effect]:
        ops = operands(args)
        if ops and ops[0] in verbs:
            return _d(f"{ops[0]} removes installed packages")
        if ops[:1] == ["cache"] and ops[1:2] and ops[1] in ("clean", "purge", "remove", "rm"):
            return _d(f"{ops[1]} deletes the package cache")
        return []

    return rule


_UNINSTALL = ("uninstall", "remove", "rm", "r", "un", "purge", "autoremove", "erase", "unlink")


INFRA_PROGRAMS: dict[str, EffectRule] = {
    "kill": _kill,
    **{name: _killer(name) for name in ("killall", "pkill", "skill", "xkill", "killall5")},
    **{name: _killer(name) for name in ("shutdown", "reboot", "halt", "poweroff")},
    "systemctl": _subcommand(_STOPS),
    "service": _service,
    "tmux": _tmux,
    "fuser": _fuser,
    "docker": _docker,
    "podman": _docker,
    "nerdctl": _docker,
    "docker-compose": _docker,
    "kubectl": _kubectl,
    "oc": _kubectl,
    "helm": _cloud("helm"),
    "aws": _cloud("aws"),
    "gsutil": _cloud("gsutil"),
    "gcloud": _cloud("gcloud"),
    "az": _cloud("az"),
    "doctl": _cloud("doctl"),
    "heroku": _cloud("heroku"),
    "terraform": _terraform,
    "tofu": _terraform,
    "pulumi": _terraform,
    **{name: _packages(_UNINSTALL) for name in ("pip", "pip3", "npm", "pnpm", "yarn", "brew")},
    **{name: _packages(_UNINSTALL) for name in ("apt", "apt-get", "yum", "dnf", "conda", "gem")},
    "cargo": _packages(("uninstall", "clean", "remove", "rm")),
    "dropdb": lambda _a, _r: _d("dropdb drops a database"),
    "dropuser": lambda _a, _r: _d("dropuser drops a database role"),
    "mysqladmin": _subcommand({"drop": "mysqladmin drop drops a database"}, "uphP"),
}
