"""convtui.sessions: persistence of runs, sessions, turns, model calls and executions in one
SQLite file (schema in SCHEMA.md), a subpackage per job, each saying in its docstring what it
holds and what it may import:

- ``database/``: the store, its schema and migrations, the rows each write makes;
- ``reading/``: sessions read back (browsing, report outcomes, log sets, JSON values);
- ``exchange/``: exports and imports in the references' layouts (ConvCodeWorld, CodeIF-Bench);
- ``merging/``: merging stores, copying sessions between them;
- ``studies/``: a study's rows, its report's reads, its dataset and card, fidelity's tables.

Each subpackage imports core/ and the ones listed above it, never one below nor a front end.
Front ends use :class:`Store`, the report readers in :mod:`convtui.sessions.reading.results`,
the browsing helpers in :mod:`convtui.sessions.reading.browse` and the exports in
:mod:`convtui.sessions.exchange.export`."""

# First, so that no store drags pandas and numpy in with sqlite-utils
# (database/lean_sqlite_utils.py).
import convtui.sessions.database.lean_sqlite_utils  # noqa: F401  # isort: skip
from convtui.sessions.database.codec import run_config_hash
from convtui.sessions.database.errors import (
    AmbiguousIdError,
    ExportError,
    NotFoundError,
    RunLeasedError,
    StoreError,
)
from convtui.sessions.database.records import RunRow, SessionRow
from convtui.sessions.database.store import Store

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
