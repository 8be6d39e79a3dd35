"""Provider tokens recognised by their prefix alone: ``(kind, prefixes, the rest)``.

Each row becomes one rule of :func:`aw_lookahead.redact.rules.builtin_rules`: one of
the prefixes where a token may start, then the rest of the token (a bounded or
possessive run that ends where no token character follows).
"""

from __future__ import annotations

__all__ = ["PROVIDER_TOKENS"]

# Provider tokens recognised by their prefix alone: (kind, prefix, the rest).
PROVIDER_TOKENS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("anthropic_key", ("sk-ant-",), r"[A-Za-z0-9_-]{20,}+"),
    ("openai_key", ("sk-",), r"(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}+"),
    ("google_api_key", ("AIza",), r"[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
    (
        "aws_key_id",
        ("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA"),
        r"[0-9A-Z]{16}(?![A-Za-z0-9_])",
    ),
    (
        "github_token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        r"[A-Za-z0-9]{36,255}+(?![A-Za-z0-9_])",
    ),
    ("github_token", ("github_pat_",), r"[A-Za-z0-9_]{22,255}+(?![A-Za-z0-9_])"),
    (
        "gitlab_token",
        ("glpat-", "gldt-", "glptt-", "glrt-", "glcbt-", "gloas-", "glsoat-"),
        r"[A-Za-z0-9_-]{20,}+",
    ),
    ("slack_token", tuple(f"xox{c}-" for c in "abposre"), r"[A-Za-z0-9-]{10,}+"),
    ("stripe_key", ("sk_live_", "sk_test_", "rk_live_", "rk_test_"), r"[A-Za-z0-9]{16,}+"),
    ("huggingface_token", ("hf_",), r"[A-Za-z0-9]{30,}+"),
    ("npm_token", ("npm_",), r"[A-Za-z0-9]{36}(?![A-Za-z0-9])"),
    ("pypi_token", ("pypi-AgE",), r"[A-Za-z0-9_-]{50,}+"),
    ("sendgrid_key", ("SG.",), r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"),
    ("google_oauth_token", ("ya29.", "GOCSPX-"), r"[A-Za-z0-9_-]{20,}+"),
    ("digitalocean_token", ("dop_v1_", "doo_v1_", "dor_v1_"), r"[a-f0-9]{64}"),
    ("shopify_token", ("shpat_", "shpca_", "shppa_", "shpss_"), r"[a-fA-F0-9]{32}"),
    ("databricks_token", ("dapi",), r"[a-f0-9]{32}(?![a-f0-9])"),
    ("stripe_webhook_secret", ("whsec_",), r"[A-Za-z0-9+/=]{24,}+"),
    ("mailgun_key", ("key-",), r"[0-9a-zA-Z]{32}(?![0-9a-zA-Z])"),
    ("sentry_token", ("sntrys_", "sntryu_"), r"[A-Za-z0-9+/=_]{20,}+"),
    ("square_token", ("sq0atp-", "sq0csp-", "EAAA"), r"[A-Za-z0-9_-]{22,}+"),
    (
        "braintree_token",
        ("access_token$production$", "access_token$sandbox$"),
        r"[0-9a-z]{16}\$[0-9a-f]{32}",
    ),
    ("fcm_server_key", ("AAAA",), r"[A-Za-z0-9_-]{7}:[A-Za-z0-9_-]{100,}+"),
    ("age_secret_key", ("AGE-SECRET-KEY-1",), r"[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    ("grafana_token", ("glsa_", "glc_"), r"[A-Za-z0-9+/=_]{32,}+"),
    ("linear_key", ("lin_api_",), r"[A-Za-z0-9]{40}"),
    ("notion_token", ("ntn_",), r"[A-Za-z0-9]{40,}+"),
    ("notion_token", ("secret_",), r"[A-Za-z0-9]{43}(?![A-Za-z0-9])"),
    ("groq_key", ("gsk_",), r"[A-Za-z0-9]{40,}+"),
    ("replicate_token", ("r8_",), r"[A-Za-z0-9]{30,}+"),
)
