"""``eval report``: per-domain and overall tables, gaps to published scores, plots.

Judge scores use the published AgentWorldBench scale, ``(mean - 1) / 4 * 100``
of the per-sample mean over the five dimensions; "overall" pools all samples
(as the reference evaluation script does), not the mean of the domains. A
sample whose judge failed counts in ``n`` and ``judge_failed``, never in a
mean; a dimension scored 0 (the reference judge's "missing") is left out of
that dimension's mean, as in the reference aggregation. The gap to the
published numbers is printed only for runs under the ``official`` protocol
judged by the reference judge, with the sample count and judge model;
otherwise the report says why no gap is shown. Rule-check metrics sit beside
the judge scores, and a domain where the judge is far above the rules is
flagged.

A line that holds no record (bad JSON, no ``id``, neither ours nor the
reference script's) is skipped and counted in ``skipped_lines``, which the
report shows; a record whose fields have the wrong types (``protocol:
{"x": [1, 2]}``, a ``judge`` that is text) is a one-line error naming the
file, line and field. A UTF-8 byte-order mark is skipped; a missing file is
called missing.
"""

from __future__ import annotations

import base64
import json
from collections import Counter, defaultdict
from pathlib import Path
from statistics import mean
from typing import Any

from aw_lookahead.errors import UsageError

from ._report_schema import check_report_record
from .interop import convert_record
from .judges.reference import OWN_TEMPLATE_LABEL
from .judges.rubric import DIMENSIONS, to_published_scale
from .records import JUDGED_FILE, PREDICTIONS_FILE, scan_records

__all__ = ["PUBLISHED", "build_report", "render_markdown", "write_report"]

_ORDER = ("mcp", "search", "terminal", "swe", "android", "web", "os")
_NAMES = {"mcp": "MCP", "search": "Search", "terminal": "Terminal", "swe": "SWE",
          "android": "Android", "web": "Web", "os": "OS", "overall": "Overall"}  # fmt: skip

PUBLISHED: dict[str, dict[str, float]] = {
    name: dict(zip((*_ORDER, "overall"), values, strict=True))
    for name, values in {
        "Qwen-AgentWorld-35B-A3B": (64.79, 36.69, 53.96, 65.63, 58.17, 49.55, 65.92, 56.39),
        "Qwen-AgentWorld-397B-A17B": (68.24, 37.82, 57.73, 68.49, 60.20, 50.98, 67.89, 58.71),
        "Qwen3.5-35B-A3B": (57.87, 25.98, 46.13, 47.58, 53.18, 47.10, 56.27, 47.73),
    }.items()
}
"""Published AgentWorldBench scores (0-100) of the reference models, per domain and overall."""


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 2)


def _valid_mean(values: list[Any]) -> float | None:
    kept = [v for v in values if isinstance(v, int | float) and v != 0]
    return _round(to_published_scale(mean(kept))) if kept else None


def _summarise(recs: list[dict[str, Any]]) -> dict[str, Any]:
    judged = [r["judge"] for r in recs if isinstance(r.get("judge"), dict)]
    valid = [j for j in judged if not j.get("failed") and "total" in j]
    rules = [r["rule"] for r in recs if isinstance(r.get("rule"), dict)]
    row: dict[str, Any] = {
        "n": len(recs),
        "predicted": sum(1 for r in recs if r.get("observation") is not None),
        "judged": len(valid),
        "judge_failed": len(judged) - len(valid),
        "score": _valid_mean([j["total"] for j in valid]),
    }
    for d in DIMENSIONS:
        row[d] = _valid_mean([j.get(d, 0) for j in valid])
    row["rule_pass"] = _round(100 * mean(r["verdict"] for r in rules)) if rules else None
    row["masked_exact"] = _round(100 * mean(r["masked_exact"] for r in rules)) if rules else None
    row["line_f1"] = _round(100 * mean(r["line_f1"] for r in rules)) if rules else None
    return row


def _why_no_gap(
    recs: list[dict[str, Any]], protocols: set[str], kinds: set[str], templates: list[str]
) -> str | None:
    if not any(isinstance(r.get("judge"), dict) for r in recs):
        return "not judged yet (run `aw-lookahead eval judge`); published scores are judge scores"
    if protocols != {"official"}:
        return (
            "some predictions were made under protocol 'ours' (our renderer, trimming, parser "
            "and sampling), not the reference protocol; rerun with `eval run --protocol official`"
        )
    if kinds != {"reference"}:
        return (
            "judged with aw-lookahead's rubric judge, whose prompts, decoding and scale anchors "
            "differ from the reference judge; rejudge with `eval judge --judge-prompts "
            "<Qwen-AgentWorld checkout>` to compare with the published numbers"
        )
    if OWN_TEMPLATE_LABEL in templates:
        return (
            "the reference judge ran with our own user-message wording (no reference template "
            "was found beside its prompts); pass a full Qwen-AgentWorld checkout as "
            "--judge-prompts"
        )
    return None


