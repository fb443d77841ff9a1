"""Reading recorded sessions back for people: the list, one session in full, and ids found
from a prefix (``convtui sessions list``, ``show`` and the selection ``export`` starts from).

Sessions come from two places: benchmark runs (``run_id`` set) and the TUI (``run_id`` NULL,
the session keeps its own config). Both read back the same way here.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

from sqlite_utils import Database

from convtui.core.settings.config import SessionConfig
from convtui.core.turns.record import Turn
from convtui.sessions.database.connection import narrowed, rows, rows_in
from convtui.sessions.database.errors import AmbiguousIdError, NotFoundError
from convtui.sessions.database.human_times import HumanTurnTimes
from convtui.sessions.database.records import SessionRow
from convtui.sessions.database.store import Store

# The sessions row already is the summary a listing needs; one dataclass keeps its fields in
# one place.
SessionSummary: TypeAlias = SessionRow

# Like git: a prefix this long or longer may stand for a whole id.
MIN_PREFIX = 6
# Listings show ids cut to the shortest length that is unique in the database, never shorter
# than this. Ids lead with their creation time (they sort by it), so sessions recorded a second
# or more apart differ in their first 8 characters, and those of one run in their first 12
# (see convtui.sessions.database.ids).
SHOWN_PREFIX = 8
_LIST_HINT = "`convtui sessions list` shows the recorded ones"


@dataclass(frozen=True)
class SessionDetail:
    """One session as ``show`` and the exports need it: the row, the config it ran under
    (its own for a TUI session, its run's with its Ω otherwise), its turns in order, and the
    code version of its run (None for a TUI session: those record none). ``times``: turn
    index -> the person's time on it, for the turns a person answered in the app."""

    session: SessionRow
    config: SessionConfig
    turns: tuple[Turn, ...]
    code_version: str | None
    calls: tuple[CallLine, ...] = ()
    times: Mapping[int, HumanTurnTimes] = field(default_factory=dict)


@dataclass(frozen=True)
class CallLine:
    """One model call of a session as ``show`` and the TUI's calls list show it under its
    turn, in the order made: ConvCodeWorld's turns make several (repairs, a stale-EF call, the
    simulator). ``status`` is the journal's: started (in flight), ok, error or abandoned (its
    app died or the turn was cancelled); ``reused``: answered by an identical earlier call.
    Token counts and latency are None where the call recorded none (it has not finished).
    ``endpoint``: the server that answered (one of a model's replicas), None where the model
    is not behind a URL or the call was recorded before endpoints were."""

    turn_idx: int
    seq: int
    purpose: str
    kind: str
    status: str
    reused: bool = False
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_s: float | None = None
    error: str = ""
    endpoint: str | None = None


def list_sessions(
    store: Store,
    *,
    task: str | None = None,
    status: str | Sequence[str] | None = None,
    user_kind: str | None = None,
    run_id: str | None = None,
    interactive: bool | None = None,
    limit: int | None = None,
) -> list[SessionSummary]:
    """Recorded sessions, newest first, optionally only those of one task, in one of the
    given statuses, with one kind of user, of one run, or only the TUI's own
    (``interactive=True``) or only the benchmarks' (``False``)."""
    where: list[str] = []
    params: list[object] = []
    if task is not None:
        where.append("task_id = ?")
        params.append(task)
    if status is not None:
        wanted = [status] if isinstance(status, str) else list(status)
        if not wanted:
            return []
        where.append(f"status IN ({', '.join('?' * len(wanted))})")
        params += wanted
    if user_kind is not None:
        where.append("user_kind = ?")
        params.append(user_kind)
    if run_id is not None:
        where.append("run_id = ?")
        params.append(run_id)
    if interactive is not None:
        where.append("run_id IS NULL" if interactive else "run_id IS NOT NULL")
    sql = "SELECT * FROM sessions"
    if where:
        sql += " WHERE " + " AND ".join(where)
    # Ids sort by creation time, so this is newest first without relying on timestamps.
    sql += " ORDER BY id DESC"
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    with store.reading() as db:
        found = rows(db, sql, params)
    return [SessionRow.from_row(row) for row in found]


def resolve_session_id(store: Store, text: str) -> str:
    """The full id of the session ``text`` names: the id itself, or a unique prefix of at
    least :data:`MIN_PREFIX` characters. Raises NotFoundError (no such session) or
    AmbiguousIdError (the prefix names several)."""
    wanted = text.strip().lower()  # ids are lower-case; people copy them from anywhere
    db = store.db
    if db.execute("SELECT 1 FROM sessions WHERE id = ?", (wanted,)).fetchone():
        return wanted
    if len(wanted) < MIN_PREFIX:
        raise NotFoundError(
            f"no session {text!r} (a prefix needs at least {MIN_PREFIX} characters); " + _LIST_HINT
        )
    # A range on the primary key, not LIKE: no escaping, and the index answers it. "~" sorts
    # after every character an id can hold.
    found = [
        row[0]
        for row in db.execute(
            "SELECT id FROM sessions WHERE id >= ? AND id < ? ORDER BY id LIMIT 11",
            (wanted, wanted + "~"),
        ).fetchall()
    ]
    if not found or not wanted.isalnum():
        raise NotFoundError(f"no session {text!r}; " + _LIST_HINT)
    if len(found) > 1:
        shown = ", ".join(found[:10]) + (", …" if len(found) > 10 else "")
        raise AmbiguousIdError(f"session id prefix {text!r} is ambiguous: {shown}")
    return found[0]


def unique_prefix_length(store: Store, session_ids: Sequence[str]) -> int:
    """The shortest length, at least :data:`SHOWN_PREFIX`, at which each of ``session_ids``
    is a prefix of no other recorded session, as ``git log --oneline`` abbreviates. One length
    for all of them, so a listing's id column lines up; every prefix of that length resolves
    with :func:`resolve_session_id`. Compared against every session in the store, not only
    the listed ones: ``show`` and ``--resume`` resolve against them all."""
    if not session_ids:
        return SHOWN_PREFIX
    with store.reading() as db:
        every = [row[0] for row in db.execute("SELECT id FROM sessions ORDER BY id").fetchall()]
    length = SHOWN_PREFIX
    for sid in session_ids:
        # In sorted order the ids sharing the longest prefix with this one are its neighbours.
        at = bisect_left(every, sid)
        after = at + 1 if at < len(every) and every[at] == sid else at
        for neighbour in every[max(at - 1, 0) : at] + every[after : after + 1]:
            length = max(length, _common_prefix(sid, neighbour) + 1)
    return min(length, max(len(sid) for sid in session_ids))


def _common_prefix(a: str, b: str) -> int:
    same = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        same += 1
    return same


def resolve_session_ids(store: Store, texts: Sequence[str]) -> list[str]:
    """Each of ``texts`` resolved as :func:`resolve_session_id` does, duplicates dropped, in
    the order given."""
    return list(dict.fromkeys(resolve_session_id(store, text) for text in texts))


def load_session(store: Store, session_id: str) -> SessionDetail:
    """One session in full (``session_id`` may be a unique prefix), read in one snapshot so
    the row and the turns agree even while a run is writing."""
    with store.reading() as db:
        full_id = resolve_session_id(store, session_id)
        row = store.session(full_id)
        version = None
        if row.run_id is not None:
            found = rows(db, "SELECT code_version FROM runs WHERE id = ?", (row.run_id,))
            version = found[0]["code_version"] if found else None
        return SessionDetail(
            session=row,
            config=store.session_config(full_id),
            turns=tuple(store.load_turns(full_id)),
            code_version=version,
            calls=tuple(_calls(db, full_id, None)),
            times=store.human_turn_times([full_id]).get(full_id, {}),
        )


def session_calls(store: Store, session_id: str, turn_idx: int | None = None) -> list[CallLine]:
    """A session's model calls (or one turn's), each turn's in the order made: by position,
    then by when they started (a cancelled turn played again starts over at 0)."""
    with store.reading() as db:
        return _calls(db, session_id, turn_idx)


def _calls(db: Database, session_id: str, turn_idx: int | None) -> list[CallLine]:
    sql = (
        "SELECT turn_idx, seq, purpose, kind, status, cache_hit, input_tokens, output_tokens, "
        "latency_s, error, endpoint FROM model_calls WHERE session_id = ?"
    )
    sql, params = narrowed(sql, [session_id], {"turn_idx": turn_idx})
    found = rows(db, sql + " ORDER BY turn_idx, seq, id", params)
    return [
        CallLine(
            c["turn_idx"],
            c["seq"],
            c["purpose"],
            c["kind"],
            c["status"],
            bool(c["cache_hit"]),
            c["input_tokens"],
            c["output_tokens"],
            c["latency_s"],
            c["error"] or "",
            c["endpoint"],
        )
        for c in found
    ]


def sessions_by_id(store: Store, session_ids: Sequence[str]) -> list[SessionRow]:
    """The rows of these (full) ids, in the order given; NotFoundError names a missing one."""
    found = {row.id: row for row in _rows_of(store, session_ids)}
    missing = [sid for sid in session_ids if sid not in found]
    if missing:
        raise NotFoundError(f"no session {missing[0]!r}; " + _LIST_HINT)
    return [found[sid] for sid in session_ids]


def _rows_of(store: Store, session_ids: Sequence[str]) -> list[SessionRow]:
    with store.reading() as db:
        found = rows_in(db, "SELECT * FROM sessions WHERE id IN ({marks})", session_ids)
    return [SessionRow.from_row(row) for row in found]


def run_code_versions(store: Store, run_ids: Sequence[str]) -> list[str]:
    """The distinct code versions that wrote these runs, sorted."""
    with store.reading() as db:
        found = rows_in(db, "SELECT DISTINCT code_version FROM runs WHERE id IN ({marks})", run_ids)
    return sorted({row["code_version"] for row in found})
