"""``convtui sessions merge`` verifies what it is given: a merged file is an annotator's own
database, so nothing in it is taken on trust. Each file below is a real store, recorded
through the store, then changed with sqlite3 as someone could; each is refused in one line,
and neither the target nor the source changes by a byte."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from store_values import config, turn
from support.cli import assert_one_line_error, invoke
from support.store_fixtures import FIXTURES
from support.studies import study_spec, write_study

from convtui.sessions import Store
from convtui.sessions.database.codec import text_hash
from convtui.sessions.merging.merge_checks import MAX_BLOB_CHARS
from convtui.sessions.merging.merge_limits import DEFAULT_MAX_BYTES
from convtui.sessions.studies.study_rows import assignments, start_assignment

TASKS = ("BigCodeBench/0", "BigCodeBench/1")


def fingerprint(path: Path) -> dict[str, str]:
    """The file and whatever SQLite keeps beside it, by content."""
    found = {}
    for suffix in ("", "-wal", "-shm", "-journal"):
        name = path.with_name(path.name + suffix)
        if name.exists():
            found[name.name] = hashlib.sha256(name.read_bytes()).hexdigest()
    return found


def tamper(path: Path, *statements: str, params: tuple = ()) -> None:
    """Change ``path`` as anyone with sqlite3 could, behind the store's back."""
    db = sqlite3.connect(path)
    try:
        for sql in statements:
            db.execute(sql, params if "?" in sql else ())
        db.commit()
    finally:
        db.close()


def link(path: Path, task: str, annotator: str, session: str) -> None:
    """Point the assignment of ``task`` to ``annotator`` in ``path`` at ``session``, with
    sqlite3 (``tamper``)."""
    tamper(
        path,
        "UPDATE study_assignments SET session_id = ? WHERE task_id = ? AND annotator = ?",
        params=(session, task, annotator),
    )


def one(path: Path, sql: str, params: tuple = ()) -> object:
    db = sqlite3.connect(path)
    try:
        return db.execute(sql, params).fetchone()[0]
    finally:
        db.close()


class Offline:
    """A study database and an annotator's copy of it, where ana answered her first task
    (one failing turn, still running) and ben his (abandoned before any turn)."""

    def __init__(self, tmp_path: Path) -> None:
        spec = study_spec(
            tasks=TASKS, feedback="CF,EF:full", turns=2, annotators=("ana", "ben"), overlap=2
        )
        self.spec = spec
        self.study, self.copy = tmp_path / "study.db", tmp_path / "ana.db"
        self.study_id = write_study(self.study, spec)
        shutil.copy(self.study, self.copy)
        with Store.open(self.copy) as store:
            self.ana = start_assignment(
                store, self.study_id, TASKS[0], "ana", spec.config(), "human"
            )
            store.save_turn(self.ana, turn(0), "running", "key-ana-0")
            self.ben = start_assignment(
                store, self.study_id, TASKS[1], "ben", spec.config(), "human"
            )
            store.set_session_status(self.ben, "abandoned")

    def merge(self, *annotators: str) -> subprocess.CompletedProcess[str]:
        """Merged as the organiser would a file ``annotators`` (by default both) recorded in."""
        said = [arg for name in annotators for arg in ("--annotator", name)]
        return invoke(
            "sessions", "merge", str(self.copy), "--db", str(self.study),
            *(said if annotators else ["--annotator", "ana", "--annotator", "ben"]),
        )  # fmt: skip

    def assert_refused(self, *words: str, annotators: tuple[str, ...] = ()) -> None:
        """Refused in one line naming ``words``; the study and the copy as they were."""
        study, copy = fingerprint(self.study), fingerprint(self.copy)
        done = self.merge(*annotators)
        assert_one_line_error(done, str(self.copy), *words)
        assert fingerprint(self.study) == study
        assert fingerprint(self.copy) == copy


@pytest.fixture
def offline(tmp_path: Path) -> Offline:
    return Offline(tmp_path)


