"""Opening a store: created from nothing, migrated once, WAL, and upgraded from every fixture."""

from __future__ import annotations

import shutil
import sqlite3
import threading
from pathlib import Path

import pytest
from support.store_fixtures import FIXTURES, fixture_script
from support.threads import run_together

from convtui.sessions import Store, StoreError
from convtui.sessions.database.schema import SCHEMA_VERSION, applied_migrations

TABLES = {
    "blobs",
    "runs",
    "sessions",
    "turns",
    "model_calls",
    "call_attempts",
    "executions",
    "execution_tests",
    "typed_feedback",
}


def test_a_new_file_is_created_in_a_new_folder_migrated_and_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "results.db"
    with Store.open(path) as store:
        assert set(store.db.table_names()) >= TABLES
        assert applied_migrations(store.db)[-1] == SCHEMA_VERSION
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    raw.close()


def test_reopening_migrates_nothing_and_keeps_the_data(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    with Store.open(path) as store:
        store.db.execute("INSERT INTO blobs VALUES ('h', 'kept')")
        first = store.db.execute("SELECT * FROM _sqlite_migrations").fetchall()
    with Store.open(path) as store:
        assert store.db.execute("SELECT * FROM _sqlite_migrations").fetchall() == first
        assert store.db.execute("SELECT text FROM blobs").fetchall() == [("kept",)]


def test_every_thread_connection_has_the_store_settings(tmp_path: Path) -> None:
    seen: list[tuple] = []

    def probe(store: Store) -> None:
        db = store.db
        seen.append(
            tuple(
                db.execute(f"PRAGMA {name}").fetchone()[0]
                for name in ("journal_mode", "synchronous", "foreign_keys", "busy_timeout")
            )
        )

    with Store.open(tmp_path / "results.db", busy_timeout_s=7) as store:
        probe(store)
        thread = threading.Thread(target=probe, args=(store,))
        thread.start()
        thread.join()
    # synchronous 1 = NORMAL
    assert seen == [("wal", 1, 1, 7000)] * 2


def test_foreign_keys_are_enforced(store: Store) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        store.db.execute(
            "INSERT INTO sessions (id, run_id, task_id, model, feedback, user_kind, max_turns, "
            "created_utc, updated_utc) VALUES ('s', 'no-such-run', 't', 'm', 'CF', 'none', 3, "
            "'', '')"
        )


def test_many_processes_opening_a_new_file_at_once_migrate_it_once(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def open_it() -> None:
        start.wait()
        try:
            Store.open(path).close()
        except BaseException as exc:  # collected for the assertion below
            errors.append(exc)

    run_together(*[open_it] * 8)

    assert errors == []
    with Store.open(path) as store:
        assert applied_migrations(store.db).count(SCHEMA_VERSION) == 1


def test_a_database_from_a_newer_convtui_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    with Store.open(path) as store:
        store.db.execute(
            "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) "
            "VALUES ('convtui', 'm999_future', 'later')"
        )
    with pytest.raises(StoreError, match="newer convtui"):
        Store.open(path)


def test_memory_databases_are_refused() -> None:
    with pytest.raises(StoreError, match=":memory:"):
        Store.open(":memory:")


def test_the_fixture_of_the_current_schema_is_committed() -> None:
    assert (FIXTURES / f"store-{SCHEMA_VERSION}.sqlite").is_file(), (
        "run python tests/fixtures/make_store_fixture.py after adding a migration"
    )


@pytest.mark.parametrize("fixture", sorted(FIXTURES.glob("store-*.sqlite")), ids=lambda p: p.stem)
def test_a_store_of_an_earlier_version_opens_migrates_and_reads(
    tmp_path: Path, fixture: Path
) -> None:
    path = tmp_path / fixture.name
    shutil.copy(fixture, path)  # opening switches it to WAL: never touch the committed file
    expected = fixture_script()

    with Store.open(path) as store:
        assert applied_migrations(store.db)[-1] == SCHEMA_VERSION
        assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert store.db.execute("PRAGMA foreign_key_check").fetchall() == []
        [run] = [r for r in store.db.execute("SELECT id FROM runs")]
        run_row = store.run(run[0])
        assert run_row.config == expected.CONFIG and run_row.status == "done"
        assert (run_row.benchmark, run_row.mode) == ("bigcodebench", "live")
        first = store.run_sessions(run[0])[0]
        assert (first.status, first.first_pass_turn, first.turns_done) == ("solved", 1, 2)
        assert store.load_turns(first.id) == expected.expected_turns()
        cached = store.execution_cache().get("fixture-key-1")
        assert cached == expected.expected_turns()[1].execution
        assert store.find_resumable_run(run_row.config_hash, expected.SELECTION) is None


# Runs as each command recorded them before m007: (kind, selection) -> (benchmark, mode).
BEFORE_M007 = {
    ("live", "suite=bigcodebench;ids=0-4;lib=;stdlib_only=False"): ("bigcodebench", "live"),
    ("static", "static;references=0123456789abcdef"): ("bigcodebench", "static"),
    ("live", "imported;run_a;0123456789abcdef"): ("bigcodebench", "live"),
    ("live", "codeif;mode=static;protocol=codeif;data=0123456789abcdef;ids=1-3"): (
        "codeif",
        "static",
    ),
    ("live", "codeif;mode=dynamic;protocol=codeif;conversation=authors;data=0123;ids="): (
        "codeif",
        "dynamic",
    ),
    ("live", "codeif;mode=dynamic;protocol=convtui;data=0123;ids="): ("codeif", "dynamic"),
    ("static", "codeif;mode=replay;protocol=convtui;data=0123;logs=people.db;refs=4567"): (
        "codeif",
        "replay",
    ),
    ("live", "codeif;mode=static;protocol=codeif;data=0123;scored=out.jsonl;sha256=89ab"): (
        "codeif",
        "static",
    ),
}


def test_runs_recorded_before_m007_are_told_apart_by_their_new_columns(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    shutil.copy(FIXTURES / "store-m006_run_settings.sqlite", path)
    raw = sqlite3.connect(path)
    raw.row_factory = sqlite3.Row
    template = dict(raw.execute("SELECT * FROM runs").fetchone())
    for number, (kind, selection) in enumerate(BEFORE_M007):
        row = {**template, "id": f"run-{number}", "kind": kind, "selection": selection}
        raw.execute(
            f"INSERT INTO runs ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
            list(row.values()),
        )
    raw.commit()
    raw.close()

    with Store.open(path) as store:
        found = {
            (row["kind"], row["selection"]): (row["benchmark"], row["mode"])
            for row in store.db.query("SELECT kind, selection, benchmark, mode FROM runs")
        }
        selections = [row.selection for row in map(store.run, [f"run-{n}" for n in range(8)])]

    assert found == {**BEFORE_M007, ("live", fixture_script().SELECTION): ("bigcodebench", "live")}
    assert selections == [selection for _, selection in BEFORE_M007]  # identities untouched


def test_of_many_openers_of_one_new_file_one_made_it(tmp_path: Path) -> None:
    """Only the opener that made the file may remove it again after a failed command: under
    load, one opener's failure used to remove the file under the seven others' open
    connections (each then failed with "disk I/O error")."""
    path = tmp_path / "results.db"
    made: list[bool] = []
    start = threading.Barrier(8)

    def open_it() -> None:
        start.wait()
        store = Store.open(path)
        made.append(store._created)
        store.close()

    run_together(*[open_it] * 8)
    assert sorted(made) == [False] * 7 + [True]
