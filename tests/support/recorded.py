"""Hand-built pieces of recorded sessions, for tests that need a session without a dataset,
a model or the sandbox: a made-up task, and a turn whose code compiled and ran."""

from __future__ import annotations

from convtui.core.catalog.tasks import Task, TestSpec
from convtui.core.execution.types import ExecResult
from convtui.core.turns.record import Turn

# A task no dataset holds (its tests are never run: the executor is stubbed where it is used).
_HEADER = "def task_func(x):\n"
ADD_ONE = Task(
    id="BigCodeBench/999999",
    suite="bigcodebench",
    prompt="Add one to x.",
    code_header=_HEADER,
    entry_point="task_func",
    tests=TestSpec("unittest", "class TestCases: pass"),
    ground_truth=_HEADER + "    return x + 1\n",
)


def compiled_turn(
    idx: int,
    code: str,
    execution: ExecResult,
    execution_feedback: str | None,
    *,
    reply: str | None = None,
    **fields: object,
) -> Turn:
    """Turn ``idx``, whose ``code`` compiled and ran to ``execution``; its reply the code in
    a python fence unless ``reply`` says otherwise. ``fields``: the turn's other fields."""
    return Turn(
        idx=idx,
        reply=f"```python\n{code}```" if reply is None else reply,
        code=code,
        compiled=True,
        compile_feedback="No syntax errors",
        execution=execution,
        execution_feedback=execution_feedback,
        **fields,
    )
