"""``aw-lookahead eval {run,judge,report}``: fidelity evaluation on AgentWorldBench-format data."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any

from ._common import add_server_options, output_dir, world_model_from_args


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="evaluate a world model's fidelity (run, judge, report)",
        description="Fidelity evaluation: predict (run), score with an LLM judge (judge), "
        "tabulate (report). Results live in one folder; run and judge resume.",
    )
    sub = parser.add_subparsers(dest="eval_verb", metavar="STEP", required=True)

    p_run = sub.add_parser("run", help="predict every sample (resumable)")
    p_run.add_argument("--data", required=True, help="AgentWorldBench JSONL file or folder")
    p_run.add_argument("--out", required=True, help="result folder (predictions.jsonl)")
    add_server_options(p_run)
    p_run.add_argument("--concurrency", type=int, default=8, help="requests in flight")
    p_run.add_argument("--max-tokens", type=int, default=4096, help="output budget per sample")
    p_run.add_argument("--temperature", type=float, default=0.6)
    p_run.add_argument("--limit", type=int, default=None, help="only the first N samples")
    p_run.add_argument("--no-resume", action="store_true", help="start over (truncate)")
    p_run.add_argument("--no-progress", action="store_true")
    p_run.add_argument("--json", action="store_true", help="print a JSON summary")
    p_run.set_defaults(func=run)

    p_judge = sub.add_parser("judge", help="score predictions with an LLM judge (resumable)")
    p_judge.add_argument("--out", required=True, help="the result folder of `eval run`")
    p_judge.add_argument(
        "--judge-base-url",
        default=os.environ.get("AW_LOOKAHEAD_JUDGE_BASE_URL"),
        help="judge endpoint (env AW_LOOKAHEAD_JUDGE_BASE_URL)",
    )
    p_judge.add_argument(
        "--judge-model",
        default=os.environ.get("AW_LOOKAHEAD_JUDGE_MODEL"),
        help="judge model (env AW_LOOKAHEAD_JUDGE_MODEL)",
    )
    p_judge.add_argument("--judge-api-key", default=None)
    p_judge.add_argument(
        "--constraint",
        choices=("regex", "json_schema"),
        default="regex",
        help="regex: vLLM/SGLang structured_outputs (default); json_schema: OpenAI "
        "response_format for other servers",
    )
    p_judge.add_argument("--concurrency", type=int, default=8)
    p_judge.add_argument("--max-tokens", type=int, default=256)
    p_judge.add_argument("--retries", type=int, default=2, help="retries on unusable replies")
    p_judge.add_argument("--timeout", type=float, default=120.0)
    p_judge.add_argument("--no-resume", action="store_true")
    p_judge.add_argument("--no-progress", action="store_true")
    p_judge.add_argument("--json", action="store_true")
    p_judge.set_defaults(func=run)

    p_rep = sub.add_parser("report", help="tables (markdown, JSON) and plots (PNG, HTML)")
    p_rep.add_argument("--out", required=True, help="the result folder")
    p_rep.add_argument("--report-dir", default=None, help="where to write (default: --out)")
    p_rep.add_argument("--json", action="store_true", help="print the report as JSON")
    p_rep.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    step = {"run": _run, "judge": _judge, "report": _report}[args.eval_verb]
    return step(args)


def _emit(args: argparse.Namespace, summary: dict[str, Any], text: str) -> None:
    print(json.dumps(summary) if args.json else text)


def _run(args: argparse.Namespace) -> int:
    from aw_lookahead.errors import ConfigError
    from aw_lookahead.evaluation import load_samples, predict_samples

    if args.concurrency < 1:
        raise ConfigError(f"--concurrency must be >= 1, got {args.concurrency}")
    samples = load_samples(args.data, limit=args.limit)
    output_dir(args.out, "--out")

    async def go() -> Any:
        wm = world_model_from_args(
            args,
            max_tokens=args.max_tokens,
            temperature=args.temperature,
            max_concurrency=args.concurrency,
        )
        async with wm:
            await wm.resolve_model()
            return await predict_samples(
                samples,
                wm,
                args.out,
                concurrency=args.concurrency,
                progress=not args.no_progress,
                resume=not args.no_resume,
            )

    stats = asyncio.run(go())
    summary = {**stats.__dict__, "samples_per_s": round(stats.samples_per_s, 3), "out": args.out}
    _emit(
        args,
        summary,
        f"{stats.ok} predicted, {stats.failed} failed, {stats.skipped} already done "
        f"({stats.total} samples, {stats.samples_per_s:.2f} samples/s) -> {args.out}",
    )
    return 0 if stats.failed == 0 else 1


def _judge(args: argparse.Namespace) -> int:
    from aw_lookahead.errors import ConfigError
    from aw_lookahead.evaluation import LLMJudge, judge_predictions

    if not args.judge_model or not args.judge_base_url:
        raise ConfigError("pass --judge-base-url and --judge-model (or their env variables)")

    async def go() -> Any:
        judge = LLMJudge(
            args.judge_model,
            base_url=args.judge_base_url,
            api_key=args.judge_api_key,
            max_tokens=args.max_tokens,
            retries=args.retries,
            timeout=args.timeout,
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
        {**stats.__dict__, "out": args.out},
        f"{stats.ok} judged, {stats.failed} failed, {stats.skipped} already done -> {args.out}",
    )
    return 0


def _report(args: argparse.Namespace) -> int:
    from aw_lookahead.evaluation import build_report, render_markdown, write_report

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
