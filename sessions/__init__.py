"""convtui.sessions: persistence of runs, sessions, turns, model calls and executions in one
SQLite file (schema in SCHEMA.md). Front ends use :class:`Store`, the report readers in
:mod:`convtui.sessions.results`, the browsing helpers in :mod:`convtui.sessions.browse` and the
exports in :mod:`convtui.sessions.export`."""

# First, so that no store drags pandas and numpy in with sqlite-utils (lean_sqlite_utils.py).
import convtui.sessions.lean_sqlite_utils  # noqa: F401  # isort: skip
from convtui.sessions.codec import run_config_hash
from convtui.sessions.errors import (
    AmbiguousIdError,
    ExportError,
    NotFoundError,
    RunLeasedError,
    StoreError,
)
from convtui.sessions.records import RunRow, SessionRow
from convtui.sessions.store import Store

__all__ = [
    "AmbiguousIdError",
    "ExportError",
    "NotFoundError",
    "RunLeasedError",
    "RunRow",
    "SessionRow",
    "Store",
    "StoreError",
    "run_config_hash",
]
