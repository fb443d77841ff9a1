"""Writing a finished turn (one transaction) and reading a session's turns back as ``Turn``s.

A turn row, the links to its execution and model calls, and the session counters it moves
(``turns_done``, ``status``, ``first_pass_turn``) commit together, and so do the person's
times on the turn (sessions/database/human_times.py) and the removal of the words typed for the turn
but not sent (sessions/database/typed.py): a process killed at any moment leaves either the whole
turn or none of it, the counters always match the rows, and unsent words never outlive the feedback
they became.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from sqlite_utils import Database

from convtui.core.execution.types import ExecResult
from convtui.core.models.types import Completion
from convtui.core.settings.config import SessionStatus
from convtui.core.turns.record import Turn, TurnFeedback
from convtui.sessions.database import human_times, typed
from convtui.sessions.database.blobs import get_texts, put_text, put_texts
from convtui.sessions.database.codec import (
    message_hashes,
    messages_from_refs,
    messages_to_refs,
    notes_from_json,
    notes_to_json,
)
from convtui.sessions.database.connection import reading, rows, writing
from convtui.sessions.database.errors import NotFoundError
from convtui.sessions.database.executions import load_executions, record_execution
from convtui.sessions.database.human_times import HumanTurnTimes
from convtui.sessions.database.ids import utc_now
from convtui.sessions.database.journal import link_call, load_calls


def save_turn(
    db: Database,
    session_id: str,
    turn: Turn,
    status: SessionStatus,
    execution_key: str | None,
    times: HumanTurnTimes | None = None,
) -> bool:
    """Record ``turn`` and move the session on; False when the turn was already recorded (a
    replay after a crash between the commit and the caller noticing it). ``times``: how long
    the person who answered the turn took over it, recorded with it."""
    with writing(db):
        found = rows(db, "SELECT task_id, turns_done FROM sessions WHERE id = ?", (session_id,))
        if not found:
            raise NotFoundError(f"no session {session_id}")
        session = found[0]
        done = db.execute(
            "SELECT 1 FROM turns WHERE session_id = ? AND idx = ?", (session_id, turn.idx)
        ).fetchone()
        if done:
            return False
        if turn.idx != session["turns_done"]:
            # Turns are recorded in order; a gap would break "turns_done = number of turns".
            raise ValueError(
                f"session {session_id} has {session['turns_done']} turns; cannot record "
                f"turn {turn.idx}"
            )
        execution_id = None
        if turn.execution is not None:
            execution_id = record_execution(
                db, execution_key, session["task_id"], turn.code, turn.execution
            )
        generate_id = simulate_id = None
        if turn.generate_call is not None:
            generate_id = link_call(
                db,
                session_id,
                turn.idx,
                "generate",
                turn.generate_call,
                turn.prompt,
                turn.prompt_hash,
            )
        if turn.simulate_call is not None:
            simulate_id = link_call(db, session_id, turn.idx, "simulate", turn.simulate_call)
        prompt_json, texts = messages_to_refs(turn.prompt)
        put_texts(db, texts)
        now = utc_now()
        columns: dict[str, Any] = {
            "session_id": session_id,
            "idx": turn.idx,
            "reply_blob": put_text(db, turn.reply),
            "code_blob": put_text(db, turn.code),
            "compiled": int(turn.compiled),
            "compile_feedback": turn.compile_feedback,
            "execution_id": execution_id,
            "execution_feedback": turn.execution_feedback,
            "verbal_feedback": turn.verbal_feedback,
            "feedback_source": turn.feedback_source,
            "generate_call_id": generate_id,
            "simulate_call_id": simulate_id,
            "prompt_json": prompt_json,
            "prompt_hash": turn.prompt_hash,
            "notes_json": notes_to_json(turn.notes),
            "feedback_draft": turn.feedback_draft,
            "feedback_edited": None if turn.feedback_edited is None else int(turn.feedback_edited),
            "received_json": None if turn.received is None else json.dumps(asdict(turn.received)),
            "passed": int(turn.passed),
            "created_utc": now,
        }
        names = ", ".join(columns)
        marks = ", ".join("?" * len(columns))
        db.execute(f"INSERT INTO turns ({names}) VALUES ({marks})", list(columns.values()))
        db.execute(
            "UPDATE sessions SET turns_done = ?, status = ?, updated_utc = ?, "
            "first_pass_turn = coalesce(first_pass_turn, ?) WHERE id = ?",
            (turn.idx + 1, status, now, turn.idx if turn.passed else None, session_id),
        )
        if times is not None:
            human_times.record(db, session_id, turn.idx, times)
        # The words typed for this turn are in the turn now (or were given up on with it).
        typed.discard(db, session_id, turn.idx)
        return True


def load_turns(db: Database, session_id: str) -> list[Turn]:
    """The session's turns in order, as equal ``Turn`` values to those that were saved."""
    with reading(db):
        turn_rows = rows(db, "SELECT * FROM turns WHERE session_id = ? ORDER BY idx", (session_id,))
        executions = load_executions(
            db, (r["execution_id"] for r in turn_rows if r["execution_id"] is not None)
        )
        calls = load_calls(
            db,
            (
                call_id
                for r in turn_rows
                for call_id in (r["generate_call_id"], r["simulate_call_id"])
                if call_id is not None
            ),
        )
        hashes = [h for r in turn_rows for h in (r["reply_blob"], r["code_blob"])]
        hashes += [h for r in turn_rows for h in message_hashes(r["prompt_json"])]
        texts = get_texts(db, hashes)
    return [_turn(r, texts, executions, calls) for r in turn_rows]


def _turn(
    row: Mapping[str, Any],
    texts: Mapping[str, str],
    executions: Mapping[int, ExecResult],
    calls: Mapping[str, Completion],
) -> Turn:
    def call(column: str) -> Completion | None:
        return None if row[column] is None else calls[row[column]]

    execution_id = row["execution_id"]
    return Turn(
        idx=row["idx"],
        reply=texts[row["reply_blob"]],
        code=texts[row["code_blob"]],
        compiled=bool(row["compiled"]),
        compile_feedback=row["compile_feedback"],
        execution=None if execution_id is None else executions[execution_id],
        execution_feedback=row["execution_feedback"],
        verbal_feedback=row["verbal_feedback"],
        feedback_source=row["feedback_source"],
        generate_call=call("generate_call_id"),
        simulate_call=call("simulate_call_id"),
        prompt=messages_from_refs(row["prompt_json"], texts),
        prompt_hash=row["prompt_hash"],
        notes=notes_from_json(row["notes_json"]),
        feedback_draft=row["feedback_draft"],
        received=(
            None
            if row["received_json"] is None
            else TurnFeedback(**json.loads(row["received_json"]))
        ),
    )


def turn_times(db: Database, session_id: str) -> dict[int, str]:
    """When each of the session's turns was recorded (UTC ISO-8601), by turn index: ``Turn``
    carries no time, and a shared transcript wants one."""
    found = rows(db, "SELECT idx, created_utc FROM turns WHERE session_id = ?", (session_id,))
    return {r["idx"]: r["created_utc"] for r in found}
