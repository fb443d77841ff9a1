"""What the widgets show, as frozen values built from core results: widgets never see store
rows or core objects they could mutate."""

from __future__ import annotations

from dataclasses import dataclass

from convtui.core.execution.types import ExecResult
from convtui.core.turns.record import Turn, TurnFeedback


@dataclass(frozen=True)
class TestRow:
    __test__ = False  # not a pytest class
    name: str
    status: str
    duration_s: float
    traceback: str

    @property
    def first_line(self) -> str:
        lines = [line for line in self.traceback.strip().splitlines() if line.strip()]
        return lines[-1].strip() if lines else ""


@dataclass(frozen=True)
class ResultView:
    status: str
    passed: int
    total: int
    detail: str
    rows: tuple[TestRow, ...]
    duration_s: float
    run_traceback: str = ""
    """The traceback of what the code raised while loading, before any test ran."""

    @property
    def summary(self) -> str:
        return f"{self.passed}/{self.total} passed"


@dataclass(frozen=True)
class TurnView:
    """One turn as the screen shows it: recorded (``saved``) or the live one in progress."""

    idx: int
    reply: str = ""
    code: str = ""
    result: ResultView | None = None
    compile_feedback: str = ""
    execution_feedback: str | None = None
    verbal_feedback: str | None = None
    feedback_source: str = "none"
    feedback_draft: str | None = None
    received: TurnFeedback | None = None
    """The feedback the turn's own calls were given, where the protocol gives it inside the
    turn (convcodeworld: the simulated user's words are here, not in ``verbal_feedback``)."""
    saved: bool = False

    @property
    def passed(self) -> bool:
        return self.result is not None and self.result.status == "pass"

    @property
    def edited(self) -> bool | None:
        if self.feedback_draft is None:
            return None
        return self.feedback_draft != (self.verbal_feedback or "")


def result_view(result: ExecResult) -> ResultView:
    passed, total = result.counts()
    rows = tuple(TestRow(t.name, t.status, t.duration_s, t.traceback) for t in result.tests)
    return ResultView(
        result.status,
        passed,
        total,
        result.detail,
        rows,
        result.duration_s,
        run_traceback=result.error_traceback,
    )


def turn_view(turn: Turn) -> TurnView:
    return TurnView(
        idx=turn.idx,
        reply=turn.reply,
        code=turn.code,
        result=result_view(turn.execution) if turn.execution is not None else None,
        compile_feedback=turn.compile_feedback,
        execution_feedback=turn.execution_feedback,
        verbal_feedback=turn.verbal_feedback,
        feedback_source=turn.feedback_source,
        feedback_draft=turn.feedback_draft,
        received=turn.received,
        saved=True,
    )
