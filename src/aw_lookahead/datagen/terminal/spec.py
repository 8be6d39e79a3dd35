"""The vocabulary of terminal task templates: steps, task specs, the family registry, word pools.

A *family* is a function ``(rng) -> TaskSpec`` registered under a name with
:func:`family`. It draws every name, content and size from ``rng`` (a
:class:`random.Random` seeded per task), so a family yields many different
tasks that share one shape, and the same seed always yields the same task.
Families only describe commands and starting files; nothing here runs them.
"""

from __future__ import annotations

import random
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

__all__ = [
    "CITIES",
    "DIRS",
    "EXTS",
    "FAMILIES",
    "LEVELS",
    "NAMES",
    "NOUNS",
    "Step",
    "TaskSpec",
    "bad",
    "family",
    "lines_file",
    "ok",
    "pick",
    "printf_cmd",
    "q",
    "typo",
    "words",
]


@dataclass(frozen=True)
class Step:
    """One command of a task; ``mistake`` marks a deliberate error (typo, missing file, ...)."""

    command: str
    mistake: bool = False


@dataclass
class TaskSpec:
    """A task: its instruction, its commands and the files present before the first command.

    ``files`` maps paths relative to the sandbox root to their text;
    ``executable`` lists those of them that get mode 0755 (others get 0644).
    """

    task: str
    steps: list[Step]
    files: dict[str, str] = field(default_factory=dict)
    executable: tuple[str, ...] = ()


FamilyFn = Callable[[random.Random], TaskSpec]
FAMILIES: dict[str, FamilyFn] = {}
"""Every registered family, by name (filled when the family modules are imported)."""


def family(name: str) -> Callable[[FamilyFn], FamilyFn]:
    """Register a family under ``name``; names are unique."""

    def deco(fn: FamilyFn) -> FamilyFn:
        if name in FAMILIES:
            raise ValueError(f"terminal family {name!r} is registered twice")
        FAMILIES[name] = fn
        return fn

    return deco


def ok(command: str) -> Step:
    """An ordinary step."""
    return Step(command)


def bad(command: str) -> Step:
    """A deliberate mistake."""
    return Step(command, mistake=True)


def q(text: str) -> str:
    """Shell-quote ``text``."""
    return shlex.quote(text)


def printf_cmd(lines: Sequence[str], path: str, *, append: bool = False) -> str:
    """A ``printf`` command writing ``lines`` (no quotes or backslashes in them) to ``path``."""
    body = "\\n".join(lines) + "\\n"
    return f"printf '{body}' {'>>' if append else '>'} {path}"


def lines_file(lines: Iterable[str]) -> str:
    """File text made of ``lines``, newline-terminated."""
    return "".join(f"{line}\n" for line in lines)


def pick(rng: random.Random, pool: Sequence[str], k: int = 1) -> list[str]:
    """``k`` distinct items of ``pool``."""
    return rng.sample(list(pool), k)


def words(rng: random.Random, k: int) -> list[str]:
    """``k`` distinct lower-case nouns."""
    return pick(rng, NOUNS, k)


NOUNS: tuple[str, ...] = (
    "apple", "anchor", "badge", "bridge", "cable", "candle", "cedar", "comet", "copper", "delta",
    "ember", "falcon", "fern", "garnet", "glacier", "harbor", "hazel", "island", "jasper", "kettle",
    "lantern", "lemon", "maple", "marble", "meadow", "nickel", "oak", "orbit", "pebble", "pepper",
    "pine", "quartz", "raven", "river", "saffron", "salmon", "shadow", "silver", "spruce", "stone",
    "thistle", "tiger", "tulip", "valley", "velvet", "walnut", "willow", "yarrow", "zephyr", "zinc",
)  # fmt: skip

NAMES: tuple[str, ...] = (
    "ada", "ben", "cara", "dan", "eva", "finn", "gus", "hana", "ivo", "jade", "kai", "lena",
    "milo", "nora", "otto", "pia", "quin", "rosa", "sam", "tara", "uma", "vic", "wes", "yara",
)  # fmt: skip

CITIES: tuple[str, ...] = (
    "oslo", "lima", "cairo", "quito", "perth", "dakar", "hanoi", "porto", "riga", "accra",
    "bern", "kyiv", "doha", "nice", "turin", "malmo",
)  # fmt: skip

LEVELS: tuple[str, ...] = ("INFO", "WARN", "ERROR", "DEBUG")

EXTS: tuple[str, ...] = ("txt", "md", "csv", "log", "py", "json", "conf", "sh")

DIRS: tuple[str, ...] = (
    "src", "docs", "data", "logs", "build", "notes", "lib", "tmp", "assets", "config", "reports",
)  # fmt: skip


def typo(rng: random.Random, word: str) -> str:
    """``word`` with two neighbouring letters swapped (or a letter dropped), never unchanged."""
    if len(word) >= 3:
        i = rng.randrange(len(word) - 1)
        swapped = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
        if swapped != word:
            return swapped
    i = rng.randrange(len(word))
    return word[:i] + word[i + 1 :] or word + word[-1]
