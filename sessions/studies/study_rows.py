"""A study's rows: the study, its annotators and who was given which task (SCHEMA.md,
``studies``). What to write comes from core/studies/spec.py; this module only stores and reads it,
each change in one short write transaction (several annotators write one file at once)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from sqlite_utils import Database

from convtui.core.settings.config import SessionConfig
from convtui.core.studies.spec import (
    Assignment,
    StudyError,
    StudySpec,
    TaskFilter,
    check_distinct,
    token_hash,
)
from convtui.sessions.database.codec import config_from_json, config_to_json
from convtui.sessions.database.connection import narrowed, rows, writing
from convtui.sessions.database.ids import new_id, utc_now
from convtui.sessions.database.records import FINAL_SESSION_STATES, UserKind
from convtui.sessions.database.store import Store

AssignmentState = Literal["pending", "started", "done", "reassigned"]


@dataclass(frozen=True)
class StudyRow:
    id: str
    name: str
    spec: StudySpec
    config: SessionConfig
    created_utc: str


@dataclass(frozen=True)
class AssignmentRow:
    """One task of one annotator, with how far it got."""

    task_id: str
    annotator: str
    position: int
    session_id: str | None
    session_status: str | None
    reassigned_to: str | None

    @property
    def state(self) -> AssignmentState:
        if self.reassigned_to is not None:
            return "reassigned"
        if self.session_id is None:
            return "pending"
        return "done" if self.session_status in FINAL_SESSION_STATES else "started"


def create_study(
    store: Store,
    spec: StudySpec,
    config: SessionConfig,
    assignments: Iterable[Assignment],
    token_hashes: Mapping[str, str],
) -> str:
    """Write the study, its annotators (by token hash) and assignments in one transaction;
    refused when the database already holds a study."""
    study_id, now = new_id(), utc_now()
    db = store.db
    with writing(db):
        found = rows(db, "SELECT name FROM studies")
        if found:
            raise StudyError(
                f"{store.path} already holds study {found[0]['name']!r}: one study per database"
            )
        db.execute(
            "INSERT INTO studies (id, name, spec_json, config_json, created_utc) "
            "VALUES (?, ?, ?, ?, ?)",
            (study_id, spec.name, _spec_json(spec), config_to_json(config), now),
        )
        db.conn.executemany(
            _INSERT_ANNOTATOR,
            [(study_id, name, token_hashes[name], now) for name in spec.annotators],
        )
        db.conn.executemany(
            "INSERT INTO study_assignments (study_id, task_id, annotator, position) "
            "VALUES (?, ?, ?, ?)",
            [(study_id, a.task_id, a.annotator, a.position) for a in assignments],
        )
    return study_id


_INSERT_ANNOTATOR = (
    "INSERT INTO study_annotators (study_id, name, token_hash, active, created_utc) "
    "VALUES (?, ?, ?, 1, ?)"
)


def _insert_annotator(db: Database, study_id: str, name: str, hashed: str, now: str) -> None:
    db.execute(_INSERT_ANNOTATOR, (study_id, name, hashed, now))


def _spec_json(spec: StudySpec) -> str:
    data = asdict(spec)
    if isinstance(spec.tasks, TaskFilter):
        data["tasks"] = {k: v for k, v in asdict(spec.tasks).items() if v not in (None, ())}
    else:
        data["tasks"] = list(spec.tasks)
    data["annotators"] = list(spec.annotators)
    if data.get("simulator") is None:
        data.pop("simulator", None)
    # The guidelines ({"text", "sha256"}) travel inside the stored spec rather than in
    # columns of their own: they are part of what the study asks, are written once at
    # `study init` and never change, and need no query of their own, so no schema migration
    # (and no newer schema for older convtuis to refuse) is needed; a study without them
    # stores the same JSON as before.
    if data.get("guidelines") is None:
        data.pop("guidelines", None)
    return json.dumps(data, sort_keys=True)


def load_study(store: Store) -> StudyRow:
    """The database's study; :class:`StudyError` naming the command that makes one."""
    found = rows(store.db, "SELECT * FROM studies")
    if not found:
        raise StudyError(
            f"{store.path} holds no study: create one with `convtui study init STUDY.toml "
            f"--db {store.path}`"
        )
    row = found[0]
    spec = StudySpec.from_mapping(json.loads(row["spec_json"]))
    return StudyRow(
        row["id"], row["name"], spec, config_from_json(row["config_json"]), row["created_utc"]
    )


@contextmanager
def open_study(db: Path) -> Iterator[tuple[Store, StudyRow]]:
    """The study database at ``db``, which must exist (a mistyped path leaves no new file)."""
    if not db.exists():
        raise StudyError(
            f"no study database at {db}: create one with `convtui study init STUDY.toml --db {db}`"
        )
    with Store.open(db) as store:  # a file that is not SQLite is refused untouched
        yield store, load_study(store)


def annotators(store: Store, study_id: str) -> list[tuple[str, bool]]:
    """(name, still active) of every annotator, in the order they were enrolled."""
    found = rows(
        store.db,
        "SELECT name, active FROM study_annotators WHERE study_id = ? ORDER BY rowid",
        (study_id,),
    )
    return [(r["name"], bool(r["active"])) for r in found]


