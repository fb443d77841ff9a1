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
cache key and result, under the target's own integer ids): sessions/merging/merge_fidelity.py. A row
the target holds is compared by content, as a session is, so merging twice adds nothing.

Words typed but not sent (``typed_feedback``) travel with a session the target did not have:
an annotator who merges an unfinished assignment may continue it on the study's host (its
assignment is linked there), where the app puts them back. A session the target already holds
keeps the target's own, so merging twice changes nothing.

A source is an annotator's own file, so nothing in it is taken on trust, and nothing writes
to it: ``merge_files`` reads a private copy (sessions/merging/merge_source.py: the file checked, an
older schema migrated there), and ``merge_store`` takes its rows only when convtui could have
written them (sessions/merging/merge_checks.py: assignment links, statuses, blobs, sizes; fidelity
rows in sessions/merging/merge_fidelity.py: on a state of the file, statuses, links, executions).

A valid file can still cost more than the study can afford, so what one source may add is
capped (sessions/merging/merge_limits.py: sessions, turns, bytes and seconds), counted in SQL before
any of its rows is read into Python; a dry run (``MergeOptions.dry_run``) runs every check and
says what would be added, writing nothing. What a source adds is recorded in the same
transaction, so that ``sessions merge --undo`` takes back exactly that
(sessions/merging/merge_undo.py). Who recorded a file is the organiser's word
(``MergeOptions.annotators``, ``--annotator``), never the file's: every session it adds or links
must name one of them (sessions/merging/merge_checks.py ``check_annotators``).
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from convtui.sessions.database.connection import rows, rows_in, writing
from convtui.sessions.database.errors import StoreError
from convtui.sessions.database.ids import new_id
from convtui.sessions.database.records import SessionRow
from convtui.sessions.database.schema import SCHEMA_VERSION
from convtui.sessions.database.store import Store
from convtui.sessions.merging.copying import copy_sessions
from convtui.sessions.merging.merge_checks import (
    check_annotators,
    check_links,
    check_references,
    check_sessions,
    check_sizes,
    check_times,
)
from convtui.sessions.merging.merge_fidelity import (
    check_fidelity,
    copy_fidelity,
    finished_changes,
    plan_fidelity,
)
from convtui.sessions.merging.merge_limits import Budget, MergeLimits, check_counts, session_chunks
from convtui.sessions.merging.merge_source import private_copy
from convtui.sessions.merging.merge_study import (
    check_study,
    link_assignments,
    links_to_set,
    study_name,
)
from convtui.sessions.merging.merge_undo import begin, record

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
    turns_added: int = 0
    # What a merge would do, with nothing written (``--dry-run``).
    dry_run: bool = False


@dataclass(frozen=True)
class MergeOptions:
    """How ``sessions merge`` takes each source: its caps (sessions/merging/merge_limits.py), who
    recorded it (``--annotator``: sessions/merging/merge_checks.py ``check_annotators``), and
    whether to write at all (``--dry-run``)."""

    limits: MergeLimits = field(default_factory=MergeLimits)
    annotators: frozenset[str] = field(default_factory=frozenset)
    dry_run: bool = False


def merge_store(
    source: Store,
    target: Store,
    *,
    shown: Path | None = None,
    options: MergeOptions | None = None,
    budget: Budget | None = None,
    batch: str | None = None,
) -> MergeResult:
    """Merge every session of ``source`` into ``target``; refuses (StoreError, target
    unchanged) a source past its caps, a row whose id both hold with different content, a
    different study, a row convtui could not have written (sessions/merging/merge_checks.py) or a
    session of someone other than who recorded the file. ``shown``: the file the source was
    copied from, named in messages and in ``runs.origin`` (default its path). ``budget``:
    the source's time (default all of ``options.limits.seconds``). ``batch``: the command's
    merge, kept with what this source adds for ``sessions merge --undo`` (default: kept
    under a batch of its own)."""
    options = options or MergeOptions()
    name = shown or source.path
    budget = budget or Budget(options.limits.seconds, name)
    with budget.running(), budget.watching(source.db.conn, target.db.conn):
        return _merge(source, target, name, options, budget, batch or new_id())


