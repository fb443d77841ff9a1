"""Copying recorded sessions from one store into another, under the same ids.

A static replay reads its reference sessions from the database it writes to, so that the
report can set the replay's verdicts beside the reference's (ConvCodeBench's static MRR needs
both). When the logs live in another database, ``convtui bench static`` copies the reference
sessions over first: same session and run ids, so copying again changes nothing and a
replayed session's ``reference_session_id`` means the same in both files. The copied run
keeps its config and says where it came from (``runs.origin``).
"""

from __future__ import annotations

from collections.abc import Sequence

from convtui.sessions.codec import config_to_json
from convtui.sessions.connection import rows, rows_in, writing
from convtui.sessions.ids import utc_now
from convtui.sessions.records import SessionRow
from convtui.sessions.store import Store


def copy_sessions(source: Store, target: Store, sessions: Sequence[SessionRow]) -> int:
    """Copy ``sessions`` (rows of ``source``) and their runs into ``target`` unless already
    there; returns how many sessions were copied. Turns are written with the execution cache
    keys they had, so a replay of a reference's passing code finds its result cached."""
    copied = 0
    origin = f"copied from {source.path}"
    for row in sessions:
        if rows(target.db, "SELECT 1 FROM sessions WHERE id = ?", (row.id,)):
            continue
        if row.run_id is not None:
            _copy_run(source, target, row.run_id, origin)
        _insert_session(source, target, row)
        keys = {
            r["idx"]: r["cache_key"]
            for r in rows(
                source.db,
                "SELECT t.idx, e.cache_key FROM turns t LEFT JOIN executions e "
                "ON e.id = t.execution_id WHERE t.session_id = ?",
                (row.id,),
            )
        }
        turns = source.load_turns(row.id)
        for turn in turns:
            last = turn.idx == len(turns) - 1
            target.save_turn(row.id, turn, row.status if last else "running", keys.get(turn.idx))
        # A session that ended without a turn (a model error at turn 0) keeps its status too.
        target.set_session_status(row.id, row.status, row.error)
        copied += 1
    return copied


def _copy_run(source: Store, target: Store, run_id: str, origin: str) -> None:
    if rows(target.db, "SELECT 1 FROM runs WHERE id = ?", (run_id,)):
        return
    found = rows_in(source.db, "SELECT * FROM runs WHERE id IN ({marks})", [run_id])[0]
    found["origin"] = found.get("origin") or origin
    # The copy is a finished record, driven by nobody.
    found.update(pid=None, host=None, lease_until_utc=None)
    if found["status"] in ("planned", "running"):
        found["status"] = "interrupted"
    _insert(target, "runs", found)


def _insert_session(source: Store, target: Store, row: SessionRow) -> None:
    found = rows(source.db, "SELECT * FROM sessions WHERE id = ?", (row.id,))[0]
    if found["run_id"] is None and found["config_json"] is None:
        found["config_json"] = config_to_json(source.session_config(row.id))
    # The turns are written next, one by one, and move these counters as they go.
    found.update(
        status="running",
        turns_done=0,
        first_pass_turn=None,
        updated_utc=utc_now(),
        reference_session_id=None,
    )
    _insert(target, "sessions", found)


def _insert(target: Store, table: str, values: dict) -> None:
    columns = {r["name"] for r in rows(target.db, f"SELECT name FROM pragma_table_info('{table}')")}
    kept = {k: v for k, v in values.items() if k in columns}
    db = target.db
    with writing(db):
        db.execute(
            f"INSERT INTO {table} ({', '.join(kept)}) VALUES ({', '.join('?' * len(kept))})",
            list(kept.values()),
        )