def assignments(store: Store, study_id: str, annotator: str | None = None) -> list[AssignmentRow]:
    """Every assignment (or one annotator's), in each annotator's order."""
    sql = (
        "SELECT a.task_id, a.annotator, a.position, a.session_id, s.status AS session_status, "
        "a.reassigned_to FROM study_assignments a LEFT JOIN sessions s ON s.id = a.session_id "
        "WHERE a.study_id = ?"
    )
    sql, params = narrowed(sql, [study_id], {"a.annotator": annotator})
    found = rows(store.db, sql + " ORDER BY a.annotator, a.position", params)
    return [AssignmentRow(**r) for r in found]


def next_assignment(store: Store, study_id: str, annotator: str) -> AssignmentRow | None:
    """The annotator's first assignment not done (a started one before a pending one, since
    it comes first in their order); None when they have done them all."""
    for row in assignments(store, study_id, annotator):
        if row.state in ("pending", "started"):
            return row
    return None


def attach_session(
    store: Store, study_id: str, task_id: str, annotator: str, session_id: str
) -> None:
    """Record the session that answers an assignment (once: a second is refused)."""
    db = store.db
    with writing(db):
        cursor = db.execute(
            "UPDATE study_assignments SET session_id = ? WHERE study_id = ? AND task_id = ? "
            "AND annotator = ? AND session_id IS NULL AND reassigned_to IS NULL",
            (session_id, study_id, task_id, annotator),
        )
        if cursor.rowcount != 1:
            raise StudyError(f"{task_id} is not an open assignment of {annotator}")


def start_assignment(
    store: Store,
    study_id: str,
    task_id: str,
    annotator: str,
    config: SessionConfig,
    user_kind: UserKind,
) -> str:
    """Open the session that answers an assignment: the session row and its link to the
    assignment are written in one transaction, so neither is ever there without the other
    (an assignment that is no longer open writes nothing). Returns the session's id."""
    with writing(store.db):
        session_id = store.create_interactive_session(
            task_id, config, user_kind, annotator=annotator
        )
        attach_session(store, study_id, task_id, annotator, session_id)
    return session_id


def study_tasks(store: Store, study_id: str) -> list[str]:
    """Every task of the study, in the order its assignments were first written."""
    found = rows(
        store.db,
        "SELECT task_id FROM study_assignments WHERE study_id = ? GROUP BY task_id "
        "ORDER BY MIN(rowid)",
        (study_id,),
    )
    return [r["task_id"] for r in found]


def who_holds(store: Store, study_id: str, token: str) -> str | None:
    """The active annotator whose token this is, or None: the token hashed once and looked
    up by its hash (``token_hash`` is UNIQUE, so indexed), whatever the number of annotators.
    Hashing every annotator's in turn cost a served study of 100,000 annotators a tenth of a
    second a request. The index's comparison is not constant-time, but what it could leak
    is how much of a SHA-256 digest matches, and a digest leads to no token."""
    found = rows(
        store.db,
        "SELECT name FROM study_annotators WHERE token_hash = ? AND study_id = ? AND active = 1",
        (token_hash(token), study_id),
    )
    return str(found[0]["name"]) if found else None


def set_token(store: Store, study_id: str, name: str, hashed: str) -> None:
    """Replace an annotator's token (the old one stops working at once)."""
    db = store.db
    with writing(db):
        cursor = db.execute(
            "UPDATE study_annotators SET token_hash = ? WHERE study_id = ? AND name = ?",
            (hashed, study_id, name),
        )
        if cursor.rowcount != 1:
            raise StudyError(f"the study has no annotator {name!r}")


def add_annotator(
    store: Store, study_id: str, name: str, hashed: str, given: Iterable[Assignment]
) -> None:
    """Enrol an annotator, their token's hash ``hashed``, with the assignments ``given`` to
    them; refused when the study has someone of that name or of one that prints alike."""
    db = store.db
    with writing(db):
        enrolled = [
            r["name"]
            for r in rows(db, "SELECT name FROM study_annotators WHERE study_id = ?", (study_id,))
        ]
        if name in enrolled:
            raise StudyError(f"the study already has an annotator {name!r}")
        check_distinct([name], enrolled)
        _insert_annotator(db, study_id, name, hashed, utc_now())
        db.conn.executemany(
            "INSERT INTO study_assignments (study_id, task_id, annotator, position) "
            "VALUES (?, ?, ?, ?)",
            [(study_id, a.task_id, a.annotator, a.position) for a in given],
        )


def hand_over(
    store: Store, study_id: str, leaving: str, moves: Iterable[tuple[Assignment, str]]
) -> None:
    """``leaving`` leaves: their token stops working, and each moved assignment is marked
    with who took it and added, last in order, to that annotator's list."""
    db = store.db
    with writing(db):
        db.execute(
            "UPDATE study_annotators SET active = 0 WHERE study_id = ? AND name = ?",
            (study_id, leaving),
        )
        for moved, to in moves:
            db.execute(
                "UPDATE study_assignments SET reassigned_to = ? WHERE study_id = ? "
                "AND task_id = ? AND annotator = ?",
                (to, study_id, moved.task_id, leaving),
            )
            (last,) = db.execute(
                "SELECT COALESCE(MAX(position), -1) FROM study_assignments "
                "WHERE study_id = ? AND annotator = ?",
                (study_id, to),
            ).fetchone()
            db.execute(
                "INSERT INTO study_assignments (study_id, task_id, annotator, position) "
                "VALUES (?, ?, ?, ?)",
                (study_id, moved.task_id, to, last + 1),
            )
