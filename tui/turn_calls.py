"""A session's model calls by turn, for the calls list of the turn view, and a journal that
says when they change.

Every call of a turn (the code call, ConvCodeWorld's repairs and stale-EF call, the
simulator) is a ``model_calls`` row from the moment it starts (sessions/database/journal.py), so the
list of a live turn grows as the turn makes them; ``sessions.reading.browse.session_calls`` reads
them, as ``convtui sessions show`` does.

Runs on the app's runner thread (SQLite is never read on the event loop)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from convtui.core.errors import ConvtuiError
from convtui.core.models.types import (
    Attempt,
    CallPurpose,
    Completion,
)
from convtui.core.turns.journal import CallJournal, CallRequest
from convtui.sessions import Store
from convtui.sessions.reading.browse import CallLine, session_calls

TurnCalls = dict[int, tuple[CallLine, ...]]


def read_calls(store: Store | None, session_id: str, turn_idx: int | None = None) -> TurnCalls:
    """The session's calls (or one turn's) by turn, in the order made. Empty when there is
    no store or it cannot be read: the list is a view, never a reason for a turn to fail."""
    if store is None:
        return {}
    try:
        found = session_calls(store, session_id, turn_idx)
    except (sqlite3.Error, ConvtuiError):
        return {}
    calls: dict[int, list[CallLine]] = {} if turn_idx is None else {turn_idx: []}
    for line in found:
        calls.setdefault(line.turn_idx, []).append(line)
    return {idx: tuple(lines) for idx, lines in calls.items()}


class WatchedJournal:
    """The store's ``CallJournal`` for the turn loop, telling ``changed(turn_idx)`` after a
    call of that turn starts, ends or is answered from the journal (the rows are written
    by then)."""

    def __init__(self, journal: CallJournal, changed: Callable[[int], None]) -> None:
        self._journal = journal
        self._changed = changed
        self._turn_of: dict[str, int] = {}
        self.session_id = journal.session_id

    def find(
        self, turn_idx: int, purpose: CallPurpose, request_hash: str, *, seq: int = 0
    ) -> Completion | None:
        found = self._journal.find(turn_idx, purpose, request_hash, seq=seq)
        if found is not None:
            self._changed(turn_idx)
        return found

    def started(self, call: CallRequest) -> str:
        call_id = self._journal.started(call)
        self._turn_of[call_id] = call.turn_idx
        self._changed(call.turn_idx)
        return call_id

    def attempt(self, call_id: str, attempt: Attempt) -> None:
        self._journal.attempt(call_id, attempt)

    def finished(self, call_id: str, completion: Completion | None, error: str = "") -> None:
        self._journal.finished(call_id, completion, error)
        turn_idx = self._turn_of.pop(call_id, None)
        if turn_idx is not None:
            self._changed(turn_idx)