def test_the_untouched_copy_merges_and_links_both_assignments(offline: Offline) -> None:
    before = fingerprint(offline.copy)

    done = offline.merge()

    assert done.returncode == 0, done.stderr
    assert "2 sessions added" in done.stdout and "2 assignments linked" in done.stdout
    assert fingerprint(offline.copy) == before
    with Store.open(offline.study) as store:
        linked = {
            (a.task_id, a.annotator): a.session_id for a in assignments(store, offline.study_id)
        }
    assert linked[(TASKS[0], "ana")] == offline.ana
    assert linked[(TASKS[1], "ben")] == offline.ben


# --- assignment links -------------------------------------------------------------------------


def test_a_link_to_another_annotators_session_is_refused(offline: Offline) -> None:
    """ana's second task answered by a session ben recorded: ana's app would open it."""
    with Store.open(offline.copy) as store:
        bens = store.create_interactive_session(TASKS[1], offline.spec.config(), "human", "ben")
    link(offline.copy, TASKS[1], "ana", bens)

    offline.assert_refused(bens, "ben", "ana")


def test_a_link_to_a_session_of_another_task_is_refused(offline: Offline) -> None:
    with Store.open(offline.copy) as store:
        other = store.create_interactive_session(TASKS[0], offline.spec.config(), "human", "ana")
    link(offline.copy, TASKS[1], "ana", other)

    offline.assert_refused(other, TASKS[0], TASKS[1])


def test_a_session_linked_to_two_assignments_is_refused(offline: Offline) -> None:
    link(offline.copy, TASKS[0], "ben", offline.ana)

    offline.assert_refused(offline.ana, "2 assignments")


def test_a_link_to_a_session_the_target_links_elsewhere_is_refused(offline: Offline) -> None:
    """The target holds ana's session already, answering her other task there: the copy's
    link would make it answer two."""
    assert offline.merge().returncode == 0
    tamper(
        offline.study,
        "UPDATE study_assignments SET session_id = NULL WHERE session_id = ?",
        params=(offline.ana,),
    )
    link(offline.study, TASKS[1], "ana", offline.ana)

    offline.assert_refused(offline.ana, "already")


def test_a_link_to_a_session_missing_from_the_file_is_refused(offline: Offline) -> None:
    tamper(
        offline.copy,
        "PRAGMA foreign_keys = OFF",
        "UPDATE study_assignments SET session_id = 'not-a-session' WHERE task_id = ? "
        "AND annotator = 'ana'",
        params=(TASKS[1],),
    )

    offline.assert_refused("not-a-session")


def test_a_link_to_an_assignment_the_study_does_not_have_is_refused(offline: Offline) -> None:
    with Store.open(offline.copy) as store:
        extra = store.create_interactive_session(
            "BigCodeBench/9", offline.spec.config(), "human", "ana"
        )
    tamper(
        offline.copy,
        "INSERT INTO study_assignments (study_id, task_id, annotator, position, session_id) "
        "VALUES (?, 'BigCodeBench/9', 'ana', 9, ?)",
        params=(offline.study_id, extra),
    )

    offline.assert_refused(extra, "BigCodeBench/9", "no such assignment")


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ("status = 'solved'", ("solved", "passed")),
        ("status = 'planned'", ("planned",)),
        ("status = 'exhausted'", ("exhausted",)),
        ("turns_done = 3", ("3",)),
        ("first_pass_turn = 0", ("first_pass_turn",)),
        ("status = 'won'", ("won",)),
    ],
)
def test_a_status_its_turns_do_not_support_is_refused(
    offline: Offline, change: str, words: tuple[str, ...]
) -> None:
    """ana's session holds one failing turn of two allowed."""
    tamper(offline.copy, f"UPDATE sessions SET {change} WHERE id = ?", params=(offline.ana,))

    offline.assert_refused(offline.ana, *words)


