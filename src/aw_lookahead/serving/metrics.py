"""Read a vLLM server's Prometheus ``/metrics``: prefix-cache hit rate, queue, TTFT.

vLLM V1 counts prefix-cache *queries* and *hits* in tokens
(``vllm:prefix_cache_queries`` / ``vllm:prefix_cache_hits``, exposed with a
``_total`` suffix by the Prometheus client; both spellings are read). The
hit rate of a run is Δhits / Δqueries between two snapshots taken around it:
:meth:`ServingMetrics.since` computes that difference, so benchmarks report
the hit rate of *their* run rather than the server's lifetime.

Values of several label sets (engines, models) are summed, unless ``model``
selects one ``model_name``. Metrics a server does not expose stay ``None``
(e.g. a non-vLLM server), and the hit rate is ``None`` when nothing was
queried. No Prometheus client library is needed.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import httpx

from aw_lookahead._sync import run_sync
from aw_lookahead.errors import ServerError, ServerUnreachableError, WorldModelTimeoutError

__all__ = [
    "ServingMetrics",
    "fetch_metrics",
    "fetch_metrics_sync",
    "metrics_url",
    "parse_metrics",
]

_SAMPLE = re.compile(r"^([A-Za-z_:][A-Za-z0-9_:]*)(\{.*\})?\s+(\S+)")
_LABEL = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"')

# field name -> metric name without the "vllm:" prefix and without "_total"
_FIELDS: dict[str, str] = {
    "prefix_cache_queries": "prefix_cache_queries",
    "prefix_cache_hits": "prefix_cache_hits",
    "requests_running": "num_requests_running",
    "requests_waiting": "num_requests_waiting",
    "kv_cache_usage": "kv_cache_usage_perc",
    "prompt_tokens": "prompt_tokens",
    "generation_tokens": "generation_tokens",
    "ttft_count": "time_to_first_token_seconds_count",
    "ttft_sum": "time_to_first_token_seconds_sum",
    "requests_finished": "request_success",
}
_COUNTERS = frozenset(
    {
        "prefix_cache_queries",
        "prefix_cache_hits",
        "prompt_tokens",
        "generation_tokens",
        "ttft_count",
        "ttft_sum",
        "requests_finished",
    }
)
_BY_METRIC = {metric: name for name, metric in _FIELDS.items()}


@dataclass(frozen=True)
class ServingMetrics:
    """One snapshot (or, after :meth:`since`, the counters' change over a run).

    Counters: ``prefix_cache_queries`` / ``prefix_cache_hits`` (tokens),
    ``prompt_tokens``, ``generation_tokens``, ``ttft_count`` / ``ttft_sum``
    (seconds), ``requests_finished``. Gauges: ``requests_running``,
    ``requests_waiting``, ``kv_cache_usage`` (0..1).
    """

    prefix_cache_queries: float | None = None
    prefix_cache_hits: float | None = None
    requests_running: float | None = None
    requests_waiting: float | None = None
    kv_cache_usage: float | None = None
    prompt_tokens: float | None = None
    generation_tokens: float | None = None
    ttft_count: float | None = None
    ttft_sum: float | None = None
    requests_finished: float | None = None

    @property
    def prefix_cache_hit_rate(self) -> float | None:
        """hits / queries (token-weighted), or ``None`` when nothing was queried."""
        if not self.prefix_cache_queries or self.prefix_cache_hits is None:
            return None
        return self.prefix_cache_hits / self.prefix_cache_queries

    @property
    def mean_ttft_s(self) -> float | None:
        """Mean time to first token in seconds, or ``None`` with no finished prefill."""
        if not self.ttft_count or self.ttft_sum is None:
            return None
        return self.ttft_sum / self.ttft_count

    def since(self, earlier: ServingMetrics) -> ServingMetrics:
        """Counters as the change from ``earlier`` to this snapshot; gauges as now.

        A counter that went down (the server restarted in between) keeps its
        current value, which is then the change since the restart.
        """
        changes: dict[str, float | None] = {}
        for name in _COUNTERS:
            now, before = getattr(self, name), getattr(earlier, name)
            if now is None or before is None or now < before:
                changes[name] = now
            else:
                changes[name] = now - before
        return replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        """All fields plus ``prefix_cache_hit_rate`` and ``mean_ttft_s`` (JSON-ready)."""
        out: dict[str, Any] = asdict(self)
        out["prefix_cache_hit_rate"] = self.prefix_cache_hit_rate
        out["mean_ttft_s"] = self.mean_ttft_s
        return out


def _labels(text: str | None) -> dict[str, str]:
    return dict(_LABEL.findall(text or ""))


def parse_metrics(text: str, *, model: str | None = None) -> ServingMetrics:
    """Parse the Prometheus text exposition of a vLLM server.

    Reads both ``vllm:prefix_cache_hits`` and ``vllm:prefix_cache_hits_total``
    (likewise for every counter); ``model`` keeps only samples whose
    ``model_name`` label matches. Unknown lines are ignored.
    """
    sums: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        if m is None:
            continue
        name, labels, value = m.groups()
        if not name.startswith("vllm:"):
            continue
        key = name[len("vllm:") :]
        if key.endswith("_total"):
            key = key[: -len("_total")]
        field_name = _BY_METRIC.get(key)
        if field_name is None:
            continue
        if model is not None and _labels(labels).get("model_name", model) != model:
            continue
        try:
            number = float(value)
        except ValueError:
            continue
        sums[field_name] = sums.get(field_name, 0.0) + number
    known = {f.name for f in fields(ServingMetrics)}
    return ServingMetrics(**{k: v for k, v in sums.items() if k in known})


def metrics_url(base_url: str) -> str:
    """``http://host:port/v1`` -> ``http://host:port/metrics``."""
    root = base_url.rstrip("/").removesuffix("/v1")
    return f"{root}/metrics"


async def fetch_metrics(
    base_url: str,
    *,
    api_key: str | None = None,
    model: str | None = None,
    timeout: float = 10.0,  # noqa: ASYNC109 - an HTTP timeout, mapped to WorldModelTimeoutError
    client: httpx.AsyncClient | None = None,
) -> ServingMetrics:
    """GET ``/metrics`` of the server behind ``base_url`` and parse it.

    Raises :class:`~aw_lookahead.errors.ServerUnreachableError` when nothing
    answers, :class:`~aw_lookahead.errors.WorldModelTimeoutError` after
    ``timeout`` seconds, and :class:`~aw_lookahead.errors.ServerError` on an
    error status.
    """
    url = metrics_url(base_url)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key and api_key != "EMPTY" else {}
    owned = client is None
    http = client or httpx.AsyncClient(timeout=timeout, trust_env=False)
    try:
        resp = await http.get(url, headers=headers, timeout=timeout)
    except httpx.TimeoutException as exc:
        raise WorldModelTimeoutError(base_url, timeout) from exc
    except httpx.TransportError as exc:
        raise ServerUnreachableError(base_url, f"{type(exc).__name__}: {exc}") from exc
    finally:
        if owned:
            await http.aclose()
    if resp.status_code != 200:
        raise ServerError(base_url, resp.status_code, f"GET {url} failed: {resp.text[:200]}")
    return parse_metrics(resp.text, model=model)


def fetch_metrics_sync(
    base_url: str,
    *,
    api_key: str | None = None,
    model: str | None = None,
    timeout: float = 10.0,
) -> ServingMetrics:
    """Blocking :func:`fetch_metrics` for scripts and the CLI."""
    return run_sync(
        fetch_metrics(base_url, api_key=api_key, model=model, timeout=timeout),
        timeout=timeout + 5.0,
    )
