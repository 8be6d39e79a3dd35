"""Small randomised file contents and names for the MCP workspaces (short on purpose)."""

from __future__ import annotations

import random

from .session import pick

WORKSPACES = ("notes", "webapp", "inventory", "blog", "scripts", "reports", "shop", "docs-site")
WORDS = (
    "alpha", "billing", "cache", "draft", "export", "garden", "invoice", "ledger", "metrics",
    "orders", "pricing", "queue", "recipes", "sensor", "travel", "users", "weather", "zones",
)  # fmt: skip
PEOPLE = ("Ada", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ivo", "Julia")
TEAMS = ("platform", "payments", "search", "mobile", "data", "infra")
CITIES = ("Lisbon", "Osaka", "Quito", "Tallinn", "Nairobi", "Perth", "Bergen", "Cusco")
TOPICS = ("tea", "chess", "cycling", "jazz", "pottery", "climbing", "sailing", "baking")
BAD_TOOLS = ("delete_file", "remove_file", "copy_file", "append_file", "rename_file", "cat")
OUTSIDE = ("/etc/passwd", "/etc/hostname", "/root/.bashrc", "/var/log/syslog", "/home/secrets.txt")


def _config(rng: random.Random) -> str:
    port = rng.randrange(3000, 9000)
    return (
        f"[server]\nhost = 127.0.0.1\nport = {port}\n\n[db]\nname = {pick(rng, WORDS)}\n"
        f"pool = {rng.randrange(2, 20)}\n"
    )


def _python(rng: random.Random) -> str:
    name, factor = pick(rng, WORDS), rng.randrange(2, 9)
    return (
        f"def {name}_total(items):\n    return sum(items) * {factor}\n\n\n"
        f'if __name__ == "__main__":\n    print({name}_total([1, 2, 3]))\n'
    )


def _notes(rng: random.Random) -> str:
    lines = [f"# {pick(rng, WORDS).title()} notes", ""]
    lines += [
        f"- {pick(rng, PEOPLE)} to check {pick(rng, WORDS)}" for _ in range(rng.randrange(2, 5))
    ]
    return "\n".join(lines) + "\n"


def _csv(rng: random.Random) -> str:
    rows = ["id,city,amount"]
    rows += [
        f"{i},{pick(rng, CITIES)},{rng.randrange(5, 500)}" for i in range(1, rng.randrange(3, 7))
    ]
    return "\n".join(rows) + "\n"


def _log(rng: random.Random) -> str:
    levels = ("INFO", "INFO", "WARN", "ERROR")
    lines = [
        f"2026-03-{rng.randrange(1, 28):02d} 10:{m:02d} {pick(rng, levels)} {pick(rng, WORDS)} job"
        for m in range(rng.randrange(3, 7))
    ]
    return "\n".join(lines) + "\n"


#: (relative path template, content maker); ``{w}`` becomes a random word.
FILE_KINDS = (
    ("config.ini", _config),
    ("src/{w}.py", _python),
    ("notes/{w}.md", _notes),
    ("data/{w}.csv", _csv),
    ("logs/{w}.log", _log),
    ("README.md", _notes),
    ("todo.txt", _notes),
)


def random_files(rng: random.Random, lo: int = 3, hi: int = 6) -> dict[str, str]:
    """``relative path -> content`` for a small project tree (``lo``..``hi`` files)."""
    files: dict[str, str] = {}
    for _ in range(rng.randrange(lo, hi + 1)):
        template, make = pick(rng, FILE_KINDS)
        files[template.format(w=pick(rng, WORDS))] = make(rng)
    return dict(sorted(files.items()))
