"""The rule verifier: a 0/1 verdict and partial scores for one predicted observation.

Read top-down: :mod:`.verifier` (``verify_sample`` -> ``verify``) hands the
turn to its domain's rules (:mod:`.shell`, :mod:`.mcp`, :mod:`.gui`), which
build tier results with :mod:`.tiers`; :mod:`.scores` adds the partial
scores. :mod:`.masking` (runtime values to placeholders) is the layer under
them all.
"""

from __future__ import annotations

from .masking import mask, normalize_ws
from .verifier import RuleResult, TierResult, line_f1, masked_exact, verify, verify_sample

__all__ = [
    "RuleResult",
    "TierResult",
    "line_f1",
    "mask",
    "masked_exact",
    "normalize_ws",
    "verify",
    "verify_sample",
]
