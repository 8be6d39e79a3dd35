"""``aw-lookahead eval {run,judge,report}``: fidelity evaluation on AgentWorldBench-format data."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from aw_lookahead.evaluation.official import (
    PROTOCOLS,
    REFERENCE_MAX_TOKENS,
    REFERENCE_RETRIES,
    REFERENCE_TEMPERATURE,
    REFERENCE_TIMEOUT_S,
)
from aw_lookahead.evaluation.records import TEST_PATTERN

from ._common import (
    add_judge_options,
    add_prompts_option,
    add_server_options,
    output_dir,
    prompts_from_args,
    world_model_from_args,
)
from .calibrate import register_calibrate
from .eval_tasks import register_tasks

OURS_MAX_TOKENS = 4096
OURS_TIMEOUT_S = 60.0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="evaluate a world model's fidelity (run, judge, report, export)",
        description="Fidelity evaluation: predict (run), score with an LLM judge (judge), "
        "tabulate (report), write files for the reference script (export). Results live in "
        "one folder; run and judge resume. Files of the reference AgentWorldBench script "
        "are read as well.",
    )
    sub = parser.add_subparsers(dest="eval_verb", metavar="STEP", required=True)
    register_calibrate(sub)
    register_tasks(sub)

    p_run = sub.add_parser("run", help="predict every sample (resumable)")
    p_run.add_argument("--data", required=True, help="AgentWorldBench JSONL file or folder")
    p_run.add_argument(
        "--pattern",
        default=TEST_PATTERN,
        help="files read from a --data folder (default %(default)s, as the reference script)",
    )
    p_run.add_argument("--out", required=True, help="result folder (predictions.jsonl)")
    add_server_options(p_run)
    p_run.set_defaults(timeout=None)
    add_prompts_option(p_run)
    p_run.add_argument(
        "--protocol",
        choices=("auto", *PROTOCOLS),
        default="auto",
        help="official: the reference script's messages, request body, parser and failure "
        "rules; ours: our renderer, context trimming, parser and sampling; auto (default): "
        "official for AgentWorldBench records, ours for trajectories",
    )
    p_run.add_argument("--concurrency", type=int, default=8, help="requests in flight")
    p_run.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        help=f"output budget per sample (default: {REFERENCE_MAX_TOKENS} official, "
        f"{OURS_MAX_TOKENS} ours)",
    )
    p_run.add_argument("--temperature", type=float, default=REFERENCE_TEMPERATURE)
    p_run.add_argument(
        "--retries",
        type=int,
        default=REFERENCE_RETRIES,
        help="client retries on connection errors, 429 and 5xx (default %(default)s)",
    )
    p_run.add_argument("--limit", type=int, default=None, help="only the first N samples")
    p_run.add_argument("--no-resume", action="store_true", help="start over (truncate)")
    p_run.add_argument(
        "--append",
        action="store_true",
        help="add to an --out predictions.jsonl that another run wrote (other data, protocol "
        "or model, or not an `eval run` file); refused without it",
    )
    p_run.add_argument("--no-progress", action="store_true")
    p_run.add_argument("--json", action="store_true", help="print a JSON summary")
    p_run.set_defaults(func=run)

    p_judge = sub.add_parser("judge", help="score predictions with an LLM judge (resumable)")
    p_judge.add_argument("--out", required=True, help="the result folder of `eval run`")
    add_judge_options(p_judge)
    p_judge.add_argument(
        "--judge",
        choices=("auto", "rubric", "reference"),
        default="auto",
        help="rubric: our five-dimension rubric, constrained JSON; reference: the reference "
        "judge prompts, layout, parser, sampling and retries (needs --judge-prompts); auto "
        "(default): reference when --judge-prompts is given",
    )
    p_judge.add_argument(
        "--judge-prompts",
        default=None,
        help="a Qwen-AgentWorld checkout (or its prompts/ folder) holding "
        "<domain>/judge_system_prompt.txt",
    )
    p_judge.add_argument(
        "--constraint",
        choices=("regex", "json_schema"),
        default="regex",
        help="rubric judge: regex = vLLM/SGLang structured_outputs (default); json_schema = "
        "OpenAI response_format for other servers",
    )
    p_judge.add_argument("--concurrency", type=int, default=8)
    p_judge.add_argument(
        "--max-tokens", type=int, default=None, help="default 256 rubric, 32768 reference"
    )
    p_judge.add_argument(
        "--temperature", type=float, default=None, help="default 0.0 rubric, 0.6 reference"
    )
    p_judge.add_argument(
        "--retries",
        type=int,
        default=None,
        help="new attempts after an unusable reply (default 2 rubric; reference: 3 attempts "
        "in all)",
    )
    p_judge.add_argument("--timeout", type=float, default=None, help="default 120 s rubric, 600 s")
    p_judge.add_argument("--no-resume", action="store_true")
    p_judge.add_argument("--no-progress", action="store_true")
    p_judge.add_argument("--json", action="store_true")
    p_judge.set_defaults(func=run)

    p_rep = sub.add_parser("report", help="tables (markdown, JSON) and plots (PNG, HTML)")
    p_rep.add_argument("--out", required=True, help="the result folder")
    p_rep.add_argument("--report-dir", default=None, help="where to write (default: --out)")
    p_rep.add_argument("--json", action="store_true", help="print the report as JSON")
    p_rep.set_defaults(func=run)

    p_exp = sub.add_parser("export", help="write a run's files for the reference script")
    p_exp.add_argument("--out", required=True, help="the result folder")
    p_exp.add_argument("--to", required=True, help="folder for the exported files")
    p_exp.add_argument(
        "--format",
        choices=("reference",),
        default="reference",
        help="reference: predictions.jsonl / judged.jsonl that `eval.py judge/score` read",
    )
    p_exp.add_argument("--force", action="store_true", help="replace files already in --to")
    p_exp.add_argument("--json", action="store_true")
    p_exp.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    step = {"run": _run, "judge": _judge, "report": _report, "export": _export}[args.eval_verb]
    return step(args)


def _emit(args: argparse.Namespace, summary: dict[str, Any], text: str) -> None:
    print(json.dumps(summary) if args.json else text)


def _inputs(args: argparse.Namespace, samples: list[Any], protocol: str) -> dict[str, Any]:
    """Every sample of --data by id (not only the --limit first), after refusing another
    run's --out file before any server is contacted (the served model is compared later,
    once known)."""
    from pathlib import Path

    from aw_lookahead.evaluation.records import (
        PREDICTIONS_FILE,
        load_samples,
        scan_records,
        unique_ids,
    )
    from aw_lookahead.evaluation.runner import refuse_foreign_run

    every = samples if args.limit is None else load_samples(args.data, pattern=args.pattern)
    by_id = dict(zip(unique_ids(every), every, strict=True))
    if not args.no_resume and not args.append:
        path = Path(args.out) / PREDICTIONS_FILE
        refuse_foreign_run(path, scan_records(path), protocol=protocol, model=None, samples=by_id)
    return by_id


def _run(args: argparse.Namespace) -> int:
    from aw_lookahead.errors import ConfigError
    from aw_lookahead.evaluation.official import OfficialModel, default_protocol
    from aw_lookahead.evaluation.records import load_samples
    from aw_lookahead.evaluation.runner import predict_samples

    if args.concurrency < 1:
        raise ConfigError(f"--concurrency must be >= 1, got {args.concurrency}")
    samples = load_samples(args.data, limit=args.limit, pattern=args.pattern)
    protocol = default_protocol(samples) if args.protocol == "auto" else args.protocol
    official = protocol == "official"
    max_tokens = args.max_tokens or (REFERENCE_MAX_TOKENS if official else OURS_MAX_TOKENS)
    timeout = args.timeout or (REFERENCE_TIMEOUT_S if official else OURS_TIMEOUT_S)
    output_dir(args.out, "--out")
    if args.append and args.no_resume:
        raise ConfigError("--append adds to the --out file, --no-resume replaces it: pick one")
    inputs = _inputs(args, samples, protocol)

    async def go() -> Any:
        model: Any
        if official:
            model = OfficialModel(
                args.model,
                base_url=args.base_url,
                api_key=args.api_key,
                max_tokens=max_tokens,
                temperature=args.temperature,
                timeout=timeout,
                retries=args.retries,
                prompts=prompts_from_args(args),
            )
        else:
            model = world_model_from_args(
                args,
                max_tokens=max_tokens,
                temperature=args.temperature,
                max_concurrency=args.concurrency,
                timeout=timeout,
                retries=args.retries,
            )
        async with model:
            await model.resolve_model()
            served = model.served
            context = served.context_tokens if served is not None else None
            if context is not None and max_tokens >= context:
                raise ConfigError(
                    f"--max-tokens {max_tokens} does not fit the server's {context}-token "
                    "context: the server would refuse every request (the reference script "
                    f"would score every sample failed); pass --max-tokens below {context}"
                )
            return await predict_samples(
                samples,
                model,
                args.out,
                concurrency=args.concurrency,
                progress=not args.no_progress,
                resume=not args.no_resume,
                append=args.append,
                inputs=inputs,
            )

    stats = asyncio.run(go())
    summary = {
        **stats.__dict__,
        "samples_per_s": round(stats.samples_per_s, 3),
        "protocol": protocol,
        "max_tokens": max_tokens,
        "out": args.out,
    }
    _emit(
        args,
        summary,
        f"protocol {protocol}: {stats.ok} predicted, {stats.failed} failed, {stats.skipped} "
        f"already done ({stats.total} samples, {stats.samples_per_s:.2f} samples/s) -> {args.out}",
    )
    return 0 if stats.failed == 0 else 1


def _judge(args: argparse.Namespace) -> int:
    from aw_lookahead.errors import ConfigError
    from aw_lookahead.evaluation import RubricJudge
    from aw_lookahead.evaluation.judge_run import judge_predictions
    from aw_lookahead.evaluation.judges.reference import (
        ReferenceJudge,
        load_reference_judge_prompts,
    )

    if not args.judge_model or not args.judge_base_url:
        raise ConfigError("pass --judge-base-url and --judge-model (or their env variables)")
    kind = args.judge
    if kind == "auto":
        kind = "reference" if args.judge_prompts else "rubric"
    if kind == "reference" and not args.judge_prompts:
        raise ConfigError(
            "--judge reference needs --judge-prompts: a Qwen-AgentWorld checkout (or its "
            "prompts/ folder) with <domain>/judge_system_prompt.txt"
        )

    async def go() -> Any:
        judge: Any
        if kind == "reference":
            judge = ReferenceJudge(
                args.judge_model,
                load_reference_judge_prompts(args.judge_prompts),
                base_url=args.judge_base_url,
                api_key=args.judge_api_key,
                max_tokens=args.max_tokens or REFERENCE_MAX_TOKENS,
                temperature=(
                    REFERENCE_TEMPERATURE if args.temperature is None else args.temperature
                ),
                attempts=3 if args.retries is None else args.retries + 1,
                timeout=args.timeout or REFERENCE_TIMEOUT_S,
            )
        else:
            judge = RubricJudge(
                args.judge_model,
                base_url=args.judge_base_url,
                api_key=args.judge_api_key,
                max_tokens=args.max_tokens or 256,
                temperature=0.0 if args.temperature is None else args.temperature,
                retries=2 if args.retries is None else args.retries,
                timeout=args.timeout or 120.0,
                constraint=args.constraint,
            )
        try:
            return await judge_predictions(
                args.out,
                judge,
                concurrency=args.concurrency,
                progress=not args.no_progress,
                resume=not args.no_resume,
            )
        finally:
            await judge.aclose()

    stats = asyncio.run(go())
    _emit(
        args,
        {**stats.__dict__, "judge": kind, "out": args.out},
        f"{kind} judge: {stats.ok} judged, {stats.failed} failed, {stats.skipped} already "
        f"done -> {args.out}",
    )
    return 0


def _export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from aw_lookahead.evaluation.interop import export_reference
    from aw_lookahead.evaluation.records import JUDGED_FILE, PREDICTIONS_FILE

    from ._common import refuse_to_replace

    if not args.force:
        to = Path(args.to)
        refuse_to_replace([to / PREDICTIONS_FILE, to / JUDGED_FILE], "--to")
    paths = export_reference(args.out, args.to)
    files = {k: str(v) for k, v in paths.items()}
    _emit(args, {"format": args.format, "files": files}, "written: " + ", ".join(files.values()))
    return 0


def _report(args: argparse.Namespace) -> int:
    from aw_lookahead.evaluation.report import build_report, render_markdown, write_report

    if args.report_dir is not None:
        output_dir(args.report_dir, "--report-dir")
    paths = write_report(args.out, args.report_dir)
    report = build_report(args.out)
    if report["skipped_lines"]:
        print(
            f"aw-lookahead eval: warning: skipped {report['skipped_lines']} unusable lines of "
            f"{report['source']} (bad JSON or records of the wrong shape)",
            file=sys.stderr,
        )
    if args.json:
        print(json.dumps({**report, "files": {k: str(v) for k, v in paths.items()}}))
    else:
        print(render_markdown(report))
        print("written: " + ", ".join(str(p) for p in paths.values()))
    return 0
