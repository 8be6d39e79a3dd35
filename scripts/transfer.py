"""Transfer: agent task success before and after warm-up, each without and with lookahead.

Four configurations of the agent task suite (``aw-lookahead eval tasks``, 36
closed-loop terminal tasks in 9 families held out from every training split):
the policy model *before* warm-up and *after* it, each without lookahead and
with it. In the unified paradigm one model plays both roles, so "with
lookahead" is self-lookahead: the same served model that acts is the world
model that gates each call. Beside them, the world-model fidelity of both
models on held-out test families (``bench/embedded_fidelity.py``'s scoring).

CPU (the defaults: the embedded SmolLM2-135M; the servers are started here,
one at a time, each stopped after its configurations)::

    python scripts/transfer.py --out runs/transfer \\
        [--fidelity-terminal DATA/terminal --fidelity-mcp DATA/mcp --fidelity-limit 130]
        [--step-limit 5] [--family F ...] [--task T ...] [--resume | --force]

"before" is the raw base (``aw-lookahead serve --local --runtime vllm
--base-only``), "after" the base with the shipped warm-up adapter merged
(``aw-lookahead serve --local --runtime vllm``; both bf16 on vLLM, so the sides
differ only in the adapter).

GPU, external endpoints (nothing is started here; one vLLM server can serve
both, the adapter as a LoRA module beside the base)::

    vllm serve Qwen/Qwen3-8B --port 8000 --enable-lora --max-lora-rank 16 \\
        --lora-modules warmup=runs/agent-warmup/adapter \\
        --enable-auto-tool-choice --tool-call-parser hermes
    python scripts/transfer.py --out runs/transfer-qwen3 \\
        --before-url http://127.0.0.1:8000/v1 --before-model Qwen/Qwen3-8B \\
        --after-url http://127.0.0.1:8000/v1 --after-model warmup \\
        --fidelity-terminal DATA/terminal --fidelity-mcp DATA/mcp --fidelity-limit 500 \\
        --policy-max-tokens 1024 --max-tokens 1024

An endpoint's key comes from ``$AW_LOOKAHEAD_API_KEY`` (never from the command
line, which the report records). ``--fidelity-from FILE`` reports a
``bench/embedded_fidelity.py --json`` result instead of measuring (its
``base``/``adapter`` are before/after).

Output (``--out`` folder): ``transfer.md`` (the tables) and ``transfer.json``
(everything, with the exact ``aw-lookahead eval tasks`` command of each
configuration), and checkpoints under ``configs/``: each configuration runs
one family at a time (``configs/<configuration>/<family>.json``), then is
written whole (``configs/<configuration>.json``; fidelity:
``fidelity-<side>.json``), so ``--resume`` after a crash runs only what is
missing. Existing output is never replaced without
``--force``. Progress lines go to stderr, the markdown to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import json
import os
import shlex
import shutil
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SIDES = ("before", "after")
CONFIGS = (("before", False), ("before", True), ("after", False), ("after", True))
FINAL_FILES = ("transfer.md", "transfer.json")
FIDELITY_KEYS = {
    "terminal": ("samples", "rule_pass", "line_f1", "outcome_agreement", "failures_caught",
                 "successes_kept"),
    "mcp": ("samples", "valid_format", "rule_pass", "outcome_agreement", "failures_caught"),
}  # fmt: skip
_FIDELITY_LABELS = {"before": "base", "after": "adapter"}  # bench/embedded_fidelity.py's names


class UsageProblem(Exception):
    """A bad option or an output that would be replaced: exit 2 with one line."""


def log(message: str) -> None:
    print(f"[transfer {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def config_name(side: str, lookahead: bool) -> str:
    return f"{side}-{'lookahead' if lookahead else 'plain'}"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--out", required=True, type=Path, help="output folder")
    p.add_argument("--force", action="store_true", help="replace earlier output in --out")
    p.add_argument("--resume", action="store_true", help="keep finished configurations")
    for side in SIDES:
        p.add_argument(f"--{side}-url", default=None, help=f"{side} endpoint (default: local)")
        p.add_argument(f"--{side}-model", default=None, help=f"{side} served model name")
    p.add_argument("--step-limit", type=int, default=5, help="policy calls per task (default 5)")
    p.add_argument("--policy-max-tokens", type=int, default=128, help="tokens per policy reply")
    p.add_argument("--max-tokens", type=int, default=192, help="tokens per prediction")
    p.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        help="seconds per request (default %(default)s: a loaded CPU decodes ~1 token/s)",
    )
    p.add_argument("--family", action="append", default=[], help="only this family (repeatable)")
    p.add_argument("--task", action="append", default=[], help="only this task (repeatable)")
    p.add_argument("--fidelity-terminal", type=Path, help="terminal dataset folder (test.jsonl)")
    p.add_argument("--fidelity-mcp", type=Path, help="MCP dataset folder (test.jsonl)")
    p.add_argument("--fidelity-limit", type=int, default=130, help="samples per domain")
    p.add_argument("--fidelity-concurrency", type=int, default=4)
    p.add_argument("--fidelity-from", type=Path, help="an embedded_fidelity.py --json result")
    args = p.parse_args(argv)
    validate(args)
    return args


def validate(args: argparse.Namespace) -> None:
    """Raise :class:`UsageProblem` for options that cannot work together."""
    if args.force and args.resume:
        raise UsageProblem("--force and --resume exclude each other")
    for side in SIDES:
        url, model = getattr(args, f"{side}_url"), getattr(args, f"{side}_model")
        if (url is None) != (model is None):
            raise UsageProblem(
                f"--{side}-url and --{side}-model go together (the model name is the world "
                "model's too, so it cannot be guessed); give both, or neither for the local model"
            )
    for option in ("step_limit", "policy_max_tokens", "max_tokens", "fidelity_limit",
                   "fidelity_concurrency"):  # fmt: skip
        if getattr(args, option) < 1:
            raise UsageProblem(f"--{option.replace('_', '-')} must be >= 1")
    if args.timeout <= 0:
        raise UsageProblem("--timeout must be > 0")
    measure = args.fidelity_terminal is not None or args.fidelity_mcp is not None
    if args.fidelity_from is not None:
        if measure:
            raise UsageProblem(
                "--fidelity-from reports earlier numbers; drop --fidelity-terminal/-mcp"
            )
        if not args.fidelity_from.is_file():
            raise UsageProblem(f"--fidelity-from {args.fidelity_from} does not exist")
    for option in ("fidelity_terminal", "fidelity_mcp"):
        folder = getattr(args, option)
        if folder is not None and not (folder / "test.jsonl").is_file():
            raise UsageProblem(f"--{option.replace('_', '-')} {folder} has no test.jsonl")
    from aw_lookahead.errors import ConfigError
    from aw_lookahead.evaluation.agent_tasks import select_tasks

    try:
        select_tasks(args.family, args.task)
    except ConfigError as exc:
        raise UsageProblem(str(exc)) from exc


def prepare_out(out: Path, *, force: bool, resume: bool) -> None:
    """Make ``out`` ready: refuse to replace anything without ``force``; ``resume`` keeps
    checkpoints but refuses a finished run; ``force`` clears earlier checkpoints."""
    if out.exists() and not out.is_dir():
        raise UsageProblem(f"--out {out} is a file; give a folder")
    checkpoints = out / "configs"
    finals = [out / name for name in FINAL_FILES if (out / name).exists()]
    kept = sorted(checkpoints.rglob("*.json")) if checkpoints.is_dir() else []
    if force:
        if checkpoints.is_dir():
            shutil.rmtree(checkpoints)
    elif finals:
        raise UsageProblem(f"--out: {finals[0]} exists (a finished run); pass --force to replace")
    elif kept and not resume:
        raise UsageProblem(
            f"--out: {kept[0]} exists (an unfinished run); pass --resume to continue it "
            "or --force to start again"
        )
    checkpoints.mkdir(parents=True, exist_ok=True)


def settings(args: argparse.Namespace) -> dict[str, Any]:
    """What makes two runs comparable; a checkpoint is kept only under the same settings."""
    from aw_lookahead.evaluation.agent_tasks import select_tasks

    return {
        "step_limit": args.step_limit,
        "policy_max_tokens": args.policy_max_tokens,
        "max_tokens": args.max_tokens,
        "timeout": args.timeout,
        "tasks": len(select_tasks(args.family, args.task)),
        "families": args.family,
        "task_names": args.task,
        "fidelity": [str(args.fidelity_terminal), str(args.fidelity_mcp), args.fidelity_limit]
        if args.fidelity_terminal or args.fidelity_mcp
        else None,
        "endpoints": {
            side: [getattr(args, f"{side}_url") or "local", getattr(args, f"{side}_model")]
            for side in SIDES
        },
    }


def check_checkpoints(args: argparse.Namespace) -> None:
    """Refuse to resume from checkpoints written under other settings. Fidelity is apart:
    its checkpoints count only when fidelity is measured, so it can be added to a run later."""
    now = settings(args)
    for path in sorted((args.out / "configs").rglob("*.json")):
        kept = load_checkpoint(path)
        if kept is None or "settings" not in kept:
            continue
        if path.name.startswith("fidelity-"):
            if now["fidelity"] is None:
                continue
            keys = ["fidelity", "max_tokens", "endpoints"]
        else:
            keys = [k for k in now if k != "fidelity"]
        changed = sorted(k for k in keys if kept["settings"].get(k) != now[k])
        if changed:
            raise UsageProblem(
                f"--resume: {path} was run with other {', '.join(changed)}; pass the same "
                "options, or --force to start again"
            )


def tasks_argv(
    args: argparse.Namespace,
    url: str,
    model: str,
    lookahead: bool,
    report: Path,
    names: list[str] | None = None,
) -> list[str]:
    """The ``aw-lookahead eval tasks`` arguments of one configuration (self-lookahead: the
    world model is the policy's own endpoint and name); ``names`` runs just those tasks
    instead of the ``--family``/``--task`` selection."""
    argv = ["eval", "tasks", "--policy-base-url", url, "--policy-model", model,
            "--base-url", url, "--model", model, "--step-limit", str(args.step_limit),
            "--policy-max-tokens", str(args.policy_max_tokens),
            "--timeout", str(args.timeout)]  # fmt: skip
    if lookahead:
        argv += ["--lookahead", "--max-tokens", str(args.max_tokens)]
    for family in [] if names is not None else args.family:
        argv += ["--family", family]
    for task in args.task if names is None else names:
        argv += ["--task", task]
    return [*argv, "--out", str(report), "--force", "--json"]


def family_counts(results: list[dict[str, Any]]) -> dict[str, list[int]]:
    """``{family: [succeeded, tasks]}`` in the suite's order."""
    counts: dict[str, list[int]] = {}
    for r in results:
        pair = counts.setdefault(r["family"], [0, 0])
        pair[0] += int(r["success"])
        pair[1] += 1
    return counts


def config_record(
    name: str, side: str, lookahead: bool, command: list[str], results: list[dict[str, Any]]
) -> dict[str, Any]:
    """One configuration's row from its task results (the verb's report ``results``): the
    verb's summary numbers plus model calls, commands run, families and error examples."""
    succeeded = sum(bool(r["success"]) for r in results)
    errors = [r["error"] for r in results if r.get("error")]
    return {
        "name": name,
        "side": side,
        "lookahead": lookahead,
        "command": "aw-lookahead " + shlex.join(command),
        "tasks": len(results),
        "succeeded": succeeded,
        "success_rate": round(succeeded / len(results), 4) if results else 0.0,
        "vetoes": sum(r["vetoes"] for r in results),
        "errors": len(errors),
        "model_calls": sum(r["model_calls"] for r in results),
        "commands_run": sum(len(r["commands"]) for r in results),
        "seconds": round(sum(r["seconds"] for r in results), 1),
        "families": family_counts(results),
        "error_examples": list(dict.fromkeys(e[:160] for e in errors))[:3],
        "results": results,
    }


def run_chunk(
    args: argparse.Namespace, name: str, family: str, argv: list[str], partial: Path
) -> dict[str, Any]:
    """One family of one configuration through ``aw-lookahead eval tasks``, checkpointed."""
    from aw_lookahead.cli import main as cli_main

    log(f"{name} / {family}: aw-lookahead {shlex.join(argv)}")
    load = os.getloadavg()[0]
    started = time.monotonic()
    with contextlib.redirect_stdout(sys.stderr):
        rc = cli_main(argv)
    if rc == 130:
        raise KeyboardInterrupt
    if rc != 0:
        raise RuntimeError(f"{name} / {family}: aw-lookahead eval tasks exited {rc} (see above)")
    report = json.loads(partial.read_text(encoding="utf-8"))
    chunk = {
        "settings": settings(args),
        "results": report["results"],
        "wall_seconds": round(time.monotonic() - started, 1),
        "load_average": [round(load, 2), round(os.getloadavg()[0], 2)],
        "finished": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    write_json(partial.with_name(f"{family}.json"), chunk)
    partial.unlink()
    return chunk


def run_config(
    args: argparse.Namespace, side: str, lookahead: bool, url: str, model: str
) -> dict[str, Any]:
    """Run one configuration, one family at a time (each family a checkpoint, so a crash
    loses at most one family's tasks), and checkpoint the whole configuration."""
    from aw_lookahead.evaluation.agent_tasks import select_tasks

    name = config_name(side, lookahead)
    folder = args.out / "configs" / name
    folder.mkdir(parents=True, exist_ok=True)
    tasks = select_tasks(args.family, args.task)
    chunks = []
    for family in dict.fromkeys(t.family for t in tasks):
        kept = load_checkpoint(folder / f"{family}.json")
        if kept is not None:
            log(f"{name} / {family}: kept from an earlier run")
            chunks.append(kept)
            continue
        partial = folder / f"{family}.partial.json"
        names = [t.name for t in tasks if t.family == family]
        argv = tasks_argv(args, url, model, lookahead, partial, names)
        chunks.append(run_chunk(args, name, family, argv, partial))
    suite = tasks_argv(args, url, model, lookahead, Path(f"{name}.json"))
    public = [a for a in suite if a != "--force"]
    record = config_record(name, side, lookahead, public, [r for c in chunks for r in c["results"]])
    record["run_as"] = "one `eval tasks` run per family (--task for each of its tasks)"
    record["wall_seconds"] = round(sum(c["wall_seconds"] for c in chunks), 1)
    loads = [x for c in chunks for x in c["load_average"]]
    record["load_average"] = [min(loads), max(loads)]
    record["settings"] = settings(args)
    write_json(args.out / "configs" / f"{name}.json", record)
    log(f"{name}: {record['succeeded']}/{record['tasks']} succeeded, "
        f"{record['model_calls']} model calls, {record['vetoes']} vetoes, "
        f"{record['errors']} errors, {record['wall_seconds']:.0f} s")  # fmt: skip
    return record


def write_json(path: Path, obj: Any) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(obj, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)


def load_checkpoint(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]
    except (OSError, ValueError):
        return None


@contextlib.contextmanager
def endpoint(args: argparse.Namespace, side: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``(base_url, model, description)`` of one side: the given endpoint, or a local
    embedded server (raw base before, merged adapter after) for as long as the block runs."""
    url, model = getattr(args, f"{side}_url"), getattr(args, f"{side}_model")
    if url is not None:
        yield url, model, {"endpoint": url, "model": model, "role": model, "started_here": False}
        return
    from aw_lookahead.embedded import embedded_adapter
    from aw_lookahead.serving.embedded_server import start_embedded_server

    base_only = side == "before"
    log(f"{side}: starting the embedded server ({'raw base' if base_only else 'merged adapter'})")
    server = start_embedded_server(  # both sides bf16 (llama.cpp's raw base is Q4_1)
        runtime="vllm",
        base_only=base_only,
        log_path=args.out / f"server-{side}.log",
        progress=lambda line: log(f"{side}: {line}"),
    )
    info: dict[str, Any] = {
        "endpoint": "local",
        "model": server.model,
        "role": "raw base" if base_only else "base + shipped adapter, merged",
        "started_here": True,
        "serve": "aw-lookahead serve --local --runtime vllm" + (" --base-only" * base_only),
        "folder": server.command()[server.command().index("--model") + 1],
    }
    if not base_only:
        adapter = embedded_adapter()
        info["adapter_sha256"] = adapter.sha256
        info["adapter_placeholder"] = adapter.placeholder
    try:
        yield server.base_url, server.model, info
    finally:
        server.stop()
        log(f"{side}: server stopped")


def run_fidelity(args: argparse.Namespace, side: str, url: str, model: str) -> dict[str, Any]:
    """Score one served model with ``bench/embedded_fidelity.py``'s functions; checkpointed."""
    sys.path.insert(0, str(ROOT / "bench"))
    import embedded_fidelity as ef

    folders = {"terminal": args.fidelity_terminal, "mcp": args.fidelity_mcp}
    samples = {d: ef.split_samples(f, args.fidelity_limit, "test") for d, f in folders.items() if f}
    options = argparse.Namespace(max_tokens=args.max_tokens, concurrency=args.fidelity_concurrency,
                                 prompt_profile="auto", history_tokens=0)  # fmt: skip
    result: dict[str, Any] = {"models": {}, "domains": {}}
    started = time.monotonic()
    log(f"{side}: fidelity on {', '.join(f'{len(v)} {k}' for k, v in samples.items())} samples")
    asyncio.run(ef.run_model(options, side, model, url, samples, result))
    record = {
        "side": side,
        "settings": settings(args),
        "domains": {d: by_label[side] for d, by_label in result["domains"].items()},
        "wall_seconds": round(time.monotonic() - started, 1),
    }
    write_json(args.out / "configs" / f"fidelity-{side}.json", record)
    return record


def fidelity_command(args: argparse.Namespace) -> str:
    parts = ["python", "bench/embedded_fidelity.py"]
    if args.fidelity_terminal:
        parts += ["--terminal", str(args.fidelity_terminal)]
    if args.fidelity_mcp:
        parts += ["--mcp", str(args.fidelity_mcp)]
    parts += ["--limit", str(args.fidelity_limit), "--concurrency", str(args.fidelity_concurrency),
              "--max-tokens", str(args.max_tokens), "--history-tokens", "0"]  # fmt: skip
    return shlex.join(parts)


def fidelity_from_file(path: Path) -> dict[str, Any]:
    """An ``embedded_fidelity.py --json`` result as ``{domain: {before, after}}``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        domains = {
            domain: {side: by_label[label] for side, label in _FIDELITY_LABELS.items()}
            for domain, by_label in data["domains"].items()
        }
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageProblem(
            f"--fidelity-from {path}: not an embedded_fidelity.py --json result ({exc})"
        ) from exc
    return {"source": str(path), "domains": domains}


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def render_markdown(report: dict[str, Any]) -> str:
    """The tables of a report (``transfer.json``'s content) as markdown."""
    settings = report["settings"]
    lines = [
        f"Transfer, {report['created']} (step limit {settings['step_limit']}, "
        f"{settings['tasks']} tasks, load average {report['load_average'][0]:.2f} at the "
        f'start, {report["load_average"][1]:.2f} at the end). "with lookahead" is '
        "self-lookahead: the same served model acts and, as the world model, gates each call.",
        "",
        "| policy | lookahead | solved | success | model calls | commands run | vetoes "
        "| runs with errors | minutes |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    configs = report["configs"]
    for c in configs:
        info = report["models"][c["side"]]
        model = info.get("role", info["model"])
        lines.append(
            f"| {c['side']} ({model}) | {'self' if c['lookahead'] else 'no'} | "
            f"{c['succeeded']}/{c['tasks']} | {_pct(c['success_rate'])} | {c['model_calls']} | "
            f"{c['commands_run']} | {c['vetoes']} | {c['errors']} | "
            f"{c['wall_seconds'] / 60:.1f} |"
        )
    if configs:
        families = list(configs[0]["families"])
        lines += ["", "| family | " + " | ".join(c["name"] for c in configs) + " |",
                  "|---|" + "---|" * len(configs)]  # fmt: skip
        for family in families:
            cells = [("{}/{}".format(*c["families"][family]) if family in c["families"] else "")
                     for c in configs]  # fmt: skip
            lines.append(f"| {family} | " + " | ".join(cells) + " |")
    fidelity = report.get("fidelity")
    lines.append("")
    if not fidelity:
        lines.append("World-model fidelity: not measured in this run.")
    else:
        lines += [f"World-model fidelity on held-out test families ({fidelity['source']}):", "",
                  "| domain | metric | before | after |", "|---|---|---|---|"]  # fmt: skip
        for domain, by_side in fidelity["domains"].items():
            for key in FIDELITY_KEYS.get(domain, ()):
                values = [by_side.get(side, {}).get(key) for side in SIDES]
                text = [str(v) if key == "samples" else _pct(v) for v in values]
                lines.append(f"| {domain} | {key} | {text[0]} | {text[1]} |")
    lines += ["", "Commands:", ""]
    lines += [f"- {c['name']}: `{c['command']}`" for c in configs]
    for side in SIDES:
        serve = report["models"][side].get("serve")
        if serve:
            lines.append(f"- {side} server: `{serve}`")
    if fidelity and fidelity.get("command"):
        lines.append(
            f"- fidelity, scored the same way by scripts/transfer.py: `{fidelity['command']}`"
        )
    return "\n".join(lines) + "\n"


def measure(args: argparse.Namespace) -> dict[str, Any]:
    load_start = os.getloadavg()[0]
    started = time.monotonic()
    checkpoints = args.out / "configs"
    measure_fidelity = bool(args.fidelity_terminal or args.fidelity_mcp)
    records: dict[str, dict[str, Any]] = {}
    fidelity: dict[str, dict[str, Any]] = {}
    models: dict[str, dict[str, Any]] = {}
    for side in SIDES:
        todo = []
        for s, lookahead in CONFIGS:
            name = config_name(s, lookahead)
            if s != side:
                continue
            done = load_checkpoint(checkpoints / f"{name}.json")
            if done is not None:
                log(f"{name}: kept from an earlier run ({done['succeeded']}/{done['tasks']})")
                records[name] = done
            else:
                todo.append(lookahead)
        kept_fid = (
            load_checkpoint(checkpoints / f"fidelity-{side}.json") if measure_fidelity else None
        )
        if kept_fid is not None:
            fidelity[side] = kept_fid
        need_fid = measure_fidelity and kept_fid is None
        side_info = load_checkpoint(checkpoints / f"model-{side}.json")
        if not todo and not need_fid and side_info is not None:
            models[side] = {k: v for k, v in side_info.items() if k != "settings"}
            continue
        with endpoint(args, side) as (url, model, info):
            write_json(checkpoints / f"model-{side}.json", {**info, "settings": settings(args)})
            models[side] = info
            for lookahead in todo:
                records[config_name(side, lookahead)] = run_config(
                    args, side, lookahead, url, model
                )
            if need_fid:
                fidelity[side] = run_fidelity(args, side, url, model)
    report: dict[str, Any] = {
        "created": dt.date.today().isoformat(),
        "settings": settings(args),
        "load_average": [round(load_start, 2), round(os.getloadavg()[0], 2)],
        "wall_seconds": round(time.monotonic() - started, 1),
        "models": models,
        "configs": [records[config_name(s, la)] for s, la in CONFIGS],
    }
    if args.fidelity_from is not None:
        report["fidelity"] = fidelity_from_file(args.fidelity_from)
    elif fidelity:
        report["fidelity"] = {
            "source": "measured in this run",
            "command": fidelity_command(args),
            "domains": {
                domain: {side: f["domains"][domain] for side, f in fidelity.items()}
                for domain in dict.fromkeys(d for f in fidelity.values() for d in f["domains"])
            },
        }
    return report


def _stop_cleanly() -> None:
    """SIGTERM and SIGINT end the run through ``finally`` blocks, so a local server is
    stopped; a background job (``&``, ``nohup``) otherwise ignores SIGINT and dies on SIGTERM
    without them."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupt)
    signal.signal(signal.SIGINT, interrupt)


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(argv)
        if args.fidelity_from is not None:
            fidelity_from_file(args.fidelity_from)  # a bad file fails before hours of work
        prepare_out(args.out, force=args.force, resume=args.resume)
        check_checkpoints(args)
    except UsageProblem as exc:
        print(f"transfer.py: error: {exc}", file=sys.stderr)
        return 2
    _stop_cleanly()
    try:
        report = measure(args)
    except KeyboardInterrupt:
        log(f"interrupted; finished families are kept: rerun with --resume --out {args.out}")
        return 130
    markdown = render_markdown(report)
    write_json(args.out / "transfer.json", report)
    (args.out / "transfer.md").write_text(markdown, encoding="utf-8")
    sys.stdout.write(markdown)
    log(f"done in {report['wall_seconds'] / 60:.1f} min: {args.out / 'transfer.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
