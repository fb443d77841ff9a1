"""Feedback a person typed in the app but has not sent (table ``typed_feedback``).

The app keeps the words of the turn that waits for them as the person types, so a closed
browser tab, a killed server or a crash loses none of them, and puts them back when the
session is opened again. They are working state, not a record: ``turns.save_turn`` removes
them in the transaction that records the turn (sent, continued without words, accepted or
given up), and a session that ends between turns drops them with its new status.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlite_utils import Database

from convtui.sessions.database.connection import rows, writing
from convtui.sessions.database.errors import NotFoundError
from convtui.sessions.database.ids import utc_now
from convtui.sessions.database.records import FINAL_SESSION_STATES


@dataclass(frozen=True)
class TypedFeedback:
    """The unsent words for one turn; ``instruction``: in a CodeIF-Bench session, the
    category of the instruction they are about (None elsewhere, or for the one offered)."""

    turn_idx: int
    text: str
    instruction: str | None
    written_utc: str


def keep(
    db: Database, session_id: str, turn_idx: int, text: str, instruction: str | None = None
) -> bool:
    """Keep ``text`` as the words typed for ``turn_idx``, replacing what was kept; blank text
    removes them. Returns whether words are kept now.

    Nothing is kept for a turn already recorded or a session that has ended: a write still on
    its way from the app when the turn was saved must not bring back words that were sent."""
    with writing(db):
        if not text.strip():
            discard(db, session_id, turn_idx)
            return False
        found = rows(db, "SELECT status FROM sessions WHERE id = ?", (session_id,))
        if not found:
            raise NotFoundError(f"no session {session_id}")
        recorded = db.execute(
            "SELECT 1 FROM turns WHERE session_id = ? AND idx = ?", (session_id, turn_idx)
        ).fetchone()
        if recorded or found[0]["status"] in FINAL_SESSION_STATES:
            return False
        db.execute(
            "INSERT INTO typed_feedback (session_id, turn_idx, text, instruction, written_utc) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (session_id, turn_idx) DO UPDATE SET "
            "text = excluded.text, instruction = excluded.instruction, "
            "written_utc = excluded.written_utc",
            (session_id, turn_idx, text, instruction, utc_now()),
        )
        return True


def kept(db: Database, session_id: str, turn_idx: int) -> TypedFeedback | None:
    """The words kept for ``turn_idx`` of the session, if any."""
    found = rows(
        db,
        "SELECT turn_idx, text, instruction, written_utc FROM typed_feedback "
        "WHERE session_id = ? AND turn_idx = ?",
        (session_id, turn_idx),
    )
    return TypedFeedback(**found[0]) if found else None


def discard(db: Database, session_id: str, turn_idx: int | None = None) -> None:
    """Remove the words kept for ``turn_idx`` (every turn's when None); call inside the
    caller's transaction, so they go with the write that makes them obsolete."""
    if turn_idx is None:
        db.execute("DELETE FROM typed_feedback WHERE session_id = ?", (session_id,))
    else:
        db.execute(
            "DELETE FROM typed_feedback WHERE session_id = ? AND turn_idx = ?",
            (session_id, turn_idx),
        )
