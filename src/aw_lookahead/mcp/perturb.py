"""Deterministic fault injection for dry runs (``--perturb``), applied by the harness.

The world model predicts the clean result; the harness then perturbs it, so
faults are reproducible and never depend on what the model chose to say.
For a given seed the faults of call ``n`` of a session with a given tool are
always the same (a ``random.Random`` seeded by ``seed:session:n:tool``).

Spec syntax: ``seed=7,error=0.1,latency=0.5,truncate=0.2,paginate=0.2``
(rates in [0, 1], latency in seconds: each call sleeps uniformly in
``[0, latency]``; optional ``truncate_chars=200``, ``page_chars=400``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, fields

from aw_lookahead.errors import ConfigError

__all__ = ["Fault", "Perturbation"]

_RATES = {"error": "error_rate", "truncate": "truncate_rate", "paginate": "paginate_rate"}


@dataclass(frozen=True)
class Fault:
    """What the harness does to one simulated result."""

    error: bool = False
    delay_s: float = 0.0
    truncate: bool = False
    paginate: bool = False

    @property
    def any(self) -> bool:
        return self.error or self.delay_s > 0 or self.truncate or self.paginate


@dataclass(frozen=True)
class Perturbation:
    """Fault rates and the seed that makes them reproducible."""

    seed: int = 0
    error_rate: float = 0.0
    latency_s: float = 0.0
    truncate_rate: float = 0.0
    paginate_rate: float = 0.0
    truncate_chars: int = 200
    page_chars: int = 400

    def __post_init__(self) -> None:
        for name in ("error_rate", "truncate_rate", "paginate_rate"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ConfigError(
                    f"--perturb {name.removesuffix('_rate')}={value} is not in [0, 1]"
                )
        if self.latency_s < 0 or self.truncate_chars < 1 or self.page_chars < 1:
            raise ConfigError("--perturb latency must be >= 0 and *_chars >= 1")

    @classmethod
    def parse(cls, spec: str) -> Perturbation:
        """Parse ``seed=7,error=0.1,...``; the error names the valid keys."""
        known = {f.name for f in fields(cls)}
        values: dict[str, float | int] = {}
        for part in filter(None, (p.strip() for p in spec.split(","))):
            key, sep, raw = part.partition("=")
            name = _RATES.get(key.strip(), "latency_s" if key.strip() == "latency" else key.strip())
            if not sep or name not in known:
                valid = "seed, error, latency, truncate, paginate, truncate_chars, page_chars"
                raise ConfigError(f"bad --perturb item {part!r}; use key=value with keys: {valid}")
            try:
                is_int = name in ("seed", "truncate_chars", "page_chars")
                values[name] = int(raw) if is_int else float(raw)
            except ValueError:
                raise ConfigError(f"--perturb {key}={raw!r} is not a number") from None
        return cls(**values)  # type: ignore[arg-type]

    def plan(self, session: int, call: int, tool: str) -> Fault:
        """The faults for call number ``call`` (0-based) of ``session`` to ``tool``."""
        rng = random.Random(f"{self.seed}:{session}:{call}:{tool}")
        error = rng.random() < self.error_rate
        delay = rng.uniform(0.0, self.latency_s) if self.latency_s > 0 else 0.0
        truncate = rng.random() < self.truncate_rate
        paginate = rng.random() < self.paginate_rate
        return Fault(error=error, delay_s=delay, truncate=truncate, paginate=paginate)

    def apply(self, fault: Fault, text: str, tool: str) -> tuple[str, bool]:
        """Apply ``fault`` to a simulated result text; returns ``(text, is_error)``."""
        if fault.error:
            return (
                f"Error: {tool} failed: the server is temporarily unavailable (EAGAIN). "
                f"[fault injected by aw-lookahead --perturb seed={self.seed}]",
                True,
            )
        if fault.paginate and len(text) > self.page_chars:
            pages = -(-len(text) // self.page_chars)
            text = (
                text[: self.page_chars]
                + f"\n[page 1 of {pages}; more results are available: repeat the call with a "
                "narrower query to see them]"
            )
        elif fault.truncate and len(text) > self.truncate_chars:
            text = text[: self.truncate_chars] + "\n[output truncated]"
        return text, False
