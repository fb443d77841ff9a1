"""``sessions merge --undo``: take back what the last merge added, and nothing else.

A study's database may be recording while its organiser merges (a served study's apps write
turns, typed words and links into the same file), so an undo cannot put back a copy of the
file from before the merge: that would throw away whatever the annotators recorded since.
It removes instead exactly the rows the merge wrote (the m014 tables, sessions/database/schema.py):

- A merge writes one source in one ``BEGIN IMMEDIATE`` transaction, so nobody else writes
  meanwhile, and SQLite gives a new row of a rowid table the next rowid: what the source
  added to a table is the range of rowids past the table's largest before it. ``begin``
  notes those largest rowids, ``record`` (still inside the transaction) keeps each range
  with a digest of its rows. A table without rowids (``execution_tests``, ``call_attempts``)
  holds rows of a parent added with them, and goes with that parent.
- The rows a merge changed rather than added (an assignment's ``session_id``, set where it
  was NULL; a fidelity call the target held ``abandoned`` that the source had answered) are
  kept with what they held before and after.

``undo_last`` takes back the last command's merges in one write transaction, or nothing: it
refuses when a row the merge added has changed since (its digest), when one it changed holds
something else now, or when a row written since refers to one it added (a turn recorded in a
merged session continued on the host, a replay of a merged session, a study fidelity result
on one). Texts (``blobs``) and executions are shared caches, found by content by later
writers: those that something written since uses stay, the rest go.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from convtui.core.plural import counted
from convtui.sessions.database.connection import rows, writing
from convtui.sessions.database.errors import StoreError
from convtui.sessions.database.ids import new_id, utc_now
from convtui.sessions.database.store import Store

# The bookkeeping itself, and what no merge writes.
_OWN = frozenset({"merges", "merge_ranges", "merge_changes", "_sqlite_migrations"})
# Shared by content: a later writer that has the same text or the same execution uses the
# row the merge added, so such a row stays when the merge is undone.
_SHARED = ("executions", "blobs")
# Blob references that are JSON rather than foreign keys: ``[[role, hash], ...]`` lists of
# prompt messages (sessions/database/codec.py ``messages_to_refs``).
_JSON_BLOB_REFERENCES = (
    ("turns", "prompt_json"),
    ("model_calls", "messages_json"),
    ("fidelity_calls", "messages_json"),
)
_NOTHING = "nothing undone"


@dataclass(frozen=True)
class Change:
    """A row the merge changed: its table, key and the columns before and after."""

    table: str
    key: Mapping[str, Any]
    was: Mapping[str, Any]
    now: Mapping[str, Any]


@dataclass(frozen=True)
class UndoResult:
    db: str
    sources: tuple[str, ...]
    merged_utc: str
    sessions_removed: int
    runs_removed: int
    links_cleared: int
    fidelity_removed: int
    # Every row removed or put back, all tables together.
    rows_removed: int


def _rowid_tables(db: Database) -> list[str]:
    return [
        name
        for name, sql in db.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        ).fetchall()
        if name not in _OWN and "WITHOUT ROWID" not in sql.upper()
    ]


def _without_rowid_tables(db: Database) -> list[str]:
    return [
        name
        for name, sql in db.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        ).fetchall()
        if name not in _OWN and "WITHOUT ROWID" in sql.upper()
    ]


def begin(target: Store) -> dict[str, int]:
    """Each table's largest rowid, inside the merge's write transaction, before it writes."""
    db = target.db
    return {
        table: db.execute(f'SELECT coalesce(max(rowid), 0) FROM "{table}"').fetchone()[0]
        for table in _rowid_tables(db)
    }


def _digest(db: Database, table: str, first: int, last: int) -> str:
    # A text's row is its hash (the merge checked every text against it): no need to read
    # megabytes of text again to know it is the same row.
    columns = "rowid, hash" if table == "blobs" else "rowid, *"
    digest = hashlib.sha256()
    cursor = db.execute(
        f'SELECT {columns} FROM "{table}" WHERE rowid BETWEEN ? AND ? ORDER BY rowid',
        (first, last),
    )
    while chunk := cursor.fetchmany(1000):
        for row in chunk:
            digest.update(repr(row).encode())
    return digest.hexdigest()


def record(
    target: Store,
    batch: str,
    source: str,
    before: Mapping[str, int],
    changes: Iterable[Change],
) -> bool:
    """Keep what this source's merge added to ``target`` since ``begin`` and the rows it
    changed, inside its write transaction; False (and nothing kept) when it wrote nothing."""
    db = target.db
    ranges = []
    for table, mark in before.items():
        (last,) = db.execute(f'SELECT coalesce(max(rowid), 0) FROM "{table}"').fetchone()
        if last > mark:
            ranges.append((table, mark + 1, last, _digest(db, table, mark + 1, last)))
    changed = list(changes)
    if not ranges and not changed:
        return False
    merge_id = new_id()
    db.execute(
        "INSERT INTO merges (id, batch, source, merged_utc) VALUES (?, ?, ?, ?)",
        (merge_id, batch, source, utc_now()),
    )
    db.conn.executemany(
        "INSERT INTO merge_ranges (merge_id, tbl, first_rowid, last_rowid, digest) "
        "VALUES (?, ?, ?, ?, ?)",
        [(merge_id, *r) for r in ranges],
    )
    db.conn.executemany(
        "INSERT INTO merge_changes (merge_id, tbl, key_json, was_json, now_json) "
        "VALUES (?, ?, ?, ?, ?)",
        [
            (merge_id, c.table, _canonical(c.key), _canonical(c.was), _canonical(c.now))
            for c in changed
        ],
    )
    return True


def _canonical(value: Mapping[str, Any]) -> str:
    return json.dumps(dict(value), sort_keys=True, separators=(",", ":"))


def undo_last(path: Path) -> UndoResult:
    """Take back the last ``sessions merge`` into ``path`` (every source it merged), in one
    write transaction; a StoreError in one line, and nothing changed, when there is nothing
    to undo or the undo would lose or break something recorded since."""
    if not path.is_file():
        raise StoreError(f"no database at {path}: nothing to undo")
    with Store.open(path) as target:
        db = target.db
        # SQLite's own check of a deleted row scans each table that refers to it, and some
        # references have no index (turns.execution_id, turns.generate_call_id): 300 sessions
        # took 30 s that way. The undo checks every reference itself, a table at a time
        # (``_refuse_references``, then ``_check_dangling``), so SQLite's is off meanwhile (it
        # can only be switched outside a transaction).
        db.execute("PRAGMA foreign_keys = OFF")
        try:
            with writing(db):
                return _undo(db, path)
        finally:
            db.execute("PRAGMA foreign_keys = ON")


def _undo(db: Database, path: Path) -> UndoResult:
    last = db.execute("SELECT batch FROM merges ORDER BY rowid DESC LIMIT 1").fetchone()
    if last is None:
        raise StoreError(f"nothing to undo: no merge into {path} is recorded")
    merges = rows(db, "SELECT * FROM merges WHERE batch = ? ORDER BY rowid", (last[0],))
    sources = tuple(m["source"] for m in merges)
    named = f"{', '.join(sources)}, merged {merges[0]['merged_utc']}"
    if merges[0]["undone_utc"] is not None:
        raise StoreError(
            f"the last merge into {path} ({named}) was undone already "
            f"({merges[0]['undone_utc']}): {_NOTHING}; merge the files again to bring them back"
        )
    ids = [m["id"] for m in merges]
    marks = ", ".join("?" * len(ids))
    ranges = rows(db, f"SELECT * FROM merge_ranges WHERE merge_id IN ({marks})", ids)
    for r in ranges:
        if _digest(db, r["tbl"], r["first_rowid"], r["last_rowid"]) != r["digest"]:
            raise StoreError(
                f"{r['tbl']} that the last merge into {path} ({named}) added have changed "
                f"since: undoing it would lose what was recorded here after it; {_NOTHING}"
            )
    changes = rows(db, f"SELECT * FROM merge_changes WHERE merge_id IN ({marks})", ids)
    put_back = _put_back(db, changes, path, named)
    db.execute("CREATE TEMP TABLE IF NOT EXISTS undo_rows (tbl TEXT NOT NULL, rid INTEGER)")
    db.execute("CREATE INDEX IF NOT EXISTS temp.undo_rows_by_table ON undo_rows (tbl, rid)")
    db.execute("DELETE FROM temp.undo_rows")
    for r in ranges:
        db.execute(
            f'INSERT INTO temp.undo_rows (tbl, rid) SELECT ?, rowid FROM main."{r["tbl"]}" '
            "WHERE rowid BETWEEN ? AND ?",
            (r["tbl"], r["first_rowid"], r["last_rowid"]),
        )
    try:
        _keep_shared(db)
        _refuse_references(db, path, named)
        counts = _count(db)
        dangling = _dangling(db)
        removed = _delete(db)
        if _dangling(db) > dangling:
            raise StoreError(
                f"undoing the last merge into {path} ({named}) would leave rows that refer to "
                f"nothing: {_NOTHING}"
            )
    finally:
        db.execute("DROP TABLE IF EXISTS temp.undo_rows")
    db.execute(f"UPDATE merges SET undone_utc = ? WHERE id IN ({marks})", (utc_now(), *ids))
    return UndoResult(
        db=str(path),
        sources=sources,
        merged_utc=merges[0]["merged_utc"],
        sessions_removed=counts.get("sessions", 0),
        runs_removed=counts.get("runs", 0),
        links_cleared=sum(1 for c in changes if c["tbl"] == "study_assignments"),
        fidelity_removed=sum(
            counts.get(t, 0) for t in ("fidelity_calls", "fidelity_feedback", "fidelity_turns")
        ),
        rows_removed=removed + put_back,
    )


def _put_back(db: Database, changes: list[dict[str, Any]], path: Path, named: str) -> int:
    """Each row the merge changed, as it was before, once it is seen to hold what the merge
    left in it (anything else was written since, and is not the merge's to take back)."""
    for change in changes:
        table, key = change["tbl"], json.loads(change["key_json"])
        now, was = json.loads(change["now_json"]), json.loads(change["was_json"])
        where = " AND ".join(f'"{k}" = ?' for k in key)
        found = db.execute(
            f'SELECT {", ".join(f"{chr(34)}{c}{chr(34)}" for c in now)} FROM "{table}" '
            f"WHERE {where}",
            list(key.values()),
        ).fetchone()
        if found is None or dict(zip(now, found, strict=True)) != now:
            raise StoreError(
                f"a row of {table} that the last merge into {path} ({named}) changed "
                f"({', '.join(map(str, key.values()))}) holds something else now: undoing it "
                f"would lose what was recorded here after it; {_NOTHING}"
            )
        sets = ", ".join(f'"{c}" = ?' for c in was)
        db.execute(f'UPDATE "{table}" SET {sets} WHERE {where}', [*was.values(), *key.values()])
    return len(changes)


@dataclass(frozen=True)
class _ForeignKey:
    child: str
    columns: tuple[str, ...]
    parent: str
    parent_columns: tuple[str, ...]

    def refers(self, child_alias: str, parent_rows: str) -> str:
        """SQL: the child row ``child_alias`` names a row of the parent among ``parent_rows``
        (a subquery of rowids)."""
        mine = ", ".join(f'{child_alias}."{c}"' for c in self.columns)
        theirs = ", ".join(f'"{c}"' for c in self.parent_columns)
        return (
            f'({mine}) IN (SELECT {theirs} FROM main."{self.parent}" WHERE rowid IN {parent_rows})'
        )


def _foreign_keys(db: Database) -> list[_ForeignKey]:
    tables = [*_rowid_tables(db), *_without_rowid_tables(db)]
    found = []
    for table in tables:
        by_id: dict[int, list[tuple[str, str, str | None]]] = {}
        for row in db.execute(f'PRAGMA foreign_key_list("{table}")').fetchall():
            by_id.setdefault(row[0], []).append((row[2], row[3], row[4]))
        for refs in by_id.values():
            parent = refs[0][0]
            named = [r[2] for r in refs]
            to = tuple(c for c in named if c is not None)
            if len(to) < len(named):  # ``REFERENCES t`` alone: the parent's primary key
                to = tuple(
                    r[1]
                    for r in sorted(
                        db.execute(f'PRAGMA table_info("{parent}")').fetchall(),
                        key=lambda r: r[5],
                    )
                    if r[5]
                )
            found.append(_ForeignKey(table, tuple(r[1] for r in refs), parent, to))
    return found


def _undone(table: str) -> str:
    """SQL: the rowids of ``table`` that the undo removes."""
    return f"(SELECT rid FROM temp.undo_rows WHERE tbl = '{table}')"


def _keep_shared(db: Database) -> None:
    """Texts and executions the merge added that a row it did not add uses stay (executions
    first: an execution that stays keeps its code's text)."""
    rowid_tables = set(_rowid_tables(db))
    keys = _foreign_keys(db)
    for shared in _SHARED:
        for key in keys:
            if key.parent != shared or key.child not in rowid_tables:
                continue
            theirs = ", ".join(f'p."{c}"' for c in key.parent_columns)
            mine = ", ".join(f'c."{c}"' for c in key.columns)
            db.execute(
                f"DELETE FROM temp.undo_rows WHERE tbl = '{shared}' AND rid IN ("
                f'SELECT p.rowid FROM main."{shared}" p WHERE p.rowid IN {_undone(shared)} '
                f'AND ({theirs}) IN (SELECT {mine} FROM main."{key.child}" c '
                f"WHERE c.rowid NOT IN {_undone(key.child)}))"
            )
    for table, column in _JSON_BLOB_REFERENCES:
        db.execute(
            "DELETE FROM temp.undo_rows WHERE tbl = 'blobs' AND rid IN ("
            f"SELECT p.rowid FROM main.blobs p WHERE p.rowid IN {_undone('blobs')} "
            "AND p.hash IN (SELECT json_extract(j.value, '$[1]') "
            f'FROM main."{table}" c, json_each(c."{column}") j '
            f"WHERE c.rowid NOT IN {_undone(table)}))"
        )


def _refuse_references(db: Database, path: Path, named: str) -> None:
    """Refuse when a row written since the merge refers to a row the undo removes."""
    rowid_tables = set(_rowid_tables(db))
    for key in _foreign_keys(db):
        if key.child not in rowid_tables:
            continue  # a row of a table without rowids goes with the parent it hangs on
        (count,) = db.execute(
            f'SELECT count(*) FROM main."{key.child}" c '
            f"WHERE c.rowid NOT IN {_undone(key.child)} "
            f"AND {key.refers('c', _undone(key.parent))}"
        ).fetchone()
        if count:
            raise StoreError(
                f"{counted(count, 'row')} of {key.child} written into {path} since the last merge "
                f"({named}) refer to {key.parent} it added: undoing it would break them; "
                f"{_NOTHING}"
            )


def _count(db: Database) -> dict[str, int]:
    return dict(db.execute("SELECT tbl, count(*) FROM temp.undo_rows GROUP BY tbl").fetchall())


def _dangling(db: Database) -> int:
    """References to no row, in the tables that refer to a table the undo removes rows
    from: none more may be left after it than before (a reference ``_refuse_references``
    does not know of)."""
    parents = {t for (t,) in db.execute("SELECT DISTINCT tbl FROM temp.undo_rows").fetchall()}
    children = sorted({key.child for key in _foreign_keys(db) if key.parent in parents})
    return sum(
        len(db.execute(f'PRAGMA foreign_key_check("{child}")').fetchall()) for child in children
    )


def _delete(db: Database) -> int:
    """Remove the rows, the rows of tables without rowids that hang on them first."""
    removed = 0
    rowid_tables = set(_rowid_tables(db))
    for key in _foreign_keys(db):
        if key.child in rowid_tables:
            continue
        child = f'"{key.child}"'
        removed += db.execute(
            f"DELETE FROM main.{child} WHERE {key.refers(child, _undone(key.parent))}"
        ).rowcount
    for (table,) in db.execute("SELECT DISTINCT tbl FROM temp.undo_rows").fetchall():
        removed += db.execute(
            f'DELETE FROM main."{table}" WHERE rowid IN {_undone(table)}'
        ).rowcount
    return removed