def _merge(
    source: Store,
    target: Store,
    name: Path,
    options: MergeOptions,
    budget: Budget,
    batch: str,
) -> MergeResult:
    where = f"{name} and {target.path}"
    # The caps first: counted in SQL, before any row is read into Python.
    check_counts(source, target, options.limits, name)
    study = check_study(source, target, where)
    _check_runs(source, target, where)
    check_sizes(source, name)
    new_ids = [i for new, _ in session_chunks(source, target) for i in new]
    linked_sessions = check_links(source, target, study, name) if study else []
    links = links_to_set(source, target, study) if study else []
    check_annotators(
        source,
        {*new_ids, *(link[2] for link in links)},
        options.annotators,
        study_name(target),
        name,
    )
    check_sessions(source, {*new_ids, *linked_sessions}, name)
    check_references(source, new_ids, name)
    check_times(source, new_ids, name)
    check_fidelity(source, name)
    present = _check_present(source, target, where, budget)
    new = [source.session(i) for i in new_ids]
    _check_slots(target, new, where)
    fidelity = plan_fidelity(source, target, where)
    turns = _turn_count(source, new_ids)
    if options.dry_run:
        fidelity_rows = len(fidelity.calls) + len(fidelity.feedback) + len(fidelity.turns)
        return MergeResult(
            str(name), len(new), present, len(links), fidelity_rows, turns, dry_run=True
        )
    db = target.db
    with writing(db):
        before = begin(target)
        added = 0
        for row in new:
            budget.check()
            with _unreadable(f"{name}: session {row.id}"):
                added += copy_sessions(
                    source, target, [row], origin=f"merged from {name}", calls=True
                )
        with _unreadable(str(name)):
            _restore_fields(source, target, [s.id for s in new])
            _copy_typed(source, target, [s.id for s in new])
            changes = link_assignments(target, study, links) if study else []
            changes += finished_changes(target, fidelity)
            carried = copy_fidelity(source, target, fidelity)
        budget.check()
        record(target, batch, str(name), before, changes)
    linked = sum(1 for c in changes if c.table == "study_assignments")
    return MergeResult(str(name), added, present, linked, carried, turns)


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


def _check_present(source: Store, target: Store, where: str, budget: Budget) -> int:
    """Compare each session both hold, a chunk of ids at a time; returns how many."""
    present = 0
    for _, held in session_chunks(source, target):
        for session_id in held:
            budget.check()
            _check_session(source, target, session_id, where)
        present += len(held)
    return present


def _turn_count(source: Store, session_ids: Collection[str]) -> int:
    sql = "SELECT count(*) AS n FROM turns WHERE session_id IN ({marks})"
    return sum(r["n"] for r in rows_in(source.db, sql, session_ids))


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


def merge_files(
    sources: list[Path], target: Path, options: MergeOptions | None = None
) -> list[MergeResult]:
    """Merge each of ``sources`` into ``target`` (created if missing), one transaction each,
    kept together as one merge for ``sessions merge --undo``.

    Every source is copied and its copy checked (sessions/merging/merge_source.py) before the target
    is opened, so a file that is no convtui database leaves the target untouched; the sources
    themselves are only ever read. With ``options.dry_run`` nothing is written: a target that
    does not exist, or that opening would migrate, is stood in for by a copy of its own."""
    options = options or MergeOptions()
    for path in sources:
        if target.exists() and path.resolve() == target.resolve():
            raise StoreError(f"{path} is the target database itself: nothing merged")
    budgets = [Budget(options.limits.seconds, path) for path in sources]
    batch = new_id()
    results = []
    with tempfile.TemporaryDirectory(prefix="convtui-merge-") as folder:
        copies = [Path(folder) / f"source-{n}.db" for n in range(len(sources))]
        for path, copy, budget in zip(sources, copies, budgets, strict=True):
            with budget.running():
                private_copy(path, copy, options.limits, budget)
        into = _dry_target(target, Path(folder)) if options.dry_run else target
        with Store.open(into) as store:
            for path, copy, budget in zip(sources, copies, budgets, strict=True):
                with Store.open(copy) as source:
                    results.append(
                        merge_store(
                            source, store, shown=path, options=options, budget=budget, batch=batch
                        )
                    )
    return results


def _dry_target(target: Path, folder: Path) -> Path:
    """What a dry run merges into: ``target`` itself when opening it writes nothing (a WAL
    file of this schema), else an empty store (no file yet) or a copy (an older schema,
    which opening would migrate), in ``folder``."""
    stand_in = folder / "target.db"
    if not target.exists():
        return stand_in
    conn = sqlite3.connect(f"{target.resolve().as_uri()}?mode=ro", uri=True)
    try:
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        applied = [r[0] for r in conn.execute("SELECT name FROM _sqlite_migrations ORDER BY rowid")]
        if mode == "wal" and applied and applied[-1] == SCHEMA_VERSION:
            return target
        copy = sqlite3.connect(stand_in)
        try:
            conn.backup(copy)
        finally:
            copy.close()
    except sqlite3.Error:
        return target  # not a store: Store.open refuses it in one line, writing nothing
    finally:
        conn.close()
    return stand_in
