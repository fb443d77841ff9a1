"""A person's time on each turn they answered in the app (table ``human_turn_times``, m012).

The app measures it (tui/turn_timer.py) and hands it to ``save_turn``, which writes it in the
transaction that records the turn (sessions/database/turns.py), so a turn and its times are recorded
together or not at all. Readers: ``sessions show``, ``study report``, ``study export``.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from sqlite_utils import Database

from convtui.sessions.database.connection import rows, rows_in

_COLUMNS = (
    "shown_utc",
    "first_key_utc",
    "sent_utc",
    "shown_to_sent_s",
    "typing_s",
    "keystrokes",
    "resumed",
)


@dataclass(frozen=True)
class HumanTurnTimes:
    """How long a person took over one turn (UTC times as the store writes them; seconds
    measured on the app's monotonic clock, so a change of the wall clock does not move them).

    ``shown_utc``: when the turn's code and test results were first shown to them, the turn
    waiting for their feedback. ``first_key_utc``: their first keystroke in the composer for
    the words they sent (earlier than ``shown_utc`` when they typed while the turn was being
    made; None when they typed nothing). ``sent_utc``: when they sent, continued without
    words or ended the session. ``shown_to_sent_s``: the seconds between shown and sent.
    ``typing_s``: the seconds spent typing (tui/turn_timer.py ``typing_seconds``: the
    intervals between keystrokes, a long pause counted as thinking). ``keystrokes``: the
    keystrokes that changed the text (typing, deleting, pasting).

    ``resumed``: the session was opened again (the app closed or was killed) after this turn
    may already have been shown; what happened before that is unknown, so every field but
    ``sent_utc`` is None rather than a guess."""

    sent_utc: str
    shown_utc: str | None = None
    first_key_utc: str | None = None
    shown_to_sent_s: float | None = None
    typing_s: float | None = None
    keystrokes: int | None = None
    resumed: bool = False

    def unknown_before_sent(self) -> HumanTurnTimes:
        """These times for a turn shown before the session was reopened: only the sending
        is known."""
        return HumanTurnTimes(self.sent_utc, resumed=True)


def record(db: Database, session_id: str, turn_idx: int, times: HumanTurnTimes) -> None:
    """Write ``times`` for the turn; call inside the transaction that records the turn."""
    values = [getattr(times, name) for name in _COLUMNS]
    values[-1] = int(times.resumed)
    db.execute(
        f"INSERT INTO human_turn_times (session_id, turn_idx, {', '.join(_COLUMNS)}) "
        f"VALUES (?, ?, {', '.join('?' * len(_COLUMNS))})",
        [session_id, turn_idx, *values],
    )


def load(db: Database, session_ids: Collection[str]) -> dict[str, dict[int, HumanTurnTimes]]:
    """Session id -> turn index -> times, for the turns of ``session_ids`` that have any."""
    found: dict[str, dict[int, HumanTurnTimes]] = {}
    for row in rows_in(
        db,
        f"SELECT session_id, turn_idx, {', '.join(_COLUMNS)} FROM human_turn_times "
        "WHERE session_id IN ({marks}) ORDER BY session_id, turn_idx",
        list(session_ids),
    ):
        values = {name: row[name] for name in _COLUMNS}
        values["resumed"] = bool(values["resumed"])
        found.setdefault(row["session_id"], {})[row["turn_idx"]] = HumanTurnTimes(**values)
    return found


def may_have_been_shown(db: Database, session_id: str, turn_idx: int) -> bool:
    """Whether a turn not recorded yet may already have been shown to the person before the
    session was opened now: one of its model calls finished (its code could be on screen),
    or words typed for it were kept. Its times before now are then unknown."""
    called = rows(
        db,
        "SELECT 1 FROM model_calls WHERE session_id = ? AND turn_idx = ? AND status = 'ok' LIMIT 1",
        (session_id, turn_idx),
    )
    typed = rows(
        db,
        "SELECT 1 FROM typed_feedback WHERE session_id = ? AND turn_idx = ?",
        (session_id, turn_idx),
    )
    return bool(called or typed)
