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

from ._shell_programs import Effect, Recurse, Rule, command_after, has_option, operands

__all__ = ["INFRA_PROGRAMS"]


def _d(reason: str) -> list[Effect]:
    return [Effect("destroys", reason)]


def _kill(args: list[str], _r: Recurse) -> list[Effect]:
    if not args or args[0] in ("-l", "-L", "--list", "--table"):
        return []
    if args[0] in ("-0", "-s0") or args[:2] in (["-s", "0"], ["--signal", "0"]):
        return []
    return _d("kill signals processes to stop")


def _killer(name: str) -> Rule:
    def rule(args: list[str], _r: Recurse) -> list[Effect]:
        if set(args) <= {"--help", "--version", "-l", "--list"} and args:
            return []
        return _d(f"{name} kills processes")

    return rule


def _subcommand(
    table: dict[str, str], value_short: str = "", value_long: Sequence[str] = ()
) -> Rule:
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


def _tmux(args: list[str], _r: Recurse) -> list[Effect]:
    return _d("tmux kills sessions or panes") if any(a.startswith("kill-") for a in args) else []


def _fuser(args: list[str], _r: Recurse) -> list[Effect]:
    return _d("fuser -k kills processes") if has_option(args, "k", ("--kill",)) else []


def _crontab(args: list[str], _r: Recurse) -> list[Effect]:
    return _d("crontab -r deletes the crontab") if has_option(args, "r") else []


_CONTAINER_DELETE = frozenset({"rm", "rmi", "kill", "prune", "down", "remove", "delete"})


def _docker(args: list[str], r: Recurse) -> list[Effect]:
    ops = operands(args, "Hc", ("--host", "--context", "--config", "--log-level"))
    if not ops:
        return []
    if ops[0] == "exec":
        rest = args[args.index("exec") + 1 :]
        inner = command_after(rest, "euw", ("--env", "--user", "--workdir", "--env-file"), 1)
        return [Effect(e.severity, f"docker exec runs: {e.reason}") for e in r.argv(inner)]
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


def _cloud(name: str) -> Rule:
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


def _packages(verbs: Sequence[str]) -> Rule:
    def rule(args: list[str], _r: Recurse) -> list[Effect]:
        ops = operands(args)
        if ops and ops[0] in verbs:
            return _d(f"{ops[0]} removes installed packages")
        return []

    return rule


_UNINSTALL = ("uninstall", "remove", "rm", "r", "un", "purge", "autoremove", "erase", "unlink")


INFRA_PROGRAMS: dict[str, Rule] = {
    "kill": _kill,
    **{name: _killer(name) for name in ("killall", "pkill", "skill", "xkill", "killall5")},
    **{name: _killer(name) for name in ("shutdown", "reboot", "halt", "poweroff")},
    "systemctl": _subcommand(_STOPS),
    "service": _service,
    "tmux": _tmux,
    "fuser": _fuser,
    "crontab": _crontab,
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
    "cargo": _packages(("uninstall",)),
    "dropdb": lambda _a, _r: _d("dropdb drops a database"),
    "dropuser": lambda _a, _r: _d("dropuser drops a database role"),
    "mysqladmin": _subcommand({"drop": "mysqladmin drop drops a database"}, "uphP"),
}
