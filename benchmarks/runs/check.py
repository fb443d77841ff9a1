"""``convtui check``: one candidate, its verdict and the feedback a model would receive."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from convtui.core.catalog.tasks import Task
from convtui.core.errors import ConvtuiError
from convtui.core.execution.backend import ExecutionBackend
from convtui.core.execution.types import ExecRequest, ExecResult
from convtui.core.feedback.evaluate import FeedbackSettings, evaluate
from convtui.core.feedback.render import CompileCompat
from convtui.core.models.extract import ExtractMode, extract_code, holds_code
from convtui.core.settings.omega import FeedbackConfig, PartialRule


@dataclass(frozen=True)
class CheckOutcome:
    code: str
    result: ExecResult
    compilation_feedback: str
    execution_feedback: str | None

    def to_json(self) -> dict:
        return {
            "status": self.result.status,
            "detail": self.result.detail,
            "tests": [
                {
                    "name": t.name,
                    "status": t.status,
                    "traceback": t.traceback,
                    "duration_s": t.duration_s,
                }
                for t in self.result.tests
            ],
            "compilation_feedback": self.compilation_feedback,
            "execution_feedback": self.execution_feedback,
            "duration_s": self.result.duration_s,
            "isolation": self.result.isolation,
            "code": self.code,
        }


def check_candidate(
    task: Task,
    reply: str,
    omega: FeedbackConfig,
    executor: ExecutionBackend,
    *,
    partial_rule: PartialRule = "ccw",
    extract: ExtractMode = "robust",
    source_lines: bool = True,
    compile_compat: CompileCompat = "convtui",
    source: str = "the candidate",
) -> CheckOutcome:
    """Run ``reply`` (a model reply or plain Python, named ``source`` in errors) against the
    task's tests, through the turn loop's own evaluate path, so the feedback printed is what a
    model would receive (trimmed, and no execution feedback for code that does not compile).
    A reply with no Python in it at all is refused (ConvtuiError) rather than checked as an
    empty candidate: it is the wrong file, not a wrong solution."""
    if not holds_code(reply, entry_point=task.entry_point):
        raise ConvtuiError(
            f"no Python code in {source}: expected a .py file, or a model reply with a fenced "
            "python block (```python ... ```)"
        )
    code = extract_code(
        reply, header=task.import_header, entry_point=task.entry_point, mode=extract
    )
    settings = FeedbackSettings(
        execution=omega.execution,
        partial_rule=partial_rule,
        source_lines=source_lines,
        compile_compat=compile_compat,
    )

    async def execute(request: ExecRequest) -> ExecResult:
        return executor.run(request)

    done = asyncio.run(evaluate(task, code, settings, execute))
    return CheckOutcome(code, done.result, done.compiled.text, done.execution_feedback)
