"""The ``model_calls`` table: every model call as it happens, and the response cache.

A call is a row from the moment it starts (``started``), updated when it ends (``ok`` or
``error``), with one ``call_attempts`` row per try. A call still ``started`` when its run is
resumed died with the process that made it and becomes ``abandoned``. A finished call is
reused instead of paid for again: the reuse is itself a row (``cache_hit = 1``,
``reused_call_id`` naming the call whose answer it took), so every turn links to a call row,
and token sums over ``cache_hit = 0`` rows count only what was paid for.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlite_utils import Database

from convtui.core.models.types import Attempt, ChatMessage, Completion
from convtui.core.turns.journal import CallPurpose, CallRequest
from convtui.sessions.database.blobs import get_texts, put_text, put_texts
from convtui.sessions.database.codec import (
    attempt_columns,
    attempt_from_row,
    canonical_json,
    completion_columns,
    completion_from_row,
    messages_to_refs,
    params_to_dict,
    text_hash,
)
from convtui.sessions.database.connection import Connections, rows, rows_in, writing
from convtui.sessions.database.ids import new_id, utc_now

CODE_PURPOSES: tuple[CallPurpose, ...] = ("generate", "repair", "stale_ef")


def _insert_call(db: Database, columns: dict[str, Any]) -> str:
    call_id = new_id()
    columns = {"id": call_id, **columns}
    names = ", ".join(columns)
    marks = ", ".join("?" * len(columns))
    db.execute(f"INSERT INTO model_calls ({names}) VALUES ({marks})", list(columns.values()))
    return call_id


def _messages_json(db: Database, messages: Iterable[ChatMessage]) -> str:
    refs, texts = messages_to_refs(messages)
    put_texts(db, texts)
    return refs


def link_call(
    db: Database,
    session_id: str,
    turn_idx: int,
    purpose: CallPurpose,
    completion: Completion,
    messages: tuple[ChatMessage, ...] = (),
    request_hash: str = "",
) -> str:
    """The id of the call row that produced ``completion`` for this turn (the latest finished
    one that equals it), inserting a row when the loop ran without a journal (inside the
    caller's write transaction)."""
    # A turn's code may come from a repair or stale-EF call (ConvCodeWorld): any code call.
    purposes = CODE_PURPOSES if purpose in CODE_PURPOSES else (purpose,)
    candidates = rows(
        db,
        f"SELECT * FROM model_calls WHERE session_id = ? AND turn_idx = ? "
        f"AND purpose IN ({', '.join('?' * len(purposes))}) "
        "AND status = 'ok' AND response_blob = ? ORDER BY id DESC",
        (session_id, turn_idx, *purposes, text_hash(completion.text)),
    )
    for row in candidates:
        if completion_from_row(row, completion.text) == completion:
            return str(row["id"])
    now = utc_now()
    return _insert_call(
        db,
        {
            "session_id": session_id,
            "turn_idx": turn_idx,
            "purpose": purpose,
            "request_hash": request_hash,
            "model": completion.model,
            "messages_json": _messages_json(db, messages),
            "params_json": None,
            "status": "ok",
            "response_blob": put_text(db, completion.text),
            "cache_hit": int(completion.cached),
            "started_utc": now,
            "finished_utc": now,
            **completion_columns(completion),
        },
    )


def load_calls(db: Database, ids: Iterable[str]) -> dict[str, Completion]:
    found = rows_in(db, "SELECT * FROM model_calls WHERE id IN ({marks})", ids)
    texts = get_texts(db, (row["response_blob"] for row in found if row["response_blob"]))
    return {
        row["id"]: completion_from_row(row, texts.get(row["response_blob"], "")) for row in found
    }


def load_attempts(db: Database, call_id: str) -> list[Attempt]:
    return [
        attempt_from_row(row)
        for row in rows(
            db, "SELECT * FROM call_attempts WHERE call_id = ? ORDER BY number", (call_id,)
        )
    ]


def abandon_started(db: Database, *, run_id: str | None, session_id: str | None) -> int:
    """Mark calls left ``started`` by a dead process as ``abandoned`` (inside the caller's
    write transaction); returns how many."""
    owner: str | None
    if session_id is not None:
        where, owner = "session_id = ?", session_id
    else:
        where, owner = "session_id IN (SELECT id FROM sessions WHERE run_id = ?)", run_id
    cursor = db.execute(
        f"UPDATE model_calls SET status = 'abandoned', finished_utc = ? "
        f"WHERE status = 'started' AND {where}",
        (utc_now(), owner),
    )
    return cursor.rowcount


class StoreJournal:
    """``CallJournal`` (core/turns/journal.py) for one session.

    ``find`` reuses a finished call with the same request for the same turn and purpose — what
    a resumed run needs. With ``share_across_sessions`` it reuses one from any session (same
    request hash and purpose): worth it for temperature-0 benchmarks, where the nine feedback
    configurations send the same turn-0 prompt; off by default because it is only sound when
    the caller knows the calls are deterministic."""

    def __init__(
        self, connections: Connections, session_id: str, share_across_sessions: bool = False
    ) -> None:
        self._connections = connections
        self.session_id = session_id
        self.share_across_sessions = share_across_sessions

    def find(
        self, turn_idx: int, purpose: CallPurpose, request_hash: str, *, seq: int = 0
    ) -> Completion | None:
        db = self._connections.get()
        if self.share_across_sessions:
            where = "request_hash = ? AND purpose = ?"
            params: list[Any] = [request_hash, purpose]
        else:
            where = "session_id = ? AND turn_idx = ? AND purpose = ? AND request_hash = ?"
            params = [self.session_id, turn_idx, purpose, request_hash]
        # Look without the write lock: most lookups miss.
        found = rows(
            db,
            f"SELECT * FROM model_calls WHERE {where} AND status = 'ok' "
            "ORDER BY cache_hit, id DESC LIMIT 1",
            params,
        )
        if not found:
            return None
        with writing(db):
            row = found[0]
            now = utc_now()
            _insert_call(
                db,
                {
                    "session_id": self.session_id,
                    "turn_idx": turn_idx,
                    "purpose": purpose,
                    "seq": seq,
                    "kind": row["kind"],
                    "request_hash": request_hash,
                    "model": row["model"],
                    "messages_json": row["messages_json"],
                    "params_json": row["params_json"],
                    "status": "ok",
                    "response_blob": row["response_blob"],
                    "finish_reason": row["finish_reason"],
                    "input_tokens": row["input_tokens"],
                    "output_tokens": row["output_tokens"],
                    "latency_s": row["latency_s"],
                    "attempts": row["attempts"],
                    "response_model": row["response_model"],
                    "resolved_model": row["resolved_model"],
                    "endpoint": row["endpoint"],
                    "cache_hit": 1,
                    "reused_call_id": row["reused_call_id"] or row["id"],
                    "started_utc": now,
                    "finished_utc": now,
                },
            )
            text = get_texts(db, [row["response_blob"]])[row["response_blob"]]
        return completion_from_row({**row, "cache_hit": 1}, text)

    def started(self, call: CallRequest) -> str:
        db = self._connections.get()
        with writing(db):
            return _insert_call(
                db,
                {
                    "session_id": self.session_id,
                    "turn_idx": call.turn_idx,
                    "purpose": call.purpose,
                    "seq": call.seq,
                    "kind": call.kind,
                    "request_hash": call.request_hash,
                    "model": call.model,
                    "messages_json": _messages_json(db, call.messages),
                    "params_json": canonical_json(params_to_dict(call.params)),
                    "status": "started",
                    "started_utc": utc_now(),
                },
            )

    def attempt(self, call_id: str, attempt: Attempt) -> None:
        db = self._connections.get()
        columns = {"call_id": call_id, **attempt_columns(attempt)}
        names = ", ".join(columns)
        marks = ", ".join("?" * len(columns))
        with writing(db):
            # OR IGNORE: a backend that reports the same attempt twice leaves one row.
            db.execute(
                f"INSERT OR IGNORE INTO call_attempts ({names}) VALUES ({marks})",
                list(columns.values()),
            )

    def finished(self, call_id: str, completion: Completion | None, error: str = "") -> None:
        db = self._connections.get()
        with writing(db):
            if completion is None:
                db.execute(
                    "UPDATE model_calls SET status = 'error', error = ?, finished_utc = ?, "
                    "attempts = (SELECT count(*) FROM call_attempts WHERE call_id = ?) "
                    "WHERE id = ?",
                    (error, utc_now(), call_id, call_id),
                )
                return
            columns = {
                "status": "ok",
                "response_blob": put_text(db, completion.text),
                "error": error,
                "finished_utc": utc_now(),
                **completion_columns(completion),
            }
            assignments = ", ".join(f"{name} = ?" for name in columns)
            db.execute(
                f"UPDATE model_calls SET {assignments} WHERE id = ?",
                [*columns.values(), call_id],
            )
