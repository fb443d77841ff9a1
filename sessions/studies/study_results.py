"""What ``convtui study report`` reads from a study database: the sessions that answer the
study's finished assignments, with their verdicts; each annotator's as a log set to replay;
and the simulated users' log sets on the study's tasks, to set beside them.

Reading only; the scores and the agreement are computed in core/ (study_outcomes.py,
study_agreement.py) from what this returns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from convtui.core.settings.omega import FeedbackSource
from convtui.core.settings.persona import PERSONAS
from convtui.sessions.database.connection import rows
from convtui.sessions.database.records import FINAL_SESSION_STATES, SessionRow
from convtui.sessions.database.store import Store
from convtui.sessions.reading.log_sets import LogSet, LogSetFilter, find_log_sets, log_set_of
from convtui.sessions.reading.results import session_turn_passes

_FINAL = tuple(sorted(FINAL_SESSION_STATES))
# The kinds of simulated user a log set can hold: the personas (FeedbackSource less people
# and nobody).
SIMULATED_USERS: tuple[FeedbackSource, ...] = PERSONAS


@dataclass(frozen=True)
class StudySession:
    """A finished session answering ``annotator``'s assignment of its task, with the verdict
    of each turn it recorded (none for a session given up before its first turn)."""

    annotator: str
    session: SessionRow
    passes: tuple[bool, ...]


def finished_sessions(store: Store, study_id: str) -> list[StudySession]:
    """The sessions of the study's done assignments (a reassigned one belongs to whoever
    took it over), in each annotator's order."""
    with store.reading() as db:
        found = rows(
            db,
            "SELECT a.annotator AS study_annotator, s.* FROM study_assignments a "
            "JOIN sessions s ON s.id = a.session_id WHERE a.study_id = ? "
            f"AND a.reassigned_to IS NULL AND s.status IN ({', '.join('?' * len(_FINAL))}) "
            "ORDER BY a.annotator, a.position",
            (study_id, *_FINAL),
        )
    sessions = [SessionRow.from_row(r) for r in found]
    passes = session_turn_passes(store, [s.id for s in sessions])
    return [
        StudySession(r["study_annotator"], s, passes.get(s.id, ()))
        for r, s in zip(found, sessions, strict=True)
    ]


def annotator_log_sets(store: Store, sessions: Sequence[StudySession]) -> dict[str, LogSet]:
    """Annotator -> their finished sessions as a log set, those with a turn to hand on (a
    session given up before its first turn has none); annotators with none are left out."""
    mine: dict[str, list[SessionRow]] = {}
    for s in sessions:
        if s.session.turns_done > 0:
            mine.setdefault(s.annotator, []).append(s.session)
    return {name: log_set_of(store, rows) for name, rows in mine.items()}


def simulated_log_sets(store: Store, task_ids: Sequence[str]) -> list[LogSet]:
    """The log sets of simulated users (novice, expert) holding any of ``task_ids``, cut to
    those tasks: e.g. ``convtui bench live --feedback CF,EF:full,VF:expert --ids …`` recorded
    into the study database."""
    wanted = frozenset(task_ids)
    found: list[LogSet] = []
    for user in SIMULATED_USERS:
        found += find_log_sets(store, LogSetFilter(user=user, task_ids=wanted))
    return sorted(found, key=lambda s: s.name)