def test_more_turns_than_the_session_allows_are_refused(offline: Offline) -> None:
    with Store.open(offline.copy) as store:
        for idx in (1, 2):
            store.save_turn(offline.ana, turn(idx), "running", f"key-ana-{idx}")
    tamper(offline.copy, "UPDATE sessions SET max_turns = 1 WHERE id = ?", params=(offline.ana,))

    offline.assert_refused(offline.ana, "3 turns")


def test_turns_with_a_gap_are_refused(offline: Offline) -> None:
    with Store.open(offline.copy) as store:
        store.save_turn(offline.ana, turn(1, passed=True), "solved", "key-ana-1")
    tamper(
        offline.copy,
        "UPDATE turns SET idx = 2 WHERE session_id = ? AND idx = 1",
        "UPDATE sessions SET first_pass_turn = 2 WHERE id = ?",
        params=(offline.ana,),
    )

    offline.assert_refused(offline.ana, "turn")


def test_a_turn_convtui_cannot_read_is_refused(offline: Offline) -> None:
    tamper(
        offline.copy,
        "UPDATE turns SET notes_json = '{oops' WHERE session_id = ?",
        params=(offline.ana,),
    )

    offline.assert_refused(offline.ana, "cannot be read")


# --- who recorded the file -------------------------------------------------------------------


def test_into_a_study_a_file_is_not_merged_until_the_organiser_says_whose_it_is(
    offline: Offline,
) -> None:
    """The names in the file are its holder's word alone: the organiser's is needed."""
    study, copy = fingerprint(offline.study), fingerprint(offline.copy)

    done = invoke("sessions", "merge", str(offline.copy), "--db", str(offline.study))

    assert_one_line_error(done, str(offline.copy), "--annotator", "ana, ben")
    assert (fingerprint(offline.study), fingerprint(offline.copy)) == (study, copy)


def test_a_session_of_someone_other_than_who_handed_the_file_in_is_refused(
    offline: Offline,
) -> None:
    """ana hands in a file that also holds a session answering ben's assignment as ben: it
    would count as his work. Before, the name in the file was taken as it stood."""
    offline.assert_refused(offline.ben, "says ben recorded it, not ana", annotators=("ana",))


# --- blobs and sizes ------------------------------------------------------------------------


def test_a_blob_whose_hash_is_not_its_texts_is_refused(offline: Offline) -> None:
    """A text swapped under its hash would stand, in the target, for whatever has that hash."""
    reply = one(
        offline.copy,
        "SELECT response_blob FROM model_calls WHERE session_id = ? AND purpose = 'generate'",
        (offline.ana,),
    )
    tamper(offline.copy, "UPDATE blobs SET text = 'import os' WHERE hash = ?", params=(reply,))

    offline.assert_refused(str(reply)[:12], "hash")


def test_a_refused_merge_into_a_new_file_leaves_no_file(offline: Offline, tmp_path: Path) -> None:
    tamper(
        offline.copy, "UPDATE sessions SET status = 'solved' WHERE id = ?", params=(offline.ana,)
    )
    fresh = tmp_path / "fresh.db"

    done = invoke("sessions", "merge", str(offline.copy), "--db", str(fresh))

    assert_one_line_error(done, offline.ana, "solved")
    assert not fresh.exists()


def test_an_oversized_blob_is_refused(offline: Offline) -> None:
    big = "x" * (MAX_BLOB_CHARS + 1)
    tamper(
        offline.copy,
        "INSERT INTO blobs (hash, text) VALUES (?, ?)",
        params=(text_hash(big), big),
    )

    offline.assert_refused(text_hash(big)[:12], "characters")


def test_a_file_past_the_size_cap_is_refused_before_it_is_read(
    offline: Offline, tmp_path: Path
) -> None:
    huge = tmp_path / "huge.db"
    with huge.open("wb") as handle:
        handle.write(b"SQLite format 3\x00")
        handle.truncate(DEFAULT_MAX_BYTES + 1)  # sparse: no disk is spent on it
    before = fingerprint(offline.study)

    done = invoke("sessions", "merge", str(huge), "--db", str(offline.study))

    assert_one_line_error(done, str(huge), "bytes")
    assert fingerprint(offline.study) == before


