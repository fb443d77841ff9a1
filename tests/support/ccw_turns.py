"""One ConvCodeWorld feedback turn played on fixed inputs: the candidates, the scripted
replies and the execution results that tests/core/test_ccw_turn.py checks prompt by prompt
and tests/benchmarks/test_ccw_loop_combinations.py plays through the turn loop."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from convtui.core.catalog.tasks import Task
from convtui.core.ccw.turn import ModelCall, Reply, TurnInputs, TurnOutcome, run_turn
from convtui.core.feedback.render import execution_feedback

TASK_IDS = ("BigCodeBench/7", "BigCodeBench/100", "BigCodeBench/1")


# --- execution results as the feedback functions read them ---------------------------------------


@dataclass(frozen=True)
class Outcome:
    name: str
    status: str
    traceback: str = ""


@dataclass(frozen=True)
class Result:
    status: str
    detail: str = ""
    tests: tuple[Outcome, ...] = ()
    error_message: str = ""
    error_traceback: str = ""


# --- candidates, replies and execution results ----------------------------------------------------

BROKEN_CODE = (
    "def task_func(csv_file_path):\n    with open(csv_file_path) as f\n        return f.read()\n"
)
FAILING_CODE = "def task_func(*args, **kwargs):\n    return None\n"
REPAIRED_CODE = (
    "def task_func(csv_file_path):\n    with open(csv_file_path) as f:\n        return f.read()"
)
BROKEN_AGAIN = "def task_func(x)\n    return x"
REFINED_CODE = "def task_func(*args, **kwargs):\n    return 'refined'"


def code_reply(code: str) -> str:
    """A completion that follows DSPy's format: the rationale, then the Code field."""
    return f" produce the generated_code. We fix the code.\n\nCode: ```python\n{code}\n```"


SIM_REPLY = (
    " produce the user_feedback. We compare the code.\n\n"
    "User Feedback: The function returns the wrong value.\n```python\nreturn 2\n```\n"
    "More text.\n---\nignored"
)
# CCW:convcodeworld/pot.py:532-536: cut at '---' (and at two blank lines); the expert's also at a
# code fence.
UF_EXPERT = "The function returns the wrong value."
UF_NOVICE = "The function returns the wrong value.\n```python\nreturn 2\n```\nMore text.\n"

# Failing tests per task: the first is among the three names partial coverage shows
# (`setUp, tearDown, test_case_1` for /7), the second is not.
FAILING = {
    "BigCodeBench/7": ("test_case_1", "test_case_2"),
    "BigCodeBench/100": ("test_random_seed_effect", "test_value"),
    "BigCodeBench/1": ("test_zero_length", "test_negative_length"),
}
SYNTAX_DETAIL = "expected ':' (__test__.py, line 6)"


def traceback_of(name: str) -> str:
    """The traceback a failing test `name` of these tasks leaves."""
    return (
        f'Traceback (most recent call last):\n  File "__test__.py", line 40, in {name}\n'
        "AssertionError: None != 'Product B'\n"
    )


def failing_result(task: Task) -> Result:
    return Result(
        "fail", tests=tuple(Outcome(n, "fail", traceback_of(n)) for n in FAILING[task.id])
    )


def syntax_error_result(task: Task) -> Result:
    return Result("error", SYNTAX_DETAIL, tuple(Outcome(n, "not_run") for n in FAILING[task.id]))


def ef_text(result: Result, task: Task, coverage: str) -> str | None:
    """The caller's job: the previous code's execution feedback, untrimmed."""
    if coverage == "none":
        return None
    return execution_feedback(result, coverage=coverage, test_source=task.tests.source)


@dataclass(frozen=True)
class Candidate:
    """A previous turn's code (less the task's import header), the result the reference's
    execution gives it, and what the scripted model repairs it to."""

    code: str
    result: Callable[[Task], Result]
    repair: str = REPAIRED_CODE


CANDIDATES = {
    "repaired": Candidate(BROKEN_CODE, syntax_error_result),
    "stays broken": Candidate(BROKEN_CODE, syntax_error_result, BROKEN_AGAIN),
    "fails tests": Candidate(FAILING_CODE, failing_result),
}


class Script:
    """Answers by purpose: repairs with ``repair``, refinements with REFINED_CODE, the
    simulator with SIM_REPLY; records every call."""

    def __init__(self, repair: str = REPAIRED_CODE, replies: list[Reply] | None = None) -> None:
        self.repair = repair
        self.replies = list(replies or [])
        self.calls: list[ModelCall] = []

    def __call__(self, call: ModelCall) -> Reply:
        self.calls.append(call)
        if self.replies:
            return self.replies.pop(0)
        if call.role == "simulator":
            return SIM_REPLY
        if call.purpose == "repair":
            return code_reply(self.repair)
        return code_reply(REFINED_CODE)


def turn_inputs(task: Task, previous: str, result: Result, ef: str, user: str) -> TurnInputs:
    """A feedback turn's inputs: the ``previous`` code (header included), and under EF ``ef``
    the feedback on its ``result``."""
    return TurnInputs(
        prompt=task.prompt,
        previous_code=previous,
        execution=ef,
        execution_feedback=ef_text(result, task, ef),
        user=user,
        ground_truth=task.ground_truth,
    )


def reference_turn(
    task: Task, previous: str, result: Result, ef: str, user: str, script: Script
) -> TurnOutcome:
    """The reference's turn (pot.py forward) on those inputs, ``script`` answering its calls."""
    return run_turn(turn_inputs(task, previous, result, ef, user), script)


COMBINATIONS = [
    (ef, user) for ef in ("none", "partial", "full") for user in ("none", "novice", "expert")
]
