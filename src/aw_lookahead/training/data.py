"""Trajectories -> chat sequences with loss labels, rendered with the inference contract.

Three ways to pick targets (``targets=``):

* ``"all"`` (SFT): one sequence per trajectory, the whole conversation as
  :func:`~aw_lookahead.prompts.history_messages` renders it for inference;
  every kept turn's assistant message is a target. Assistant messages keep
  the inference history form ``**Environment Observation:**\\n<obs>``, so the
  context of later turns is byte-identical to what the server is sent; the
  parser reads this form too (``method="marker"``).
* ``"each"``: one sequence per kept turn: ``render_messages(history, action)``
  exactly as :class:`~aw_lookahead.worldmodel.OpenAIWorldModel` sends it, then
  the answer ``<predicted_observation>\\n<obs>\\n</predicted_observation>``
  (:func:`target_answer`), the form the parser reads first.
* ``"one"`` (RL-style pools): like ``"each"`` but one kept turn per
  trajectory, drawn with the seed, so shared prefixes do not dominate.

Labelled tokens, precisely: for each target assistant message, the tokens
from the first token of its content through the template's end-of-turn token
(``<|im_end|>`` for ChatML), i.e. the text the model must generate after the
generation prompt, without the trailing newline. Everything else (system,
user turns, role headers, non-target and masked assistant messages) is
``-100`` and stays in the input. Spans are found by rendering the prefix with
``add_generation_prompt=True`` and the prefix plus the message, then mapping
character spans to tokens with the fast tokenizer's offsets.

AgentWorldBench records (one target each, verbatim prompts) always give one
``"each"``-style sequence. Exact retries are dropped from sequences; masked
turns stay. A sequence longer than ``max_len`` drops its oldest turns after the
first (as inference trimming does) in ``"each"``/``"one"``, and is cut at
``max_len`` in ``"all"``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from aw_lookahead._jsonl import jsonl_files
from aw_lookahead.agentworldbench import parse_record
from aw_lookahead.errors import ConfigError
from aw_lookahead.lookahead.shadow import is_shadow_record, load_shadow_pair
from aw_lookahead.prompts import PromptSet, history_messages, render_messages
from aw_lookahead.trajectory import Trajectory, TurnSample, iter_jsonl_dicts

from ._outcome_line import lead_token_spans
from .classify import ClassifyConfig, TurnClass, classify_trajectory, classify_turn, keep_draw

__all__ = [
    "IGNORE_INDEX",
    "ChatSample",
    "DataReport",
    "EncodedSample",
    "TargetMode",
    "build_samples",
    "encode_sample",
    "label_spans",
    "prepare_dataset",
    "read_training_records",
    "target_answer",
]

IGNORE_INDEX = -100
TargetMode = Literal["all", "each", "one"]
Message = dict[str, str]


def target_answer(observation: str) -> str:
    """The assistant answer a training target teaches: the observation in its tag block."""
    return f"<predicted_observation>\n{observation}\n</predicted_observation>"


@dataclass(frozen=True)
class ChatSample:
    """Chat messages plus the indexes of the assistant messages that are targets.

    ``target_classes`` gives each target's turn class (aligned with ``targets``);
    ``history_turns`` lists, for ``"each"``/``"one"`` samples, the history
    trajectory so the encoder can trim it like inference does.
    """

    key: str
    messages: list[Message]
    targets: tuple[int, ...]
    target_classes: tuple[TurnClass, ...]
    history: Trajectory | None = None
    action: Any = None
    answer: str | None = None
    user_override: str | None = None


@dataclass
class DataReport:
    """Counts of the data preparation: classes, kept turns, tokens."""

    trajectories: int = 0
    turns: int = 0
    retries_skipped: int = 0
    class_turns: dict[str, int] = field(default_factory=dict)
    class_kept: dict[str, int] = field(default_factory=dict)
    class_label_tokens: dict[str, int] = field(default_factory=dict)
    samples: int = 0
    total_tokens: int = 0
    label_tokens: int = 0
    trimmed_samples: int = 0
    truncated_samples: int = 0
    dropped_samples: int = 0

    @property
    def masked_share(self) -> float:
        """Share of input tokens that carry no loss."""
        return 1.0 - self.label_tokens / self.total_tokens if self.total_tokens else 0.0

    def as_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items()}
        out["masked_share"] = round(self.masked_share, 4)
        return out

    def summary(self) -> str:
        """A human-readable table of the counts."""
        lines = [
            f"trajectories {self.trajectories}, turns {self.turns}, "
            f"retries skipped {self.retries_skipped}",
            f"{'class':<12} {'turns':>6} {'kept':>6} {'label tokens':>13}",
        ]
        for cls in TurnClass:
            n = self.class_turns.get(cls.value, 0)
            if n:
                lines.append(
                    f"{cls.value:<12} {n:>6} {self.class_kept.get(cls.value, 0):>6} "
                    f"{self.class_label_tokens.get(cls.value, 0):>13}"
                )
        lines.append(
            f"samples {self.samples}, tokens {self.total_tokens}, label tokens "
            f"{self.label_tokens} (masked {self.masked_share:.1%}), trimmed "
            f"{self.trimmed_samples}, truncated {self.truncated_samples}, dropped "
            f"{self.dropped_samples}"
        )
        return "\n".join(lines)

    def _count(self, table: dict[str, int], cls: TurnClass, n: int = 1) -> None:
        table[cls.value] = table.get(cls.value, 0) + n


def read_training_records(
    paths: Iterable[str | Path],
) -> Iterator[tuple[str, Trajectory | TurnSample]]:
    """Stream ``(key, record)`` from JSONL files or folders of them.

    A record with ``turns`` is a trajectory (our schema, also what the
    recorder writes); one with ``predicted``/``real`` is a shadow log line of
    either adapter (:class:`~aw_lookahead.lookahead.shadow.ShadowPair`), read
    as its one sample: the history the engine saw, the action, and the *real*
    observation as the target; one with ``prompt``/``response`` is an
    AgentWorldBench sample. ``key`` is the record's id, else ``file:line``.
    """
    for path in paths:
        for file in jsonl_files(path):
            for lineno, obj in iter_jsonl_dicts(file):
                where = f"{file}:{lineno}"
                if is_shadow_record(obj):
                    yield where, load_shadow_pair(obj, source=str(file), line=lineno).sample
                    continue
                record = parse_record(obj, source=str(file), line=lineno)
                if isinstance(record, Trajectory):
                    yield record.id or where, record
                elif record is not None:
                    yield str(record.id) if record.id is not None else where, record
                else:
                    raise ConfigError(
                        f"{where}: neither a trajectory (needs 'turns'), a shadow log line "
                        "(needs 'predicted' and 'real') nor an AgentWorldBench record (needs "
                        "'prompt' and 'response')"
                    )


def _single(
    key: str, history: Trajectory, target_idx: int, cls: TurnClass, prompts: PromptSet | None
) -> ChatSample:
    turn = history.turns[target_idx]
    hist = history.prefix(target_idx)
    messages = render_messages(hist, turn.action, prompts=prompts)
    if turn.prompt is not None:
        messages[-1] = {"role": "user", "content": turn.prompt}
    answer = target_answer(turn.observation)
    messages.append({"role": "assistant", "content": answer})
    return ChatSample(
        key=f"{key}#{target_idx + 1}",
        messages=messages,
        targets=(len(messages) - 1,),
        target_classes=(cls,),
        history=hist,
        action=turn.action,
        answer=answer,
        user_override=turn.prompt,
    )


def build_samples(
    records: Iterable[tuple[str, Trajectory | TurnSample]],
    *,
    targets: TargetMode = "each",
    config: ClassifyConfig | None = None,
    prompts: PromptSet | None = None,
    report: DataReport | None = None,
) -> Iterator[ChatSample]:
    """Classify turns and yield chat samples (see the module docstring for the modes)."""
    if targets not in ("all", "each", "one"):
        raise ConfigError(f"targets must be 'all', 'each' or 'one', got {targets!r}")
    cfg = config or ClassifyConfig()
    rep = report if report is not None else DataReport()
    for key, record in records:
        rep.trajectories += 1
        if isinstance(record, TurnSample):
            rep.turns += 1
            traj = record.trajectory
            i = record.turn_idx - 1
            prev = traj.turns[i - 1].observation if i else (traj.initial_state or "")
            turn = traj.turns[i]
            cls, _ = classify_turn(
                turn.action, turn.observation, prev, domain=traj.domain, config=cfg
            )
            rep._count(rep.class_turns, cls)
            if keep_draw(cfg.seed, key, i) < cfg.ratio(cls):
                rep._count(rep.class_kept, cls)
                yield _single(key, traj.prefix(i + 1), i, cls, prompts)
            continue
        decisions = classify_trajectory(record, key=key, config=cfg)
        rep.turns += len(decisions)
        kept_turns = [d for d in decisions if not d.retry]
        rep.retries_skipped += len(decisions) - len(kept_turns)
        traj = record.model_copy(update={"turns": [record.turns[d.index] for d in kept_turns]})
        chosen: list[tuple[int, TurnClass]] = []
        for j, d in enumerate(kept_turns):
            assert d.turn_class is not None
            rep._count(rep.class_turns, d.turn_class)
            if d.kept:
                rep._count(rep.class_kept, d.turn_class)
                chosen.append((j, d.turn_class))
        if not chosen:
            continue
        if targets == "all":
            messages = history_messages(traj, prompts=prompts)
            offset = 1 if messages and messages[0]["role"] == "system" else 0
            yield ChatSample(
                key=key,
                messages=messages,
                targets=tuple(offset + 2 * j + 1 for j, _ in chosen),
                target_classes=tuple(c for _, c in chosen),
            )
        elif targets == "each":
            for j, cls in chosen:
                yield _single(key, traj, j, cls, prompts)
        else:
            pick = int(keep_draw(cfg.seed + 1, key, -1) * len(chosen))
            j, cls = chosen[pick]
            yield _single(key, traj, j, cls, prompts)


@dataclass(frozen=True)
class EncodedSample:
    """Token ids and labels (``-100`` = no loss) of one sequence."""

    key: str
    input_ids: list[int]
    labels: list[int]
    label_classes: tuple[tuple[TurnClass, int], ...] = ()
    trimmed_turns: int = 0
    truncated: bool = False
    lead: tuple[tuple[int, int], ...] = ()
    """Token spans ``[start, end)`` of the targets' outcome lines (:mod:`._outcome_line`)."""

    @property
    def n_label_tokens(self) -> int:
        return sum(1 for x in self.labels if x != IGNORE_INDEX)


