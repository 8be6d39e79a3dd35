"""The result of a sandbox command and its stable text form (:func:`observation`)."""

from __future__ import annotations

from pydantic import BaseModel

__all__ = ["CommandResult", "combine", "ensure_newline", "observation"]


class CommandResult(BaseModel):
    """What one command (or one keystroke action) produced.

    ``exit_code`` is ``None`` when the command timed out, when the shell had to
    be restarted to stop it, or when nothing was executed.
    """

    command: str
    output: str
    exit_code: int | None
    timed_out: bool = False
    duration_s: float = 0.0
    truncated: bool = False


def observation(result: CommandResult) -> str:
    """The text a terminal user would see for ``result``; the format is stable.

    Exactly::

        $ <command>
        <output>

    * line 1 is ``"$ "`` plus the command without its trailing newline; the
      further lines of a multi-line command are prefixed ``"> "`` (bash's PS2);
    * then the output verbatim (stdout and stderr interleaved), plus a
      ``"\\n"`` when it is non-empty and does not end with one;
    * when the output was cut at ``max_output_bytes``, a last line
      ``[output truncated]``;
    * the exit code never appears in the text (it is ``result.exit_code``);
      an interrupted command's output ends with a ``^C`` line, and a keystroke
      action that ran several commands shows each later one as its own
      ``$ <command>`` line inside the output.

    The text always ends with ``"\\n"``.
    """
    command = result.command.rstrip("\n").replace("\n", "\n> ")
    text = f"$ {command}\n{ensure_newline(result.output)}"
    if result.truncated:
        text += "[output truncated]\n"
    return text


def ensure_newline(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def combine(steps: list[CommandResult], typed: str, duration_s: float) -> CommandResult:
    """Fold the commands one action ran into one result, as the screen would show them."""
    if not steps:
        return CommandResult(command=typed, output="", exit_code=None, duration_s=duration_s)
    first, *rest = steps
    output = first.output
    for step in rest:
        command = step.command.replace("\n", "\n> ")
        output = f"{ensure_newline(output)}$ {command}\n{step.output}"
    return CommandResult(
        command=first.command,
        output=output,
        exit_code=steps[-1].exit_code,
        timed_out=any(s.timed_out for s in steps),
        duration_s=round(duration_s, 6),
        truncated=any(s.truncated for s in steps),
    )
