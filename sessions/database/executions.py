"""The ``executions`` table: the log of every test run and, for the deterministic verdicts,
the executor's result cache (one row per cache key with ``in_cache = 1``).

``timeout`` and ``crash`` verdicts are logged but never served from the cache: they depend on
how loaded the machine was, so the same code may pass on the next try. A second, different
result for a key already cached (a flaky test) is logged beside the cached one, so a turn
always links to a row holding exactly the result it saw.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from sqlite_utils import Database

from convtui.core.execution.types import ExecResult
from convtui.sessions.database.blobs import put_text
from convtui.sessions.database.codec import (
    exec_result_from_rows,
    execution_columns,
    result_hash,
    test_columns,
)
from convtui.sessions.database.connection import Connections, reading, rows_in, writing
from convtui.sessions.database.ids import utc_now

# Wall-clock verdicts: re-run rather than reused (see module docstring).
LOAD_SENSITIVE = frozenset({"timeout", "crash"})


def cacheable(result: ExecResult) -> bool:
    return result.status not in LOAD_SENSITIVE


def insert_execution(
    db: Database, key: str | None, task_id: str, code: str, result: ExecResult, in_cache: bool
) -> int | None:
    """Insert an execution and its tests (inside the caller's write transaction).

    With ``in_cache`` the insert is ``OR IGNORE`` on the cache key: None means a cached row
    for ``key`` already exists and nothing was written."""
    columns = execution_columns(result)
    columns.update(
        cache_key=key,
        in_cache=int(in_cache),
        task_id=task_id,
        code_blob=put_text(db, code),
        created_utc=utc_now(),
    )
    names = ", ".join(columns)
    marks = ", ".join("?" * len(columns))
    verb = "INSERT OR IGNORE" if in_cache else "INSERT"
    cursor = db.execute(
        f"{verb} INTO executions ({names}) VALUES ({marks})", list(columns.values())
    )
    if cursor.rowcount == 0:
        return None
    execution_id = int(cursor.lastrowid or 0)
    tests = test_columns(execution_id, result.tests)
    if tests:
        db.conn.executemany(
            "INSERT INTO execution_tests (execution_id, position, name, status, duration_s, "
            "traceback) VALUES (:execution_id, :position, :name, :status, :duration_s, "
            ":traceback)",
            tests,
        )
    return execution_id


def record_execution(
    db: Database, key: str | None, task_id: str, code: str, result: ExecResult
) -> int:
    """The id of a row holding exactly ``result`` for ``key``, inserting one if needed (inside
    the caller's write transaction). The row becomes the cache entry when the key has none."""
    if key is not None:
        found = db.execute(
            "SELECT id FROM executions WHERE cache_key = ? AND result_hash = ? "
            "ORDER BY in_cache DESC, id LIMIT 1",
            (key, result_hash(result)),
        ).fetchone()
        if found:
            return int(found[0])
    if key is not None and cacheable(result):
        execution_id = insert_execution(db, key, task_id, code, result, in_cache=True)
        if execution_id is not None:
            return execution_id
    execution_id = insert_execution(db, key, task_id, code, result, in_cache=False)
    assert execution_id is not None  # a plain INSERT always writes
    return execution_id


def load_executions(db: Database, ids: Iterable[int]) -> dict[int, ExecResult]:
    wanted = set(ids)
    tests: dict[int, list[dict]] = defaultdict(list)
    for test in rows_in(
        db, "SELECT * FROM execution_tests WHERE execution_id IN ({marks})", wanted
    ):
        tests[test["execution_id"]].append(test)
    return {
        row["id"]: exec_result_from_rows(row, tests[row["id"]])
        for row in rows_in(db, "SELECT * FROM executions WHERE id IN ({marks})", wanted)
    }


class StoreExecutionCache:
    """``ExecutionCache`` (core/turns/journal.py) over the executions table."""

    def __init__(self, connections: Connections) -> None:
        self._connections = connections

    def get(self, key: str) -> ExecResult | None:
        db = self._connections.get()
        with reading(db):
            row = db.execute(
                "SELECT id FROM executions WHERE cache_key = ? AND in_cache = 1", (key,)
            ).fetchone()
            if row is None:
                return None
            return load_executions(db, [row[0]])[row[0]]

    def put(self, key: str, task_id: str, code: str, result: ExecResult) -> None:
        """Record a run. It answers later ``get(key)`` unless it is load-sensitive or the key
        already has a cached result: the first result wins (two sessions may run the same code
        at once); a different later one is logged beside it, an equal one adds nothing."""
        db = self._connections.get()
        with writing(db):
            record_execution(db, key, task_id, code, result)