def _template(tokenizer: Any, messages: Sequence[Message], *, gen: bool = False) -> str:
    text = tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=gen)
    return str(text)


def label_spans(
    tokenizer: Any, messages: Sequence[Message], targets: Sequence[int]
) -> tuple[str, list[tuple[int, int]]]:
    """The rendered text and, per target, the character span the model must generate."""
    full = _template(tokenizer, messages)
    spans: list[tuple[int, int]] = []
    for t in targets:
        if messages[t]["role"] != "assistant":
            raise ConfigError(f"message {t} is a {messages[t]['role']!r} message, not assistant")
        before = _template(tokenizer, messages[:t], gen=True)
        upto = _template(tokenizer, messages[: t + 1])
        if not (upto.startswith(before) and full.startswith(upto)):
            raise ConfigError(
                "the tokenizer's chat template does not render conversations prefix by prefix "
                "(a later message changes earlier text), so label spans cannot be located; "
                "use a model with a prefix-stable template (e.g. ChatML)"
            )
        answer = upto[len(before) :].rstrip()
        spans.append((len(before), len(before) + len(answer)))
    return full, spans


def encode_sample(
    tokenizer: Any, sample: ChatSample, max_len: int, *, prompts: PromptSet | None = None
) -> EncodedSample | None:
    """Tokenize with the chat template and label the target spans (None if nothing is left).

    Single-target samples drop their oldest turns after the first until they
    fit ``max_len`` (re-rendered with ``prompts``, the set the sample was
    built with); multi-target samples are cut at ``max_len``.
    """
    skip = 0
    messages = sample.messages
    targets = sample.targets
    while True:
        text, spans = label_spans(tokenizer, messages, targets)
        enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        ids: list[int] = list(enc["input_ids"])
        if len(ids) <= max_len or sample.history is None:
            break
        if skip + 1 >= len(sample.history.turns):
            return None
        skip += 1
        messages = render_messages(sample.history, sample.action, prompts=prompts, skip_turns=skip)
        if sample.user_override is not None:
            messages[-1] = {"role": "user", "content": sample.user_override}
        messages.append({"role": "assistant", "content": sample.answer or ""})
        targets = (len(messages) - 1,)
    labels = [IGNORE_INDEX] * len(ids)
    per_class: dict[TurnClass, int] = {}
    for (start, end), cls in zip(spans, sample.target_classes, strict=True):
        for k, (s, _e) in enumerate(enc["offset_mapping"][:max_len]):
            if start <= s < end:
                labels[k] = ids[k]
                per_class[cls] = per_class.get(cls, 0) + 1
    truncated = len(ids) > max_len
    ids, labels = ids[:max_len], labels[:max_len]
    if all(x == IGNORE_INDEX for x in labels):
        return None
    contents = [
        (start, str(messages[t]["content"])) for t, (start, _) in zip(targets, spans, strict=True)
    ]
    lead = lead_token_spans(text, contents, enc["offset_mapping"], labels, IGNORE_INDEX)
    return EncodedSample(
        key=sample.key,
        input_ids=ids,
        labels=labels,
        label_classes=tuple(per_class.items()),
        trimmed_turns=skip,
        truncated=truncated,
        lead=lead,
    )


def prepare_dataset(
    paths: Iterable[str | Path],
    tokenizer: Any,
    *,
    max_len: int = 2048,
    targets: TargetMode = "each",
    config: ClassifyConfig | None = None,
    prompts: PromptSet | None = None,
) -> tuple[list[EncodedSample], DataReport]:
    """Read, classify, render and tokenize training data; returns samples and the report."""
    if max_len < 16:
        raise ConfigError(f"max_len must be >= 16 tokens, got {max_len}")
    report = DataReport()
    out: list[EncodedSample] = []
    records = read_training_records(paths)
    for sample in build_samples(
        records, targets=targets, config=config, prompts=prompts, report=report
    ):
        enc = encode_sample(tokenizer, sample, max_len, prompts=prompts)
        if enc is None:
            report.dropped_samples += 1
            continue
        out.append(enc)
        report.samples += 1
        report.total_tokens += len(enc.input_ids)
        report.label_tokens += enc.n_label_tokens
        report.trimmed_samples += int(enc.trimmed_turns > 0)
        report.truncated_samples += int(enc.truncated)
        for cls, n in enc.label_classes:
            report._count(report.class_label_tokens, cls, n)
    return out, report