def _usable(run: Path) -> tuple[Path, list[dict[str, Any]], int]:
    """The file read, its records (each type-checked) and how many lines were skipped.

    A line that is not a record (bad JSON, no ``id``, not ours nor the reference
    script's) is skipped and counted; a record of ours with a field of the wrong
    type is a one-line error naming the file, line and field.
    """
    if not run.is_dir():
        raise UsageError(
            f"{run} is missing (no such folder); run `aw-lookahead eval run --out {run}` first"
        )
    source = run / JUDGED_FILE if (run / JUDGED_FILE).exists() else run / PREDICTIONS_FILE
    if not source.exists():
        raise UsageError(
            f"{source} is missing (and so is {JUDGED_FILE}); run `aw-lookahead eval run "
            f"--out {run}` first, or point --out at the folder that holds them"
        )
    scan = scan_records(source)
    recs = []
    for rid, raw in scan.latest.items():
        rec = convert_record(raw)
        if rec is not None:
            check_report_record(rec, source=str(source), line=scan.lines[rid])
            recs.append(rec)
    return source, recs, len(scan.skipped_lines) + len(scan.latest) - len(recs)


def build_report(run_dir: str | Path) -> dict[str, Any]:
    """Aggregate ``judged.jsonl`` (else ``predictions.jsonl``) of ``run_dir`` into a dict.

    Either file may be ours or the reference script's. Gaps to the published
    scores are filled only when every record was predicted under the
    ``official`` protocol and judged by the reference judge; otherwise
    ``gap_note`` says why they are left out. Raises
    :class:`~aw_lookahead.errors.UsageError` when the folder or file is missing,
    holds no usable record, or a record has a field of the wrong type.
    """
    run = Path(run_dir)
    source, recs, skipped = _usable(run)
    if not recs:
        found = f" ({skipped} unusable lines skipped)" if skipped else ""
        raise UsageError(
            f"{source} holds no usable record{found}; expected the predictions.jsonl / "
            "judged.jsonl of `aw-lookahead eval run/judge` or of the reference script "
            "(benchmark records with 'gen', and 'failed'/'total_score' once judged); "
            f"run `aw-lookahead eval run --out {run}` first"
        )
    by_domain: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in recs:
        by_domain[str(r.get("domain", "?"))].append(r)
    domains = sorted(by_domain, key=lambda d: (_ORDER.index(d) if d in _ORDER else 99, d))
    rows = {d: _summarise(by_domain[d]) for d in domains}
    rows["overall"] = _summarise(recs)
    protocols = Counter(str(r.get("protocol", "ours")) for r in recs)
    verdicts = [r["judge"] for r in recs if isinstance(r.get("judge"), dict)]
    kinds = Counter(str(j.get("kind", "rubric")) for j in verdicts)
    models = sorted({str(j["model"]) for j in verdicts if j.get("model")})
    templates = sorted({str(j["user_template"]) for j in verdicts if j.get("user_template")})
    why = _why_no_gap(recs, set(protocols), set(kinds), templates)
    gaps: dict[str, dict[str, float]] = {}
    if why is None:
        for model, table in PUBLISHED.items():
            gaps[model] = {
                d: round(row["score"] - table[d], 2)
                for d, row in rows.items()
                if d in table and row["score"] is not None
            }
    disagree = [
        d for d, row in rows.items()
        if row["score"] is not None and row["line_f1"] is not None
        and row["score"] - row["line_f1"] >= 40
    ]  # fmt: skip
    samples = {
        d: [r["judge"]["total_100"] for r in by_domain[d]
            if (r.get("judge") or {}).get("total_100") is not None]
        for d in domains
    }  # fmt: skip
    f1 = {d: [r["rule"]["line_f1"] for r in by_domain[d] if r.get("rule")] for d in domains}
    return {
        "source": str(source),
        "protocol": dict(protocols),
        "judge": {"kinds": dict(kinds), "models": models, "user_templates": templates},
        "samples": len(recs),
        "rows": rows,
        "published": PUBLISHED,
        "gaps": gaps,
        "gap_note": why,
        "judge_rule_disagreement": disagree,
        "distributions": {"score": samples, "line_f1": f1},
        "skipped_lines": skipped,
    }


