"""The one evaluate path: a candidate's code through compilation, execution and the feedback
text a model receives (trimmed as ConvCodeWorld trims it). The turn loop, ``convtui check``
and replays all go through it, so what ``check`` prints is what a model would be sent."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from convtui.core.catalog.tasks import Task
from convtui.core.execution.types import ExecRequest, ExecResult, Limits
from convtui.core.feedback.render import (
    CompileCompat,
    CompileResult,
    PartialRule,
    TrimSpec,
    compile_feedback,
    execution_feedback,
)
from convtui.core.projects.checkout import exec_request
from convtui.core.settings.config import SessionConfig
from convtui.core.settings.omega import ExecutionFeedback
from convtui.core.turns.record import Turn

Execute = Callable[[ExecRequest], Awaitable[ExecResult]]
# ConvCodeWorld's rule, applied to every feedback a model is sent.
CCW_TRIM = TrimSpec()


@dataclass(frozen=True)
class FeedbackSettings:
    """How the harness's feedback is rendered; a session config decides each field."""

    execution: ExecutionFeedback = "full"
    partial_rule: PartialRule = "ccw"
    source_lines: bool = True
    compile_compat: CompileCompat = "convtui"

    @classmethod
    def of(cls, config: SessionConfig) -> FeedbackSettings:
        return cls(
            execution=config.feedback.execution,
            partial_rule=config.partial_rule,
            source_lines=config.ef_source_lines,
            compile_compat="ccw" if config.protocol == "convcodeworld" else "convtui",
        )


@dataclass(frozen=True)
class Evaluation:
    """A candidate's verdict and feedback. ``execution_feedback`` is None when Ω has no EF or
    when the code does not compile (the model is then shown the compilation error alone)."""

    code: str
    compiled: CompileResult
    result: ExecResult
    execution_feedback: str | None

    def turn(self, idx: int, reply: str, **fields: Any) -> Turn:
        """Turn ``idx``, whose ``reply`` gave the code judged here: that code, its verdict and
        the feedback rendered for it. ``fields``: the turn's other fields."""
        return Turn(
            idx=idx,
            reply=reply,
            code=self.code,
            compiled=self.compiled.ok,
            compile_feedback=self.compiled.text,
            execution=self.result,
            execution_feedback=self.execution_feedback,
            **fields,
        )


async def evaluate(
    task: Task,
    code: str,
    settings: FeedbackSettings,
    execute: Execute,
    limits: Limits | None = None,
    trim: TrimSpec | None = CCW_TRIM,
    *,
    program: str | None = None,
) -> Evaluation:
    """Compile and run ``code`` against ``task``'s tests, and render its feedback, trimmed by
    ``trim`` (ConvCodeWorld's rule, cut at 8,000 characters, by default; None: untrimmed).
    ``program`` is what runs when that is not ``code`` itself (BigCodeBench's calibrated
    turn 0 runs the task's code prompt before the solution); ``code`` is still what compiles."""
    compiled = compile_feedback(code, compat=settings.compile_compat)
    result = await execute(exec_request(task, code if program is None else program, limits))
    ef = render_execution(task, result, settings, trim) if compiled.ok else None
    return Evaluation(code, compiled, result, ef)


def render_execution(
    task: Task,
    result: ExecResult,
    settings: FeedbackSettings,
    trim: TrimSpec | None = CCW_TRIM,
) -> str | None:
    """The execution feedback text for ``result``; None when Ω has no EF. ``trim`` as in
    :func:`evaluate`."""
    if settings.execution == "none":
        return None
    visible = None
    if task.tests.kind == "snippets":
        visible = [name for name, _ in task.tests.snippets][:3]
    return execution_feedback(
        result,
        coverage=settings.execution,
        partial_rule=settings.partial_rule,
        test_source=task.tests.source,
        visible=visible,
        trim=trim,
        source_lines=settings.source_lines,
        bcb_messages=settings.compile_compat == "ccw",
    )
