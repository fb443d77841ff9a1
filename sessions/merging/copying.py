"""Copying recorded sessions from one store into another, under the same ids.

A static replay reads its reference sessions from the database it writes to, so that the
report can set the replay's verdicts beside the reference's (ConvCodeBench's static MRR needs
both). When the logs live in another database, ``convtui bench static`` copies the reference
sessions over first: same session and run ids, so copying again changes nothing and a
replayed session's ``reference_session_id`` means the same in both files. The copied run
keeps its config and says where it came from (``runs.origin``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from convtui.sessions.database.codec import config_to_json
from convtui.sessions.database.connection import rows, rows_in, writing
from convtui.sessions.database.ids import utc_now
from convtui.sessions.database.records import SessionRow
from convtui.sessions.database.store import Store


def copy_sessions(
    source: Store,
    target: Store,
    sessions: Sequence[SessionRow],
    *,
    origin: str | None = None,
    calls: bool = False,
) -> int:
    """Copy ``sessions`` (rows of ``source``) and their runs into ``target`` unless already
    there; returns how many sessions were copied. Turns are written with the execution cache
    keys they had, so a replay of a reference's passing code finds its result cached, and
    with the person's times on them (sessions/database/human_times.py), if any.
    ``origin``: what a copied run's ``runs.origin`` says (default ``copied from <db>``);
    ``calls``: also copy every model call of the sessions (and its attempts) under its id,
    before the turns, which then link to them (``sessions merge``, which also brings the
    words typed but not sent: sessions/merging/merge.py)."""
    copied = 0
    origin = origin or f"copied from {source.path}"
    for row in sessions:
        if rows(target.db, "SELECT 1 FROM sessions WHERE id = ?", (row.id,)):
            continue
        if row.run_id is not None:
            _copy_run(source, target, row.run_id, origin)
        _insert_session(source, target, row)
        if calls:
            _copy_calls(source, target, row.id)
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
        times = source.human_turn_times([row.id]).get(row.id, {})
        for turn in turns:
            last = turn.idx == len(turns) - 1
            status = row.status if last else "running"
            target.save_turn(row.id, turn, status, keys.get(turn.idx), times.get(turn.idx))
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
    insert_row(target, "runs", found)


def _copy_calls(source: Store, target: Store, session_id: str) -> None:
    """The session's model calls under their ids, with their attempts and response texts; a
    reused call's link is kept where the call it reused is in ``target``."""
    found = rows(
        source.db, "SELECT * FROM model_calls WHERE session_id = ? ORDER BY id", (session_id,)
    )
    db = target.db
    with writing(db):
        for call in found:
            # The request's messages are ``[[role, blob hash], …]``, as a turn's prompt.
            hashes = [ref[1] for ref in json.loads(call["messages_json"])]
            if call["response_blob"] is not None:
                hashes.append(call["response_blob"])
            copy_blobs(source, target, hashes)
            reused = call["reused_call_id"]
            if reused is not None and not rows(
                db, "SELECT 1 FROM model_calls WHERE id = ?", (reused,)
            ):
                call["reused_call_id"] = None
            insert_row(target, "model_calls", call)
            for attempt in rows(
                source.db,
                "SELECT * FROM call_attempts WHERE call_id = ? ORDER BY number",
                (call["id"],),
            ):
                insert_row(target, "call_attempts", attempt)


def copy_blobs(source: Store, target: Store, hashes: Iterable[str]) -> None:
    """The texts of ``source`` under ``hashes`` into ``target`` (those it holds stay), inside
    the caller's write transaction."""
    for blob in rows_in(source.db, "SELECT * FROM blobs WHERE hash IN ({marks})", hashes):
        target.db.execute(
            "INSERT OR IGNORE INTO blobs (hash, text) VALUES (?, ?)", (blob["hash"], blob["text"])
        )


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
    insert_row(target, "sessions", found)


def insert_row(target: Store, table: str, values: dict) -> None:
    """``values`` (a row as read from another store) as a new row of ``table``, in the
    columns ``target``'s table has."""
    columns = {r["name"] for r in rows(target.db, f"SELECT name FROM pragma_table_info('{table}')")}
    kept = {k: v for k, v in values.items() if k in columns}
    db = target.db
    with writing(db):
        db.execute(
            f"INSERT INTO {table} ({', '.join(kept)}) VALUES ({', '.join('?' * len(kept))})",
            list(kept.values()),
        )
