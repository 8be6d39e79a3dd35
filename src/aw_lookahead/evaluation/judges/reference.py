"""The reference AgentWorldBench judge, as an option beside our rubric judge.

What it reproduces (facts of the reference script ``eval/eval.py`` and
``eval/lwm_eval_utils``; the wording of its prompts is *not* shipped here):

* **System prompt**: ``<domain>/judge_system_prompt.txt`` from a folder in the
  published layout (the repository root, which holds ``prompts/``, or
  ``prompts/`` itself); an unknown domain gets an empty system prompt.
* **User message**: the reference template filled with the context (every
  earlier ``prompt``/``response`` pair joined as ``prompt + "\\n" + response +
  "\\n\\n"`` under ``# Context (Historical Interactions):``), the current turn
  (``# Current Turn:``), the simulated and the real observation (each in a
  fence, markers removed), stripped. The template text is read from the
  folder: ``judge_user_prompt.txt``, else ``JUDGE_USER_PROMPT`` in the
  reference checkout's ``eval/lwm_eval_utils/task_configs.py``. Without
  either, our own instruction paragraph (same slots, same requested output
  format) is used and the verdict says so (``user_template``).
* **Sampling**: only ``model``, ``messages``, ``max_tokens`` (32,768) and
  ``temperature`` (0.6); up to 3 attempts, a 2 s pause after a failed call,
  an immediate new attempt after an unparsable reply.
* **Parsing** (:func:`parse_verdict`): thinking removed; the last
  ``<final_evaluation>`` block if any; a fenced JSON block (the last one that
  mentions ``"scores"``), else a brace-matched object, else the last object
  found backwards; light repairs (trailing commas, quoted/unquoted keys);
  each score coerced to an integer and clamped to 1-5 (0 marks a missing
  one); ``total_score`` is the mean of the scores above 0.
"""

from __future__ import annotations

import ast
import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openai import AsyncOpenAI

from aw_lookahead.endpoint import OpenAIProvider, UsesProvider
from aw_lookahead.errors import UsageError, WorldModelError
from aw_lookahead.evaluation.official import (
    REFERENCE_MAX_TOKENS,
    REFERENCE_RETRIES,
    REFERENCE_TEMPERATURE,
    REFERENCE_TIMEOUT_S,
    clean_marker,
    current_prompt,
    record_lists,
    subtask,
)

from .verdict import parse_verdict

__all__ = [
    "ReferenceJudge",
    "ReferenceJudgePrompts",
    "load_reference_judge_prompts",
    "parse_verdict",
    "reference_judge_messages",
]

OWN_TEMPLATE_LABEL = "aw-lookahead wording"

# Our own instruction paragraph for the reference slots, used only when the
# folder carries no template of its own. Same slots and requested output format.
_OWN_USER_TEMPLATE = """{context}

{world_model_input}

{predicted_observation}

{ground_truth}

Grade how well the simulated output stands in for the real one on five \
dimensions: Format, Factuality, Consistency, Realism and Quality. Use integers \
from 1 (no use as a stand-in) to 5 (as good as the real output). Reason about \
each dimension first. End with your verdict between <final_evaluation> and \
</final_evaluation>, as a ```json fenced block of this shape:
<final_evaluation>
```json
{{"strengths": ["..."], "weaknesses": ["..."], "scores": {{"format": 3, \
"factuality": 3, "consistency": 3, "realism": 3, "quality": 3}}}}
```
</final_evaluation>"""


@dataclass
class ReferenceJudgePrompts:
    """Judge system prompts per domain and the user template, with where they came from."""

    system: dict[str, str]
    user_template: str
    user_template_source: str
    folder: str = ""
    files: dict[str, str] = field(default_factory=dict)


def _template_from_task_configs(path: Path) -> str | None:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "JUDGE_USER_PROMPT" for t in node.targets)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return node.value.value
    return None


