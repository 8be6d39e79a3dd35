"""This tree's redactor against another revision's, output for output.

    python bench/redact_equivalence.py [--baseline main] [--texts 300] [--seed 0]

Imports the ``--baseline`` revision's ``Redactor`` beside this tree's (as
``bench/redact.py`` does) and compares ``Redactor.text`` with one fixed key on
every row of ``bench/redact.py`` (1 MiB each) and on ``--texts`` random texts
mixing secrets of every built-in shape, placeholders, quotes, separators,
capitals, non-ASCII letters and dense runs, from a few bytes to past the size
where the bulk paths start. Prints each difference and exits non-zero on any.
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
from pathlib import Path

import redact as bench  # bench/ is on sys.path when run as a script

from aw_lookahead.redact import Redactor

_KEY = b"equivalence-key!"
_NAMES = (
    "password", "PASSWORD", "Password", "secret", "token", "api_key", "API_KEY", "apiKey",
    "access-key", "passwd", "credentials", "contraseña", "пароль", "DB_PASSWORD", "GH_TOKEN",
    "AWS_SECRET_ACCESS_KEY", "authorization", "cookie", "bearer", "--password", "--api-key",
)  # fmt: skip
_SEPS = ("=", ": ", " = ", ":", "：", "%3D", '":"', '": "', "='", '="', " ")
_VALUES = (
    "hunter2", "v{n:07d}x", "[REDACTED_SECRET_0a1b2c]", "[Redacted_0a1b2c]", "null", "a",
    "ab", "s3cr3t-{n}", "ÉtéSecret{n}", "sk-proj-{n:04d}Ab3dEf6hAb3dEf6hAb3d",
    "ghp_" + "a" * 36, "AKIAABCDEFGHIJKLMNOP", "eyJhbGciOi.eyJzdWIiOi.sig{n}",
    "xoxb-1234567890-{n}", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "",
)  # fmt: skip
_AFTER = (" ", "\n", '"', "'", ", ", ";", "&", "}", "\\n", "", " İ ", "é", "密")
_FILLER = (
    "ordinary words ",
    "src/mod.py:12: x = 1\n",
    "URL https://u:p4ss@host/x ",
    "- ",
    "Ünïcode ",
)


def _piece(rng: random.Random, n: int, names: list[str], values: list[str]) -> str:
    name, sep = rng.choice(names), rng.choice(_SEPS)
    value = rng.choice(values).format(n=n)
    quote = rng.choice(("", "", '"', "'")) if sep not in ('":"', '": "', "='", '="') else ""
    close = {"'": "'", '="': '"', '": "': '"', '":"': '"'}.get(
        sep[-2:] if len(sep) > 1 else sep, ""
    )
    return f"{name}{sep}{quote}{value}{quote or close}{rng.choice(_AFTER)}"


_README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
_QUOTED = ('"{v}"', "'{v}'", "{v}", "{v}", '\\"{v}\\"', '"{v} and more"', '"{v}', "%22{v}%22")
_ODD = ("null", "[REDACTED_SECRET_0a1b2c]", "Ab", "x,y", "v\u00e9", "İ", "TOKEN", '"', "")


def _dense_text(rng: random.Random) -> str:
    """Secret-named pairs one after another (as the dense bench rows), values mostly
    distinct, bare and quoted mixed, now and then an odd value, name or separator."""
    names = rng.sample(("password", "secret", "token", "api_key", "Password", "passwd"), k=2)
    seps = rng.sample(("=", ": ", ":", " = ", "%3D"), k=rng.choice((1, 2)))
    forms = rng.sample(_QUOTED, k=rng.choice((2, 3, 4)))
    odd = rng.choice((0.0, 0.001, 0.02))
    head = rng.random()
    if head < 0.35:  # prose with capitals and wider letters first, as in the README-first row
        names = [name.lower() for name in names]
        if rng.random() < 0.5:  # one name after it: the tail read led by that name alone
            names = names[:1]
            if rng.random() < 0.3:  # bare values only: split by the rule's own pattern
                forms, odd = ["{v}"], 0.0
        start = rng.randrange(len(_README))
        parts = [_README[start : start + rng.randrange(1, 30_000)] + rng.choice(("", " ", "\n"))]
    elif head < 0.55:  # a short head with capitals or wide letters, one name after it
        names = names[:1] if names[0].islower() else [names[1].lower()]
        name = names[0].upper() if rng.random() < 0.5 else names[0].title()
        parts = [rng.choice(("Ünïcode ", "≥ ", "İ ", "Note: ", "")) + name + "=AbcDef "]
        seps = [sep for sep in seps if sep == sep.lower()] or ["="]
        if rng.random() < 0.5:  # bare values only, in lower case: the tail read on its own
            forms, odd = ["{v}"], 0.0
    else:
        parts = ["é " if head < 0.7 else ""]
    for n in range(rng.choice((300, 3000, 20000))):
        value = rng.choice(_ODD) if rng.random() < odd else f"v{n:07d}x"
        form = rng.choice(forms).format(v=value)
        parts.append(
            f"{rng.choice(names)}{rng.choice(seps)}{form}{rng.choice((' ', ', ', chr(10)))}"
        )
    return "".join(parts)


def _env_text(rng: random.Random) -> str:
    """Environment lines (as the `API_KEY=` row: two rules find each, the name rule then
    reads placeholders), now and then a line only the name rule, or neither, finds."""
    names = rng.sample(("API_KEY", "DB_PASSWORD", "GH_TOKEN", "X_SECRET", "AUTH_KEY"), k=2)
    bare = rng.random() < 0.5  # bare values only: every value of the name rule a placeholder
    quoted = ('="{}"', "='{}'", "=\\'{}\\'")
    forms = rng.sample(("={}", " = {}", *(() if bare else quoted)), k=rng.choice((1, 2)))
    odd = ("token: s3cr3t{}", "api_key={}", "password:{}", "TOKEN%3a{}", "x_API_KEY={}", "a=b{}")
    rate = rng.choice((0.0, 0.0005, 0.01))
    parts = []
    for n in range(rng.choice((600, 6000, 30000))):
        value = f"v{n:07d}x"
        if rng.random() < rate:
            parts.append(rng.choice(odd).format(value) + "\n")
        else:
            parts.append(rng.choice(names) + rng.choice(forms).format(value) + "\n")
    return "".join(parts)


def _random_text(rng: random.Random, i: int) -> str:
    if i % 3 == 0:
        return _dense_text(rng)
    if i % 6 == 1:
        return _env_text(rng)
    size = rng.choice((50, 400, 5_000, 40_000, 70_000, 200_000))
    dense = rng.random() < 0.6
    names = rng.sample(_NAMES, k=rng.choice((1, 2, 4, len(_NAMES))))
    values = ["v{n:07d}x"] * 8 + rng.sample(_VALUES, k=rng.choice((1, 3, len(_VALUES))))
    parts: list[str] = []
    total = 0
    n = 0
    while total < size:
        if dense or rng.random() < 0.3:
            part = _piece(rng, n if rng.random() < 0.8 else n % 7, names, values)
            n += 1
        else:
            part = rng.choice(_FILLER)
        parts.append(part)
        total += len(part)
    if rng.random() < 0.3:
        parts.insert(rng.randrange(len(parts) + 1), "é" if i % 2 else "İstanbul ")
    return "".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baseline", default="main")
    ap.add_argument("--texts", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mib", type=float, default=1.0)
    args = ap.parse_args()
    logging.disable(logging.WARNING)
    base = bench._baseline(args.baseline)
    size = int(args.mib * (1 << 20))
    texts = {**bench._adversarial(size), **bench._realistic(size)}
    rng = random.Random(args.seed)
    texts.update({f"random {i}": _random_text(rng, i) for i in range(args.texts)})
    differ = 0
    for name, text in texts.items():
        ours, theirs = Redactor(key=_KEY), base(key=_KEY)
        if ours.text(text) != theirs.text(text) or ours.over_cap != theirs.over_cap:
            differ += 1
            print(f"DIFFERS: {name} ({len(text):,} characters)")
    print(f"{len(texts) - differ} of {len(texts)} texts identical (baseline {args.baseline})")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
