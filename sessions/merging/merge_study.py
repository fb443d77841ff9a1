"""The study a merged file's assignment links belong to, and the links a merge sets
(``sessions merge``, sessions/merging/merge.py; what a link must be to be taken at all:
sessions/merging/merge_checks.py ``check_links``)."""

from __future__ import annotations

from convtui.sessions.database.connection import rows
from convtui.sessions.database.errors import StoreError
from convtui.sessions.database.store import Store
from convtui.sessions.merging.merge_undo import Change

# A link a merge sets: the assignment's task and annotator, and the session that answers it.
Link = tuple[str, str, str]


def _study_id(store: Store) -> str | None:
    found = rows(store.db, "SELECT id FROM studies")
    return found[0]["id"] if found else None


def study_name(store: Store) -> str | None:
    found = rows(store.db, "SELECT name FROM studies")
    return found[0]["name"] if found else None


def check_study(source: Store, target: Store, where: str) -> str | None:
    """The study whose assignment links travel with the sessions, if the source has one:
    the target must hold the same study (or none, and then no link travels)."""
    mine, theirs = _study_id(source), _study_id(target)
    if mine is None or theirs is None:
        return None
    if mine != theirs:
        raise StoreError(f"{where} hold different studies ({mine}, {theirs}): not merged")
    return mine


def links_to_set(source: Store, target: Store, study_id: str) -> list[Link]:
    """The source's assignment links (task, annotator, session) whose assignment in the
    target has no session yet: what the merge sets."""
    found = []
    for a in rows(
        source.db,
        "SELECT task_id, annotator, session_id FROM study_assignments "
        "WHERE study_id = ? AND session_id IS NOT NULL ORDER BY task_id, annotator",
        (study_id,),
    ):
        if rows(
            target.db,
            "SELECT 1 FROM study_assignments WHERE study_id = ? AND task_id = ? "
            "AND annotator = ? AND session_id IS NULL",
            (study_id, a["task_id"], a["annotator"]),
        ):
            found.append((a["task_id"], a["annotator"], a["session_id"]))
    return found


def link_assignments(target: Store, study_id: str, links: list[Link]) -> list[Change]:
    """Set each of ``links`` where the target's assignment still has no session (another
    writer may have opened it since it was read); returns the links set."""
    changed = []
    for task_id, annotator, session_id in links:
        cursor = target.db.execute(
            "UPDATE study_assignments SET session_id = ? WHERE study_id = ? AND task_id = ? "
            "AND annotator = ? AND session_id IS NULL",
            (session_id, study_id, task_id, annotator),
        )
        if cursor.rowcount:
            key = {"study_id": study_id, "task_id": task_id, "annotator": annotator}
            changed.append(
                Change("study_assignments", key, {"session_id": None}, {"session_id": session_id})
            )
    return changed