def load_reference_judge_prompts(folder: str | Path) -> ReferenceJudgePrompts:
    """Load ``<domain>/judge_system_prompt.txt`` files (and the user template) from ``folder``.

    ``folder`` is a checkout of the reference repository or its ``prompts/``
    folder. Raises :class:`~aw_lookahead.errors.UsageError` when it holds no
    judge prompt.
    """
    root = Path(folder)
    if not root.is_dir():
        raise UsageError(f"judge prompt folder {root} does not exist or is not a folder")
    prompts_dir = root / "prompts" if (root / "prompts").is_dir() else root
    files = sorted(prompts_dir.glob("*/judge_system_prompt.txt"))
    if not files:
        raise UsageError(
            f"{root} holds no judge prompt: expected <domain>/judge_system_prompt.txt "
            "(a checkout of QwenLM/Qwen-AgentWorld or its prompts/ folder)"
        )
    system = {f.parent.name: f.read_text(encoding="utf-8") for f in files}
    template, source = None, OWN_TEMPLATE_LABEL
    for candidate in (
        root / "judge_user_prompt.txt",
        prompts_dir / "judge_user_prompt.txt",
        root / "eval" / "lwm_eval_utils" / "task_configs.py",
        prompts_dir.parent / "eval" / "lwm_eval_utils" / "task_configs.py",
    ):
        if not candidate.is_file():
            continue
        if candidate.suffix == ".py":
            template = _template_from_task_configs(candidate)
        else:
            template = candidate.read_text(encoding="utf-8")
        if template is not None:
            source = str(candidate)
            break
    return ReferenceJudgePrompts(
        system=system,
        user_template=template if template is not None else _OWN_USER_TEMPLATE,
        user_template_source=source,
        folder=str(root),
        files={d: str(f) for d, f in zip(system, files, strict=True)},
    )


def reference_judge_messages(
    record: dict[str, Any], model_output: str, prompts: ReferenceJudgePrompts
) -> list[dict[str, str]]:
    """The reference judge's two messages for one AgentWorldBench ``record``.

    ``model_output`` is the extracted prediction *before* marker cleaning.
    """
    prompts_list, responses = record_lists(record)
    target = max(int(record.get("turn_idx", 1)) - 1, 0)
    context = "".join(
        f"{prompts_list[i]}\n{responses[i]}\n\n"
        for i in range(target)
        if i < len(prompts_list) and i < len(responses)
    )
    if context:
        context = f"# Context (Historical Interactions):\n\n{context}"
    truth = responses[target] if target < len(responses) else ""
    user = prompts.user_template.format(
        context=context,
        world_model_input=f"# Current Turn:\n\n{current_prompt(record)}",
        predicted_observation=(
            f"**World Model Output (Simulated):**\n```\n{clean_marker(model_output)}\n```"
        ),
        ground_truth=f"**Ground Truth (Real Output):**\n```\n{clean_marker(truth)}\n```",
    ).strip()
    return [
        {"role": "system", "content": prompts.system.get(subtask(record.get("task")), "")},
        {"role": "user", "content": user},
    ]


# --------------------------------------------------------------------------- the judge


class ReferenceJudge(UsesProvider):
    """Scores predictions with the reference judge prompts and rules (see the module doc)."""

    kind = "reference"

    def __init__(
        self,
        model: str,
        prompts: ReferenceJudgePrompts,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: AsyncOpenAI | None = None,
        max_tokens: int = REFERENCE_MAX_TOKENS,
        temperature: float = REFERENCE_TEMPERATURE,
        attempts: int = 3,
        timeout: float = REFERENCE_TIMEOUT_S,
        retry_pause_s: float = 2.0,
    ) -> None:
        self.model = model
        self.prompts = prompts
        self.provider = OpenAIProvider.for_judge(
            base_url, api_key, client, max_retries=REFERENCE_RETRIES
        )
        self.base_url = self.provider.base_url
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.attempts = max(1, attempts)
        self.timeout = timeout
        self.retry_pause_s = retry_pause_s

    async def verdict(self, record: dict[str, Any], model_output: str) -> dict[str, Any]:
        """Judge one prediction; the verdict dict stored under ``judge`` in ``judged.jsonl``."""
        messages = reference_judge_messages(record, model_output, self.prompts)
        out: dict[str, Any] = {
            "kind": self.kind,
            "model": self.model,
            "user_template": self.prompts.user_template_source,
            "failed": True,
            "attempts": 0,
            "raw": [],
            "error": None,
        }
        for attempt in range(1, self.attempts + 1):
            out["attempts"] = attempt
            try:
                completion = await self.provider.chat(
                    messages,
                    model=self.model,
                    timeout_s=self.timeout,
                    max_tokens=self.max_tokens,
                    temperature=self.temperature,
                )
            except WorldModelError as exc:
                out["error"] = f"{type(exc).__name__}: {exc}"
                await asyncio.sleep(self.retry_pause_s)
                continue
            text = (completion.choices[0].message.content or "") if completion.choices else ""
            out["raw"].append(text)
            parsed = parse_verdict(text)
            if parsed["success"]:
                out.update(
                    failed=False,
                    error=None,
                    **parsed["scores"],
                    total=parsed["total_score"],
                    strengths=parsed["strengths"],
                    weaknesses=parsed["weaknesses"],
                )
                return out
            out["error"] = f"unusable judge reply: {parsed['error']}"
        return out
