"""The verifier's partial scores: masked exact match and line F1 over masked lines.

Both compare texts after :mod:`.masking` (and, for shell output, each
command's own masks from :mod:`.shell`), so runtime values never count.
"""

from __future__ import annotations

from collections import Counter

from aw_lookahead._metrics import multiset_f1

from .masking import normalize_ws
from .shell import mask_shell
from .tiers import masked_lines

__all__ = ["line_f1", "masked_exact", "partial_scores"]


def _lines(text: str, shell: bool = False) -> list[str]:
    if not shell:
        return masked_lines(text)
    return [line for line in normalize_ws(mask_shell(text)).split("\n") if line]


def masked_exact(prediction: str, truth: str, *, shell: bool = False) -> float:
    """1.0 when both texts are equal after masking and whitespace normalisation.

    ``shell`` also applies each command's own masks (``echo $$`` prints a PID).
    """
    return float(_lines(prediction, shell) == _lines(truth, shell))


def line_f1(prediction: str, truth: str, *, shell: bool = False) -> float:
    """Multiset F1 of masked, normalised, non-empty lines (1.0 when both are empty)."""
    return multiset_f1(Counter(_lines(prediction, shell)), Counter(_lines(truth, shell)))


def partial_scores(prediction: str, truth: str, *, shell: bool = False) -> tuple[float, float]:
    """``(masked_exact, line_f1)`` from one masking of each text (the verifier's single pass)."""
    predicted, true = _lines(prediction, shell), _lines(truth, shell)
    return float(predicted == true), multiset_f1(Counter(predicted), Counter(true))
