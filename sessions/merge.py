"""Merging databases recorded elsewhere into one (``convtui sessions merge``).

An annotator records offline into their own file; the study's database takes their sessions
in later. Rows keep their ids (ULID-like, unique across machines), so a session merged twice
is merged once. Sessions, their runs, turns (with the person's times on them), model calls
(with attempts), executions (with tests) and the texts they use are copied by
``copying.copy_sessions``; a merged run's ``runs.origin`` says ``merged from <file>``.
Everything is checked before anything is written, and one source is merged in one
transaction: a conflict leaves the target as it was.

The results of ``convtui study fidelity`` on the source's sessions (``fidelity_calls``,
``fidelity_feedback``, ``fidelity_turns``) travel too, whether their session is copied or the
target holds it already, with the texts they use and their executions (found or inserted by
cache key and result, under the target's own integer ids): sessions/merge_fidelity.py. A row
the target holds is compared by content, as a session is, so merging twice adds nothing.

Words typed but not sent (``typed_feedback``) travel with a session the target did not have:
an annotator who merges an unfinished assignment may continue it on the study's host (its
assignment is linked there), where the app puts them back. A session the target already holds
keeps the target's own, so merging twice changes nothing.

A source is an annotator's own file, so nothing in it is taken on trust, and nothing writes
to it: ``merge_files`` reads a private copy (sessions/merge_source.py: the file checked, an
older schema migrated there), and ``merge_store`` takes its rows only when convtui could have
written them (sessions/merge_checks.py: assignment links, statuses, blobs, sizes; fidelity
rows in sessions/merge_fidelity.py: on a state of the file, statuses, links, executions).
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convtui.sessions.connection import rows, writing
from convtui.sessions.copying import copy_sessions
from convtui.sessions.errors import StoreError
from convtui.sessions.merge_checks import (
    check_links,
    check_references,
    check_sessions,
    check_sizes,
    check_times,
)
from convtui.sessions.merge_fidelity import check_fidelity, copy_fidelity, plan_fidelity
from convtui.sessions.merge_source import private_copy
from convtui.sessions.records import SessionRow
from convtui.sessions.store import Store

# What makes two copies of a session the same session (updated_utc moves with any write,
# and a copy's reference link is set after all sessions are in).
_SESSION_FIELDS = (
    "run_id",
    "task_id",
    "model",
    "feedback",
    "user_kind",
    "simulator",
    "max_turns",
    "status",
    "first_pass_turn",
    "turns_done",
    "error",
    "created_utc",
    "annotator",
)
# A turn, by content: blob hashes are the same in every file; execution and call ids are not.
_TURN_FIELDS = (
    "idx",
    "reply_blob",
    "code_blob",
    "compiled",
    "compile_feedback",
    "execution_feedback",
    "verbal_feedback",
    "feedback_source",
    "prompt_hash",
    "passed",
)
# What makes two copies of a run the same run (status and origin change as it is copied).
_RUN_FIELDS = ("kind", "config_hash", "selection", "task_count", "created_utc")


@dataclass(frozen=True)
class MergeResult:
    source: str
    sessions_added: int
    sessions_present: int
    assignments_linked: int
    # Rows added to the fidelity tables (calls, feedback, target turns).
    fidelity_added: int = 0


def merge_store(source: Store, target: Store, *, shown: Path | None = None) -> MergeResult:
    """Merge every session of ``source`` into ``target``; refuses (StoreError, target
    unchanged) a row whose id both hold with different content, a different study, or a row
    convtui could not have written (sessions/merge_checks.py). ``shown``: the file the
    source was copied from, named in messages and in ``runs.origin`` (default its path)."""
    name = shown or source.path
    where = f"{name} and {target.path}"
    study = _check_study(source, target, where)
    _check_runs(source, target, where)
    check_sizes(source, name)
    all_rows = _sessions(source)
    present = {r["id"] for r in rows(target.db, "SELECT id FROM sessions")}
    new = [s for s in all_rows if s.id not in present]
    linked_sessions = check_links(source, target, study, name) if study else []
    check_sessions(source, {s.id for s in new} | set(linked_sessions), name)
    check_references(source, [s.id for s in new], name)
    check_times(source, [s.id for s in new], name)
    check_fidelity(source, name)
    for row in all_rows:
        if row.id in present:
            _check_session(source, target, row.id, where)
    _check_slots(target, new, where)
    fidelity = plan_fidelity(source, target, where)
    db = target.db
    with writing(db):
        added = 0
        for row in new:
            with _unreadable(f"{name}: session {row.id}"):
                added += copy_sessions(
                    source, target, [row], origin=f"merged from {name}", calls=True
                )
        with _unreadable(str(name)):
            _restore_fields(source, target, [s.id for s in new])
            _copy_typed(source, target, [s.id for s in new])
            linked = _link_assignments(source, target, study) if study else 0
            carried = copy_fidelity(source, target, fidelity)
    return MergeResult(str(name), added, len(all_rows) - len(new), linked, carried)


@contextmanager
def _unreadable(what: str) -> Iterator[None]:
    """A value of the source that convtui's readers or the target's constraints refuse (a
    JSON column that is not JSON, a flag outside its CHECK) refuses the merge in one line;
    the write transaction around it is rolled back."""
    try:
        yield
    except (ValueError, KeyError, TypeError, sqlite3.IntegrityError) as exc:
        raise StoreError(
            f"{what} cannot be read as convtui wrote it ({exc}): nothing merged"
        ) from None


def _sessions(store: Store) -> list[SessionRow]:
    ids = [r["id"] for r in rows(store.db, "SELECT id FROM sessions ORDER BY id")]
    return [store.session(i) for i in ids]


def _pick(row: dict[str, Any], fields: tuple[str, ...]) -> tuple[Any, ...]:
    return tuple(row[f] for f in fields)


def _check_runs(source: Store, target: Store, where: str) -> None:
    theirs = {r["id"]: r for r in rows(target.db, "SELECT * FROM runs")}
    for run in rows(source.db, "SELECT * FROM runs ORDER BY id"):
        other = theirs.get(run["id"])
        if other is not None and _pick(run, _RUN_FIELDS) != _pick(other, _RUN_FIELDS):
            raise StoreError(f"run {run['id']} differs between {where}: not merged")


def _check_session(source: Store, target: Store, session_id: str, where: str) -> None:
    def content(store: Store) -> tuple[Any, ...]:
        session = rows(store.db, "SELECT * FROM sessions WHERE id = ?", (session_id,))[0]
        turns = rows(
            store.db, "SELECT * FROM turns WHERE session_id = ? ORDER BY idx", (session_id,)
        )
        return _pick(session, _SESSION_FIELDS), [_pick(t, _TURN_FIELDS) for t in turns]

    mine, theirs = content(source), content(target)
    if mine != theirs:
        field = next(
            (f for f, a, b in zip(_SESSION_FIELDS, mine[0], theirs[0], strict=True) if a != b),
            "turns",
        )
        raise StoreError(f"session {session_id} differs ({field}) between {where}: not merged")


def _check_slots(target: Store, new: list[SessionRow], where: str) -> None:
    """A run holds one session per task and Ω: another id in that place is a conflict."""
    for row in new:
        if row.run_id is None:
            continue
        other = rows(
            target.db,
            "SELECT id FROM sessions WHERE run_id = ? AND task_id = ? AND feedback = ?",
            (row.run_id, row.task_id, row.feedback),
        )
        if other:
            raise StoreError(
                f"session {row.id} and {other[0]['id']} both answer {row.task_id} "
                f"({row.feedback}) of run {row.run_id} in {where}: not merged"
            )


def _restore_fields(source: Store, target: Store, session_ids: list[str]) -> None:
    """What copying a session renews: its last update as recorded, and a replay's link to
    its reference session, where that session is in ``target``."""
    for session_id in session_ids:
        found = rows(
            source.db,
            "SELECT reference_session_id, updated_utc FROM sessions WHERE id = ?",
            (session_id,),
        )[0]
        reference = found["reference_session_id"]
        if reference and not rows(target.db, "SELECT 1 FROM sessions WHERE id = ?", (reference,)):
            reference = None
        target.db.execute(
            "UPDATE sessions SET reference_session_id = ?, updated_utc = ? WHERE id = ?",
            (reference, found["updated_utc"], session_id),
        )


def _copy_typed(source: Store, target: Store, session_ids: list[str]) -> None:
    """The words typed but not sent in the sessions just copied, as written (with their time)."""
    for session_id in session_ids:
        found = source.db.execute(
            "SELECT session_id, turn_idx, text, instruction, written_utc FROM typed_feedback "
            "WHERE session_id = ? ORDER BY turn_idx",
            (session_id,),
        ).fetchall()
        target.db.conn.executemany(
            "INSERT INTO typed_feedback (session_id, turn_idx, text, instruction, written_utc) "
            "VALUES (?, ?, ?, ?, ?)",
            found,
        )


def _study_id(store: Store) -> str | None:
    found = rows(store.db, "SELECT id FROM studies")
    return found[0]["id"] if found else None


def _check_study(source: Store, target: Store, where: str) -> str | None:
    """The study whose assignment links travel with the sessions, if the source has one:
    the target must hold the same study (or none, and then no link travels)."""
    mine, theirs = _study_id(source), _study_id(target)
    if mine is None or theirs is None:
        return None
    if mine != theirs:
        raise StoreError(f"{where} hold different studies ({mine}, {theirs}): not merged")
    return mine


def _link_assignments(source: Store, target: Store, study_id: str) -> int:
    """Set the target's assignments' session where the source answered them and the target
    has none yet; returns how many were set."""
    linked = 0
    for a in rows(
        source.db,
        "SELECT task_id, annotator, session_id FROM study_assignments "
        "WHERE study_id = ? AND session_id IS NOT NULL",
        (study_id,),
    ):
        cursor = target.db.execute(
            "UPDATE study_assignments SET session_id = ? WHERE study_id = ? AND task_id = ? "
            "AND annotator = ? AND session_id IS NULL",
            (a["session_id"], study_id, a["task_id"], a["annotator"]),
        )
        linked += cursor.rowcount
    return linked


def merge_files(sources: list[Path], target: Path) -> list[MergeResult]:
    """Merge each of ``sources`` into ``target`` (created if missing), one transaction each.

    Every source is copied and its copy checked (sessions/merge_source.py) before the target
    is opened, so a file that is no convtui database leaves the target untouched; the sources
    themselves are only ever read."""
    for path in sources:
        if target.exists() and path.resolve() == target.resolve():
            raise StoreError(f"{path} is the target database itself: nothing merged")
    results = []
    with tempfile.TemporaryDirectory(prefix="convtui-merge-") as folder:
        copies = [Path(folder) / f"source-{n}.db" for n in range(len(sources))]
        for path, copy in zip(sources, copies, strict=True):
            private_copy(path, copy)
        with Store.open(target) as into:
            for path, copy in zip(sources, copies, strict=True):
                with Store.open(copy) as source:
                    results.append(merge_store(source, into, shown=path))
    return results
