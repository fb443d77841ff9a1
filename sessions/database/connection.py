"""SQLite connections for the store: pragmas, WAL, one connection per thread, transactions.

Each thread gets its own connection (sqlite3 connections must not be shared across threads
without a lock), so in WAL mode a thread that reads — the TUI's history screen, a report —
proceeds while another thread writes a turn.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import warnings
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from convtui.sessions.database.errors import StoreError

# STRICT tables arrived in SQLite 3.37 (2021-11).
MIN_SQLITE = (3, 37, 0)
# The WAL file is truncated back to this size after a checkpoint, so a long run does not
# leave a multi-gigabyte -wal file behind.
JOURNAL_SIZE_LIMIT = 64 * 1024 * 1024


def check_sqlite() -> None:
    if sqlite3.sqlite_version_info < MIN_SQLITE:
        wanted = ".".join(map(str, MIN_SQLITE))
        raise StoreError(
            f"SQLite {sqlite3.sqlite_version} is too old for the convtui store "
            f"(needs {wanted} or newer for STRICT tables)"
        )


_SQLITE_HEADER = b"SQLite format 3\x00"


def refuse_foreign_file(path: Path) -> None:
    """Raise a one-line StoreError when ``path`` is something other than a SQLite database
    (or an empty file, which SQLite makes one of): a folder, a file of other bytes. Checked
    before any connection, so the file is left exactly as it was."""
    if path.is_dir():
        raise StoreError(f"{path} is a folder, not a database: pass --db a database file")
    if not path.exists() or path.stat().st_size == 0:
        return
    try:
        with path.open("rb") as handle:
            header = handle.read(len(_SQLITE_HEADER))
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror}") from None
    if header != _SQLITE_HEADER:
        raise StoreError(
            f"{path} is not a SQLite database (it was left as it is): pass --db a convtui "
            "database, or a new file name to create one"
        )


def remove_database(path: Path) -> None:
    """Delete a database file this process created, with its WAL and shared-memory files."""
    for name in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        name.unlink(missing_ok=True)


def connect(path: Path, busy_timeout_s: float) -> Database:
    """One connection with the store's per-connection settings.

    ``synchronous=NORMAL`` in WAL mode: a killed process loses nothing it committed; only a
    power cut can lose the last commits, and never corrupts the file. ``foreign_keys`` is off
    by default in SQLite and must be set on every connection."""
    # check_same_thread=False only so that Store.close() may close every thread's connection;
    # each connection is otherwise used by the thread that opened it.
    conn = sqlite3.connect(str(path), timeout=busy_timeout_s, check_same_thread=False)
    db = Database(conn, execute_plugins=False)
    db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
    db.execute("PRAGMA foreign_keys = ON")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute(f"PRAGMA journal_size_limit = {JOURNAL_SIZE_LIMIT}")
    return db


def enable_wal(db: Database, path: Path, wait_s: float = 30.0) -> None:
    """WAL is a property of the file: set once, it holds for every later connection.

    Switching needs the file to itself, and SQLite answers "database is locked" at once
    rather than waiting its busy timeout when another connection opening the same new file
    holds it: the switch is tried again for up to ``wait_s``."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            db.enable_wal()
            break
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)
    if db.journal_mode != "wal":
        # Network file systems cannot share WAL's memory map; the store still works, with
        # readers and the writer blocking each other.
        warnings.warn(
            f"SQLite could not switch {path} to WAL mode (journal_mode={db.journal_mode}); "
            "readers will wait for writers",
            RuntimeWarning,
            stacklevel=2,
        )


class Connections:
    """A connection per thread, created on first use and closed with :meth:`close`.

    Front ends run model calls and store writes in short-lived worker threads, so connections
    of threads that have ended are closed when the next one is opened rather than piling up."""

    def __init__(self, path: Path, busy_timeout_s: float) -> None:
        self.path = path
        self.busy_timeout_s = busy_timeout_s
        self._local = threading.local()
        self._lock = threading.Lock()
        self._open: list[tuple[weakref.ref[threading.Thread], Database]] = []
        self._closed = False

    def get(self) -> Database:
        db: Database | None = getattr(self._local, "db", None)
        if self._closed:
            raise StoreError(f"the store {self.path} is closed")
        if db is None:
            db = connect(self.path, self.busy_timeout_s)
            with self._lock:
                if self._closed:
                    db.close()
                    raise StoreError(f"the store {self.path} is closed")
                self._close_orphans()
                self._open.append((weakref.ref(threading.current_thread()), db))
            self._local.db = db
        return db

    def _close_orphans(self) -> None:
        keep = []
        for ref, db in self._open:
            thread = ref()
            if thread is None or not thread.is_alive():
                db.close()
            else:
                keep.append((ref, db))
        self._open = keep

    def close(self) -> None:
        with self._lock:
            self._closed = True
            dbs, self._open = [db for _, db in self._open], []
        for db in dbs:
            db.close()


def rows(db: Database, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    """All rows of a query as dicts (plain ``execute``: sqlite-utils' ``query()`` wraps each
    statement in a savepoint, which reads do not need)."""
    cursor = db.execute(sql, params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def narrowed(sql: str, params: Sequence[Any], equal: Mapping[str, Any]) -> tuple[str, list[Any]]:
    """``sql`` (ending in a WHERE clause) and its parameters, narrowed by ``column = value``
    for each of ``equal`` whose value is given (None and empty values leave it out)."""
    wanted = [(column, value) for column, value in equal.items() if value not in (None, "")]
    narrowed_sql = sql + "".join(f" AND {column} = ?" for column, _ in wanted)
    return narrowed_sql, [*params, *(value for _, value in wanted)]


# Well under SQLite's bound-parameter limit (32766 since 3.32, 999 before).
_CHUNK = 500


def rows_in(db: Database, sql: str, values: Iterable[Any]) -> list[dict[str, Any]]:
    """Rows of ``sql``, whose ``{marks}`` is filled with one ``?`` per distinct value, asked in
    chunks that stay within SQLite's limit on bound parameters."""
    wanted = sorted(set(values))
    found: list[dict[str, Any]] = []
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start : start + _CHUNK]
        found += rows(db, sql.format(marks=", ".join("?" * len(chunk))), chunk)
    return found


@contextmanager
def writing(db: Database) -> Iterator[Database]:
    """One write transaction that takes the write lock up front (``BEGIN IMMEDIATE``).

    sqlite-utils' ``atomic()`` opens a deferred ``BEGIN``; a deferred transaction that reads
    and then writes fails at once with SQLITE_BUSY (busy_timeout does not help) when another
    connection committed in between. Every read-then-write here therefore starts immediate.
    Nested use becomes an ``atomic()`` savepoint."""
    if db.conn.in_transaction:
        with db.atomic():
            yield db
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.rollback()
        raise
    try:
        db.execute("COMMIT")
    except BaseException:
        db.rollback()
        raise


@contextmanager
def reading(db: Database) -> Iterator[Database]:
    """A read transaction: every query inside sees the same snapshot (WAL lets it run while
    another connection writes). It ends with COMMIT, not ROLLBACK, so that a write made inside
    by mistake is kept rather than silently dropped."""
    if db.conn.in_transaction:
        yield db
        return
    db.execute("BEGIN")
    try:
        yield db
    except BaseException:
        db.rollback()
        raise
    db.execute("COMMIT")
