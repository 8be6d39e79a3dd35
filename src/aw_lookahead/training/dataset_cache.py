"""Tokenise a run's data once: the encoded samples are kept in the run folder.

A long run is resumed many times (``--stop-after`` slices, preemption), and
classifying, rendering and tokenising a few thousand trajectories costs
minutes on a CPU. :func:`load_or_prepare` stores the encoded samples in
``<out>/encoded.jsonl.gz`` under a fingerprint of everything that decides
them (the data files' bytes, the tokenizer's vocabulary and chat template,
``max_len``, target mode, turn-class settings, prompt text). A later call with
the same fingerprint reads them back; anything else re-encodes and replaces
the file. The file holds token ids only, never text.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from aw_lookahead._jsonl import jsonl_files
from aw_lookahead.prompts import PromptSet
from aw_lookahead.trajectory import Domain

from .classify import ClassifyConfig, TurnClass
from .data import IGNORE_INDEX, DataReport, EncodedSample, TargetMode, prepare_dataset

__all__ = ["ENCODED_FILE", "HELDOUT_FILE", "data_fingerprint", "load_or_prepare"]

ENCODED_FILE = "encoded.jsonl.gz"
HELDOUT_FILE = "encoded-heldout.jsonl.gz"
_FORMAT = 2


def _file_digests(paths: Sequence[Path]) -> Iterator[tuple[str, str]]:
    for path in paths:
        for file in jsonl_files(path):
            h = hashlib.sha256()
            with open(file, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
            yield str(file), h.hexdigest()


def data_fingerprint(
    paths: Sequence[Path],
    tokenizer: Any,
    *,
    max_len: int,
    targets: TargetMode,
    config: ClassifyConfig,
    prompts: PromptSet,
) -> str:
    """A digest of everything that decides the encoded samples (see the module docstring)."""
    vocab = tokenizer.get_vocab()
    parts = {
        "format": _FORMAT,
        "files": list(_file_digests(paths)),
        "vocab": hashlib.sha256(json.dumps(sorted(vocab.items())).encode()).hexdigest(),
        "template": str(getattr(tokenizer, "chat_template", "")),
        "max_len": max_len,
        "targets": targets,
        "classify": _config_key(config),
        "prompts": [prompts.system(d) for d in Domain] + [prompts.tool_layout],
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def _config_key(config: ClassifyConfig) -> list[Any]:
    """The turn-class settings in a form that is the same in every process (a set's
    ``repr`` follows string hashing, which differs between interpreter runs)."""
    ratios = sorted((str(getattr(k, "value", k)), float(v)) for k, v in config.keep_ratios.items())
    return [ratios, sorted(config.boilerplate_replies), config.skip_retries, config.seed]


def _spans(labels: list[int]) -> list[list[int]]:
    out: list[list[int]] = []
    for k, x in enumerate(labels):
        if x == IGNORE_INDEX:
            continue
        if out and out[-1][1] == k:
            out[-1][1] = k + 1
        else:
            out.append([k, k + 1])
    return out


def _write(file: Path, fingerprint: str, samples: list[EncodedSample], report: DataReport) -> None:
    tmp = file.with_name(file.name + ".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8") as fh:
        head = {"format": _FORMAT, "fingerprint": fingerprint, "report": report.as_dict()}
        fh.write(json.dumps(head) + "\n")
        for s in samples:
            row = {
                "key": s.key,
                "ids": s.input_ids,
                "spans": _spans(s.labels),
                "classes": [[c.value, n] for c, n in s.label_classes],
                "trimmed": s.trimmed_turns,
                "truncated": s.truncated,
                "lead": [list(span) for span in s.lead],
            }
            fh.write(json.dumps(row, separators=(",", ":")) + "\n")
    os.replace(tmp, file)


def _read(file: Path, fingerprint: str) -> tuple[list[EncodedSample], DataReport] | None:
    try:
        with gzip.open(file, "rt", encoding="utf-8") as fh:
            head = json.loads(fh.readline())
            if head.get("fingerprint") != fingerprint or head.get("format") != _FORMAT:
                return None
            report = DataReport(
                **{k: v for k, v in head["report"].items() if k in DataReport.__dataclass_fields__}
            )
            samples = []
            for line in fh:
                row = json.loads(line)
                ids: list[int] = row["ids"]
                labels = [IGNORE_INDEX] * len(ids)
                for start, end in row["spans"]:
                    labels[start:end] = ids[start:end]
                samples.append(
                    EncodedSample(
                        key=row["key"],
                        input_ids=ids,
                        labels=labels,
                        label_classes=tuple((TurnClass(c), int(n)) for c, n in row["classes"]),
                        trimmed_turns=int(row["trimmed"]),
                        truncated=bool(row["truncated"]),
                        lead=tuple((int(a), int(b)) for a, b in row["lead"]),
                    )
                )
    except (OSError, EOFError, ValueError, KeyError, TypeError):
        return None
    return samples, report


def load_or_prepare(
    out: Path,
    paths: Sequence[Path],
    tokenizer: Any,
    *,
    max_len: int,
    targets: TargetMode,
    config: ClassifyConfig,
    prompts: PromptSet,
    file_name: str = ENCODED_FILE,
) -> tuple[list[EncodedSample], DataReport, bool]:
    """The run's encoded samples and report, and whether they came from ``out``'s cache
    (``file_name`` in ``out``: the training data's, or :data:`HELDOUT_FILE` for held-out data)."""
    fingerprint = data_fingerprint(
        paths, tokenizer, max_len=max_len, targets=targets, config=config, prompts=prompts
    )
    file = out / file_name
    if file.is_file():
        found = _read(file, fingerprint)
        if found is not None:
            return found[0], found[1], True
    samples, report = prepare_dataset(
        paths, tokenizer, max_len=max_len, targets=targets, config=config, prompts=prompts
    )
    if samples:
        out.mkdir(parents=True, exist_ok=True)
        _write(file, fingerprint, samples, report)
    return samples, report, False