def _cell(v: Any) -> str:
    return "–" if v is None else (f"{v:.2f}" if isinstance(v, float) else str(v))


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} ({v})" for k, v in counts.items()) or "none"


def render_markdown(report: dict[str, Any]) -> str:
    """The report as markdown: labels, scores beside rule metrics, gaps or why there are none."""
    rows: dict[str, dict[str, Any]] = report["rows"]
    judge = report["judge"]
    templates = ", ".join(judge["user_templates"])
    out = [
        f"Protocol: {_counts(report['protocol'])}. Judge: {_counts(judge['kinds'])}; "
        f"model {', '.join(judge['models']) or 'not recorded'}"
        + (f"; user template {templates}" if templates else "")
        + f". Samples: {report['samples']}.",
        "",
    ]
    cols = ["n", "judged", "judge_failed", "score", *DIMENSIONS, "rule_pass", "masked_exact",
            "line_f1"]  # fmt: skip
    out += ["## Fidelity by domain (judge scores 0-100: (mean-1)/4*100; rule metrics in %)", ""]
    out.append("| domain | " + " | ".join(cols) + " |")
    out.append("|---" * (len(cols) + 1) + "|")
    for d, row in rows.items():
        out.append(f"| {_NAMES.get(d, d)} | " + " | ".join(_cell(row[c]) for c in cols) + " |")
    for d in report["judge_rule_disagreement"]:
        out.append(
            f"\nJudge and rule check disagree on {_NAMES.get(d, d)}: judge score "
            f"{rows[d]['score']:.2f} vs line F1 {rows[d]['line_f1']:.2f}%; read the judge's "
            "replies before trusting its score."
        )
    if report.get("skipped_lines"):
        out.append(
            f"\n{report['skipped_lines']} unusable lines of {report['source']} were skipped."
        )
    out += ["", "## Gap to published AgentWorldBench scores (ours − theirs)", ""]
    if report["gap_note"] is not None:
        out += [f"No gap shown: {report['gap_note']}.", ""]
        return "\n".join(out)
    shown = [d for d in rows if any(d in t for t in report["published"].values())]
    out.append("| reference model | " + " | ".join(_NAMES.get(d, d) for d in shown) + " |")
    out.append("|---" * (len(shown) + 1) + "|")
    for model, gap in report["gaps"].items():
        cells = [_cell(gap.get(d)) for d in shown]
        out.append(f"| {model} | " + " | ".join(cells) + " |")
    out += ["", f"Official protocol and reference judge (model "
            f"{', '.join(judge['models']) or 'not recorded'}) on {report['samples']} samples; "
            "the published tables use the full AgentWorldBench and a strong judge, so a "
            "subset or a weak judge moves the numbers.", ""]  # fmt: skip
    return "\n".join(out)


def _plot(report: dict[str, Any], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    dists = report["distributions"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, key, title in ((axes[0], "score", "judge score (0-100)"),
                           (axes[1], "line_f1", "rule line F1")):  # fmt: skip
        data = {d: v for d, v in dists[key].items() if v}
        if data:
            ax.hist(list(data.values()), bins=10, label=list(data), stacked=True)
            ax.legend()
        ax.set_title(title)
        ax.set_xlabel("value")
        ax.set_ylabel("samples")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def write_report(run_dir: str | Path, out_dir: str | Path | None = None) -> dict[str, Path]:
    """Write ``report.md``, ``report.json``, ``report.png`` (matplotlib) and ``report.html``."""
    report = build_report(run_dir)
    out = Path(out_dir or run_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"md": out / "report.md", "json": out / "report.json", "html": out / "report.html"}
    md = render_markdown(report)
    paths["md"].write_text(md, encoding="utf-8")
    paths["json"].write_text(json.dumps(report, indent=2), encoding="utf-8")
    img = ""
    if _plot(report, out / "report.png"):
        paths["png"] = out / "report.png"
        data = base64.b64encode(paths["png"].read_bytes()).decode()
        img = f'<img alt="score distributions" src="data:image/png;base64,{data}">'
    html = ["<!doctype html><meta charset='utf-8'><title>aw-lookahead eval report</title>",
            "<pre>", md.replace("&", "&amp;").replace("<", "&lt;"), "</pre>", img]  # fmt: skip
    paths["html"].write_text("\n".join(html), encoding="utf-8")
    return paths
