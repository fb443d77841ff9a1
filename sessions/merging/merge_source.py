"""A database handed to ``sessions merge``, read without a byte of it changing, and checked
as a file before any of its rows is looked at.

The file is an annotator's own database: untrusted input, and still theirs, so a merge leaves
it exactly as it was, refused or not. SQLite writes even when asked only to read a WAL-mode
file (a read-only connection creates its ``-wal`` and ``-shm`` files and leaves them behind;
the last connection checkpoints; ``Store.open`` migrates), and ``immutable=1`` would skip the
commits a crashed writer left in the ``-wal``. So SQLite never opens the file: its bytes, with
the ``-wal`` or ``-journal`` beside it, are copied into a private folder, and that copy is
checked, brought to this schema (an older file is migrated there, never in place) and merged
from.
"""

from __future__ import annotations

import sqlite3
from functools import cache
from pathlib import Path

from sqlite_utils import Database

from convtui.sessions.database.connection import refuse_foreign_file
from convtui.sessions.database.errors import StoreError
from convtui.sessions.database.schema import applied_migrations, migrate
from convtui.sessions.merging.merge_limits import Budget, MergeLimits, check_bytes

# What a writer leaves beside the file that holds committed pages (-wal) or pages to put back
# (a hot -journal); the -shm is only an index of the -wal, rebuilt from it.
_BESIDE = ("-wal", "-journal")
_CHUNK = 1024 * 1024
_NOTHING = "nothing merged"


def private_copy(
    path: Path, copy: Path, limits: MergeLimits | None = None, budget: Budget | None = None
) -> None:
    """Copy ``path`` to ``copy`` (a new file in a folder of ours) and bring the copy to this
    schema; a StoreError in one line when ``path`` is not a convtui database of this or an
    older schema, is damaged, or is larger than ``limits.bytes`` (with the -wal and -journal
    beside it, before a byte is copied). ``budget``: the source's time, checked as it goes."""
    limits = limits or MergeLimits()
    budget = budget or Budget(limits.seconds, path)
    if not path.is_file():
        raise StoreError(f"no database at {path}: {_NOTHING}")
    refuse_foreign_file(path)
    if path.stat().st_size == 0:
        raise StoreError(f"{path} is empty, not a convtui database: {_NOTHING}")
    files = [(path, copy)] + [
        (path.with_name(path.name + end), copy.with_name(copy.name + end))
        for end in _BESIDE
        if path.with_name(path.name + end).is_file()
    ]
    check_bytes(path, sum(source.stat().st_size for source, _ in files), limits)
    left = limits.bytes
    for source, into in files:
        left = _copy_bytes(source, into, left, path, limits, budget)
    try:
        _check_and_migrate(copy, path, budget)
    except sqlite3.Error as exc:
        budget.check()
        raise StoreError(
            f"{path} cannot be read as a convtui database ({exc}): {_NOTHING}"
        ) from None


def _copy_bytes(
    source: Path, into: Path, left: int, shown: Path, limits: MergeLimits, budget: Budget
) -> int:
    """Copy ``source`` with at most ``left`` bytes (a file may grow while it is read);
    returns what is left of them."""
    try:
        with source.open("rb") as reading, into.open("xb") as writing:
            while chunk := reading.read(_CHUNK):
                budget.check()
                left -= len(chunk)
                if left < 0:
                    raise StoreError(
                        f"{shown} grew past --max-bytes ({limits.bytes:,} bytes) while it was "
                        f"read: {_NOTHING}"
                    )
                writing.write(chunk)
    except OSError as exc:
        raise StoreError(f"cannot copy {source} to read it: {exc.strerror}: {_NOTHING}") from None
    return left


def _check_and_migrate(copy: Path, shown: Path, budget: Budget) -> None:
    # The copy is ours: recovering its -wal, and migrating it, write to it alone.
    conn = sqlite3.connect(copy)
    try:
        with budget.watching(conn):
            _check_copy(conn, shown)
    finally:
        conn.close()


def _check_copy(conn: sqlite3.Connection, shown: Path) -> None:
    db = Database(conn, execute_plugins=False)
    damage = [row[0] for row in conn.execute("PRAGMA quick_check(1)")]
    if damage != ["ok"]:
        raise StoreError(f"{shown} is damaged ({damage[0]}): {_NOTHING}")
    known, shape = _reference()
    applied = applied_migrations(db) if "_sqlite_migrations" in db.table_names() else []
    if not applied:
        raise StoreError(f"{shown} is not a convtui database (no convtui schema in it): {_NOTHING}")
    newer = [name for name in applied if name not in known]
    if newer:
        raise StoreError(
            f"{shown} was written by a newer convtui (migrations {', '.join(newer)[:120]}): "
            f"upgrade convtui to merge it; {_NOTHING}"
        )
    migrate(db)
    _check_shape(conn, shape, shown)
    _check_references(conn, list(shape), shown)


Shape = dict[str, list[tuple[str, str, int, int]]]


@cache
def _reference() -> tuple[tuple[str, ...], Shape]:
    """The migrations this convtui knows and the tables they make, from a store made in
    memory: what a source must hold once migrated."""
    db = Database(memory=True, execute_plugins=False)
    migrate(db)
    return tuple(applied_migrations(db)), _shape(db.conn)


def _shape(conn: sqlite3.Connection, only: list[str] | None = None) -> Shape:
    names = [
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    ]
    return {
        name: [
            (row[0], row[1], row[2], row[3])
            for row in conn.execute(
                'SELECT name, type, "notnull", pk FROM pragma_table_info(?)', (name,)
            )
        ]
        for name in names
        if only is None or name in only
    }


def _check_shape(conn: sqlite3.Connection, wanted: Shape, shown: Path) -> None:
    """Every table this schema has, with the same columns (tables of its own beside them do
    no harm: nothing reads them)."""
    found = _shape(conn, list(wanted))
    for table, columns in wanted.items():
        if table not in found:
            raise StoreError(
                f"{shown} has no table {table}, which convtui's schema has: {_NOTHING}"
            )
        if found[table] != columns:
            names = {c[0] for c in found[table]}
            lacking = [c[0] for c in columns if c[0] not in names]
            what = (
                f"lacks column(s) {', '.join(lacking)}"
                if lacking
                else "has other columns than convtui's"
            )
            raise StoreError(f"{shown}: its table {table} {what}: {_NOTHING}")


def _check_references(conn: sqlite3.Connection, tables: list[str], shown: Path) -> None:
    """Every reference the schema declares finds its row (SQLite checks them on write only
    where ``foreign_keys`` is on, which a file changed by hand need not have had)."""
    for table in tables:
        dangling = conn.execute(f'PRAGMA foreign_key_check("{table}")').fetchone()
        if dangling is None:
            continue
        _, rowid, parent, key = dangling
        columns = [
            row[3] for row in conn.execute(f'PRAGMA foreign_key_list("{table}")') if row[0] == key
        ]
        said = ""
        if rowid is not None:
            values = conn.execute(
                f'SELECT {", ".join(columns)} FROM "{table}" WHERE rowid = ?', (rowid,)
            ).fetchone()
            said = " " + ", ".join(repr(v) for v in values)
        raise StoreError(
            f"{shown}: {table}.{', '.join(columns)}{said} names a row of {parent} that the "
            f"file does not hold: {_NOTHING}; the file was changed outside convtui: leave it out"
        )