# --- the file itself --------------------------------------------------------------------------


def _missing_table(path: Path) -> None:
    tamper(path, "DROP TABLE typed_feedback")


def _missing_column(path: Path) -> None:
    tamper(path, "ALTER TABLE turns DROP COLUMN notes_json")


def _newer(path: Path) -> None:
    tamper(
        path,
        "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) "
        "VALUES ('convtui', 'm999_from_the_future', '2099-01-01')",
    )


def _foreign(path: Path) -> None:
    path.unlink()
    tamper(path, "CREATE TABLE notes (x TEXT)", "INSERT INTO notes VALUES ('mine')")


def _garbage(path: Path) -> None:
    path.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 64)


def _truncated(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _empty(path: Path) -> None:
    path.write_bytes(b"")


@pytest.mark.parametrize(
    ("spoil", "words"),
    [
        (_missing_table, ("typed_feedback",)),
        (_missing_column, ("turns", "notes_json")),
        (_newer, ("newer",)),
        (_foreign, ("not a convtui database",)),
        (_garbage, ()),
        (_truncated, ()),
        (_empty, ("empty",)),
    ],
)
def test_a_file_that_is_not_a_store_of_this_schema_is_refused(
    offline: Offline, spoil, words: tuple[str, ...]
) -> None:
    spoil(offline.copy)

    offline.assert_refused(*words)


@pytest.mark.parametrize(
    "fixture", sorted(FIXTURES.glob("store-*.sqlite")), ids=lambda path: path.stem
)
def test_every_schema_so_far_is_merged_from_a_migrated_copy_and_left_as_it_was(
    tmp_path: Path, fixture: Path
) -> None:
    """A file of each earlier schema (tests/fixtures) is merged whole, and not migrated."""
    older, target = tmp_path / "old.db", tmp_path / "study.db"
    shutil.copy(fixture, older)
    migrations = one(older, "SELECT count(*) FROM _sqlite_migrations")
    sessions = one(older, "SELECT count(*) FROM sessions")
    before = fingerprint(older)

    done = invoke("sessions", "merge", str(older), "--db", str(target))

    assert done.returncode == 0, done.stderr
    assert fingerprint(older) == before
    assert one(older, "SELECT count(*) FROM _sqlite_migrations") == migrations
    assert one(target, "SELECT count(*) FROM sessions") == sessions


def test_commits_a_crashed_writer_left_in_the_wal_are_merged_and_the_files_left_as_they_were(
    offline: Offline,
) -> None:
    """The annotator's app died: its last commit lives only in the copy's -wal file."""
    code = (
        "import os, sys\n"
        "from convtui.sessions import Store\n"
        "store = Store.open(sys.argv[1])\n"
        "store.set_session_status(sys.argv[2], 'abandoned')\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(offline.copy), offline.ana], check=True)
    assert (offline.copy.with_name("ana.db-wal")).stat().st_size > 0
    before = fingerprint(offline.copy)

    done = offline.merge()

    assert done.returncode == 0, done.stderr
    assert fingerprint(offline.copy) == before
    status = one(offline.study, "SELECT status FROM sessions WHERE id = ?", (offline.ana,))
    assert status == "abandoned"


def test_a_session_without_its_study_link_still_merges(tmp_path: Path) -> None:
    """Sessions outside any study are checked the same way, and taken when sound."""
    source, target = tmp_path / "mine.db", tmp_path / "all.db"
    with Store.open(source) as store:
        run_id = store.create_run("live", config(), "ids=0", [TASKS[0]])
        (session,) = store.pending_sessions(run_id)
        store.save_turn(session.id, turn(0), "running", "k0")
        store.save_turn(session.id, turn(1, passed=True), "solved", "k1")
        store.finish_run(run_id, "done")

    done = invoke("sessions", "merge", str(source), "--db", str(target))

    assert done.returncode == 0, done.stderr
    assert one(target, "SELECT first_pass_turn FROM sessions") == 1
