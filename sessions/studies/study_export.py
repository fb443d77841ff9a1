"""A study's transcripts as rows, one per recorded turn, for sharing (``convtui study export``).

The store is read in one snapshot (the study, its assignments, each linked session through
the same reader ``sessions show`` uses); the rows are pure functions of what it hands back, so
the same database always gives the same rows. Writing them is sessions/studies/study_dataset.py's
job, the dataset card sessions/studies/study_card.py's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from convtui.core.turns.record import Turn
from convtui.sessions.database.human_times import HumanTurnTimes
from convtui.sessions.database.store import Store
from convtui.sessions.database.turns import turn_times
from convtui.sessions.reading.browse import SessionDetail, load_session
from convtui.sessions.studies.study_rows import AssignmentRow, StudyRow, assignments, load_study

# Who gave a piece of feedback, as the store tells them apart: the compiler (f_c), the tests
# (f_e), and the verbal feedback (f_v) of a person or of a simulator (turns.feedback_source).
FeedbackSource = Literal["compilation", "execution", "verbal-human", "verbal-simulated"]


@dataclass(frozen=True)
class StudySession:
    """One exported session: the assignment it answers, the session in full, and when each
    of its turns was recorded."""

    assignment: AssignmentRow
    detail: SessionDetail
    recorded: Mapping[int, str]

    @property
    def annotator(self) -> str:
        return self.assignment.annotator


@dataclass(frozen=True)
class StudyTranscripts:
    """What an export holds: the study, every assignment (pending ones too, for the card's
    counts) and the sessions exported, in each annotator's order."""

    study: StudyRow
    assignments: tuple[AssignmentRow, ...]
    sessions: tuple[StudySession, ...]
    finished_only: bool

    def rows(self) -> list[dict[str, Any]]:
        return [
            turn_row(self.study, s.assignment, s.detail, turn, s.recorded[turn.idx])
            for s in self.sessions
            for turn in s.detail.turns
        ]


def read_study_transcripts(store: Store, *, finished_only: bool = False) -> StudyTranscripts:
    """The database's study and the sessions that answer its assignments (only finished
    ones with ``finished_only``), in one read snapshot. StudyError when it holds no study."""
    with store.reading() as db:
        study = load_study(store)
        given = assignments(store, study.id)
        sessions = []
        for row in given:
            if row.session_id is None:
                continue
            detail = load_session(store, row.session_id)
            if finished_only and not detail.session.finished:
                continue
            sessions.append(StudySession(row, detail, turn_times(db, row.session_id)))
    return StudyTranscripts(study, tuple(given), tuple(sessions), finished_only)


def turn_row(
    study: StudyRow,
    assignment: AssignmentRow,
    detail: SessionDetail,
    turn: Turn,
    recorded_utc: str,
) -> dict[str, Any]:
    """One turn as a row of the shared table; the columns are described once, in
    sessions/studies/study_dataset.py ``COLUMNS``."""
    session, config = detail.session, detail.config
    execution = turn.execution
    passed, total = execution.counts() if execution is not None else (None, None)
    times = detail.times.get(turn.idx)
    return {
        "study": study.name,
        "task_id": session.task_id,
        "annotator": assignment.annotator,
        "assignment_state": assignment.state,
        "reassigned_to": assignment.reassigned_to,
        "session_id": session.id,
        "session_status": session.status,
        "turn": turn.idx,
        "turns_done": session.turns_done,
        "first_pass_turn": session.first_pass_turn,
        "model": session.model,
        "protocol": config.protocol,
        "omega": session.feedback,
        "context": config.context,
        "user_kind": session.user_kind,
        "max_turns": session.max_turns,
        "reply": turn.reply,
        "code": turn.code,
        "compiled": turn.compiled,
        "verdict": None if execution is None else execution.status,
        "passed": turn.passed,
        "tests_passed": passed,
        "tests_total": total,
        "feedback": [{"source": source, "text": text} for source, text in feedback_given(turn)],
        "verbal_source": turn.feedback_source,
        "feedback_draft": turn.feedback_draft,
        "feedback_edited": turn.feedback_edited,
        "notes": list(turn.notes),
        "config_hash": config.config_hash,
        "session_created_utc": utc(session.created_utc),
        "session_updated_utc": utc(session.updated_utc),
        "turn_created_utc": utc(recorded_utc),
        **_times_columns(times),
    }


def _times_columns(times: HumanTurnTimes | None) -> dict[str, Any]:
    """The person's time on the turn (sessions/database/human_times.py); nulls where none."""
    if times is None:
        return dict.fromkeys(
            ("shown_utc", "first_key_utc", "sent_utc", "shown_to_sent_s", "typing_s", "keystrokes")
        )
    return {
        "shown_utc": _maybe_utc(times.shown_utc),
        "first_key_utc": _maybe_utc(times.first_key_utc),
        "sent_utc": _maybe_utc(times.sent_utc),
        "shown_to_sent_s": times.shown_to_sent_s,
        "typing_s": times.typing_s,
        "keystrokes": times.keystrokes,
    }


def _maybe_utc(stamp: str | None) -> datetime | None:
    return utc(stamp) if stamp else None


def feedback_given(turn: Turn) -> list[tuple[FeedbackSource, str]]:
    """The feedback about ``turn``'s code, in the order the next prompt states it: the
    compiler's, the tests' (None when Ω has no EF), then the verbal feedback, if any words
    were given, labelled by whether a simulator wrote them (an edited draft is a person's:
    core/turns/record.py ``Turn``)."""
    given: list[tuple[FeedbackSource, str]] = [("compilation", turn.compile_feedback)]
    if turn.execution_feedback is not None:
        given.append(("execution", turn.execution_feedback))
    if turn.verbal_feedback:
        simulated = turn.feedback_source.startswith("simulator:")
        given.append(("verbal-simulated" if simulated else "verbal-human", turn.verbal_feedback))
    return given


def utc(stamp: str) -> datetime:
    """A store timestamp (``2026-05-09T07:35:25.123456Z``) as an aware datetime."""
    return datetime.fromisoformat(stamp)
