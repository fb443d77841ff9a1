"""Reading runs back for reports: one outcome per session, one summary per run.

Metrics are not computed here: ``convtui report`` feeds these outcomes to
``convtui.core.metrics.scores`` (Pass@1 per turn, MRR, Recall), the one place they are defined.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from convtui.core.settings.config import SessionStatus
from convtui.sessions.database.connection import rows
from convtui.sessions.database.leases import held_by_other, this_host
from convtui.sessions.database.records import (
    FINAL_SESSION_STATES,
    Benchmark,
    RunKind,
    RunMode,
    RunState,
    SessionRow,
)
from convtui.sessions.database.store import Store


@dataclass(frozen=True)
class SessionOutcome:
    """One session's result: ``first_pass_turn`` is the index of its first passing turn
    (0 = the first attempt), None if it never passed."""

    run_id: str
    session_id: str
    task_id: str
    model: str
    feedback: str
    status: SessionStatus
    first_pass_turn: int | None
    turns_done: int
    max_turns: int

    @property
    def finished(self) -> bool:
        return self.status in FINAL_SESSION_STATES


def run_outcomes(store: Store, run_ids: Sequence[str] | None = None) -> list[SessionOutcome]:
    """The outcome of every session of the given runs (all benchmark runs when None), ordered
    by run and creation. Interactive sessions, which belong to no run, are not included.

    A database may hold several runs of one model and feedback configuration; choose the runs
    explicitly to keep each task counted once."""
    found = _rows_of_runs(
        store,
        "SELECT run_id, id AS session_id, task_id, model, feedback, status, first_pass_turn, "
        "turns_done, max_turns FROM sessions WHERE run_id IS NOT NULL",
        run_ids,
        column="run_id",
        order="run_id, id",
    )
    return [SessionOutcome(**row) for row in found]


def _rows_of_runs(
    store: Store,
    sql: str,
    run_ids: Sequence[str] | None,
    *,
    order: str,
    column: str = "s.run_id",
    params: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """The rows of ``sql`` (which ends in a WHERE clause) whose ``column`` names one of
    ``run_ids`` (any run's when None; none when empty), ordered by ``order``."""
    if run_ids is not None:
        if not run_ids:
            return []
        sql += f" AND {column} IN ({', '.join('?' * len(run_ids))})"
        params = [*params, *run_ids]
    with store.reading() as db:
        return rows(db, f"{sql} ORDER BY {order}", params)


def run_turn_passes(
    store: Store, run_ids: Sequence[str] | None = None
) -> dict[str, tuple[bool, ...]]:
    """Session id -> the verdict of each turn it recorded, in turn order (True = the turn's
    code passed), for the sessions of the given runs (all benchmark runs when None). A session
    with no recorded turn is absent. Turns that never ran are not invented here: see
    ``convtui.core.metrics.scores.carry_forward``."""
    found = _rows_of_runs(
        store,
        "SELECT t.session_id, t.passed FROM turns t JOIN sessions s ON s.id = t.session_id "
        "WHERE s.run_id IS NOT NULL",
        run_ids,
        order="t.session_id, t.idx",
    )
    passes: dict[str, list[bool]] = defaultdict(list)
    for row in found:
        passes[row["session_id"]].append(bool(row["passed"]))
    return {session_id: tuple(verdicts) for session_id, verdicts in passes.items()}


@dataclass(frozen=True)
class RunSummary:
    id: str
    kind: RunKind
    model: str
    simulator: str | None
    feedback: tuple[str, ...]
    selection: str
    max_turns: int
    status: RunState
    created_utc: str
    finished_utc: str | None
    code_version: str
    sessions: int
    finished_sessions: int
    solved_sessions: int
    turns: int
    held: bool  # a live process is driving it right now

    @property
    def resumable(self) -> bool:
        """Unfinished and nobody driving it: a run killed mid-way looks like this."""
        return self.status != "done" and not self.held


def list_runs(store: Store) -> list[RunSummary]:
    """Every run, newest first, with its progress."""
    final = sorted(FINAL_SESSION_STATES)
    marks = ", ".join("?" * len(final))
    with store.reading() as db:
        found = rows(
            db,
            "SELECT r.*, count(s.id) AS sessions, "
            f"coalesce(sum(s.status IN ({marks})), 0) AS finished_sessions, "
            "coalesce(sum(s.status = 'solved'), 0) AS solved_sessions, "
            "coalesce(sum(s.turns_done), 0) AS turns "
            "FROM runs r LEFT JOIN sessions s ON s.run_id = r.id "
            "GROUP BY r.id ORDER BY r.id DESC",
            final,
        )
    host = this_host()
    return [
        RunSummary(
            id=row["id"],
            kind=row["kind"],
            model=row["model"],
            simulator=row["simulator"],
            feedback=tuple(json.loads(row["feedback_json"])),
            selection=row["selection"],
            max_turns=row["max_turns"],
            status=row["status"],
            created_utc=row["created_utc"],
            finished_utc=row["finished_utc"],
            code_version=row["code_version"],
            sessions=row["sessions"],
            finished_sessions=row["finished_sessions"],
            solved_sessions=row["solved_sessions"],
            turns=row["turns"],
            # Seen from a process that is not the holder (pid 0 never holds a lease).
            held=held_by_other(row["pid"], row["host"], row["lease_until_utc"], 0, host),
        )
        for row in found
    ]


@dataclass(frozen=True)
class StaticOutcome(SessionOutcome):
    """One replayed (static) session's result with what its scores need besides: the
    reference session it replayed, the reference's model, and who gave the feedback it was
    handed."""

    reference_session_id: str
    reference_model: str
    user_kind: str
    simulator: str | None
    annotator: str | None


def static_outcomes(store: Store, run_ids: Sequence[str] | None = None) -> list[StaticOutcome]:
    """The replayed sessions of the given static runs (every static run when None; live run
    ids among ``run_ids`` select nothing here), ordered by run and creation. The reference
    session may belong to no run (a person's session recorded in the TUI)."""
    found = _rows_of_runs(
        store,
        "SELECT s.run_id, s.id AS session_id, s.task_id, s.model, s.feedback, s.status, "
        "s.first_pass_turn, s.turns_done, s.max_turns, s.reference_session_id, "
        "ref.model AS reference_model, s.user_kind, s.simulator, s.annotator "
        "FROM sessions s JOIN runs r ON r.id = s.run_id "
        "JOIN sessions ref ON ref.id = s.reference_session_id WHERE r.kind = 'static'",
        run_ids,
        order="s.run_id, s.id",
    )
    return [StaticOutcome(**row) for row in found]


def session_turn_passes(store: Store, session_ids: Sequence[str]) -> dict[str, tuple[bool, ...]]:
    """Session id -> the verdict of each turn it recorded, for any sessions (a run's or not);
    like :func:`run_turn_passes`, a session with no recorded turn is absent."""
    passes: dict[str, list[bool]] = defaultdict(list)
    ids = sorted(set(session_ids))
    with store.reading() as db:
        # SQLite caps bound parameters per statement: ask in slices.
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            found = db.execute(
                "SELECT session_id, passed FROM turns WHERE session_id IN "
                f"({', '.join('?' * len(chunk))}) ORDER BY session_id, idx",
                chunk,
            ).fetchall()
            for session_id, passed in found:
                passes[session_id].append(bool(passed))
    return {session_id: tuple(verdicts) for session_id, verdicts in passes.items()}


@dataclass(frozen=True)
class BenchmarkSession:
    """A session of a run of one benchmark, with its run's mode and selection (whose other
    fields, such as a CodeIF-Bench run's protocol, describe the run further)."""

    run_id: str
    session_id: str
    task_id: str
    model: str
    status: SessionStatus
    mode: RunMode
    selection: str


def benchmark_sessions(
    store: Store, benchmark: Benchmark, run_ids: Sequence[str] | None = None
) -> list[BenchmarkSession]:
    """The sessions of the runs of ``benchmark`` (among ``run_ids`` when given), ordered by
    run and creation."""
    found = _rows_of_runs(
        store,
        "SELECT s.run_id, s.id AS session_id, s.task_id, s.model, s.status, r.mode, "
        "r.selection FROM sessions s JOIN runs r ON r.id = s.run_id WHERE r.benchmark = ?",
        run_ids,
        order="s.run_id, s.id",
        params=(benchmark,),
    )
    return [BenchmarkSession(**row) for row in found]


def app_sessions(store: Store, task_prefix: str) -> list[SessionRow]:
    """The sessions recorded in the app (in no run) of tasks whose id starts with
    ``task_prefix`` that recorded at least one turn, newest first."""
    with store.reading() as db:
        found = rows(
            db,
            "SELECT * FROM sessions WHERE run_id IS NULL AND turns_done > 0 "
            "AND substr(task_id, 1, ?) = ? ORDER BY id DESC",
            (len(task_prefix), task_prefix),
        )
    return [SessionRow.from_row(row) for row in found]
