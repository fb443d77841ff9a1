"""A person's time on each turn they answered (table ``human_turn_times``, m012): written with
the turn, read back equal, carried by ``sessions merge`` and checked there, shown by
``sessions show``; and an older file migrates to a schema that has the table."""

from __future__ import annotations

import json
import shutil
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

from store_values import config, turn
from support.cli import assert_one_line_error, invoke
from support.store_fixtures import FIXTURES, fixture_script

from convtui.sessions import Store
from convtui.sessions.database.human_times import HumanTurnTimes
from convtui.sessions.database.schema import applied_migrations

TASK = "BigCodeBench/0"
SAID = replace(turn(0), verbal_feedback="Sort it first.", feedback_source="human")
# Turn 0's times, as ``sessions show --json`` gives them.
SHOWN: dict[str, Any] = {
    "sent_utc": "2026-05-09T07:00:40.000000Z",
    "shown_utc": "2026-05-09T07:00:10.000000Z",
    "first_key_utc": "2026-05-09T07:00:12.000000Z",
    "shown_to_sent_s": 30.0,
    "typing_s": 2.5,
    "keystrokes": 14,
    "resumed": False,
}
TIMES = HumanTurnTimes(**SHOWN)
# Turn 1 of the same session, shown before the app closed and answered after it was reopened.
REOPENED = HumanTurnTimes("2026-05-09T07:05:00.000000Z", resumed=True)


def record(path: Path) -> str:
    """A person's session in a new file: turn 0 with TIMES, turn 1 with REOPENED."""
    with Store.open(path) as store:
        sid = store.create_interactive_session(TASK, config(), "human", annotator="ana")
        store.save_turn(sid, SAID, "running", "key-0", TIMES)
        again = replace(turn(1), verbal_feedback="Now the types.", feedback_source="human")
        store.save_turn(sid, again, "running", "key-1", REOPENED)
    return sid


def rows(path: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(path) as db:
        return db.execute(sql).fetchall()


def test_times_are_recorded_with_their_turn_and_read_back_equal(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    sid = record(path)

    with Store.open(path) as store:
        assert store.human_turn_times([sid]) == {sid: {0: TIMES, 1: REOPENED}}
        # A replayed save of a recorded turn changes nothing, times included.
        assert not store.save_turn(sid, SAID, "running", "key-0", REOPENED)
        assert store.human_turn_times([sid])[sid][0] == TIMES
    assert rows(path, "SELECT turn_idx, shown_utc, typing_s, resumed FROM human_turn_times") == [
        (0, "2026-05-09T07:00:10.000000Z", 2.5, 0),
        (1, None, None, 1),
    ]


def test_a_turn_saved_without_times_has_none(store: Store, session_id: str) -> None:
    store.save_turn(session_id, turn(0), "running", "key-0")

    assert store.human_turn_times([session_id]) == {}


def test_a_file_made_before_the_migration_opens_with_an_empty_table(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    shutil.copy(FIXTURES / "store-m011_error_tracebacks.sqlite", path)
    assert "human_turn_times" not in {r[0] for r in rows(path, "SELECT name FROM sqlite_master")}

    with Store.open(path) as store:
        applied = applied_migrations(store.db)
        # m012 comes right after the fixture's last migration (later ones follow it).
        assert applied[applied.index("m011_error_tracebacks") + 1] == "m012_human_turn_times"
        ids = [r[0] for r in store.db.execute("SELECT id FROM sessions")]
        assert store.human_turn_times(ids) == {}
        # The new table takes rows for the sessions recorded before it.
        [human] = [s for s in ids if store.session(s).user_kind == "human"]
        store.save_turn(human, SAID, "running", "key-0", TIMES)
        assert store.human_turn_times([human]) == {human: {0: TIMES}}


def test_the_fixture_of_this_schema_holds_a_persons_times(tmp_path: Path) -> None:
    path = tmp_path / "m012.db"
    shutil.copy(FIXTURES / "store-m012_human_turn_times.sqlite", path)
    expected = fixture_script()

    with Store.open(path) as store:
        [person] = [r[0] for r in store.db.execute("SELECT id FROM sessions WHERE annotator='ana'")]
        assert store.human_turn_times([person]) == {person: {0: expected.TIMES}}


def merge(source: Path, target: Path):
    return invoke("sessions", "merge", str(source), "--db", str(target))


def test_merge_carries_the_times_and_merging_again_adds_nothing(tmp_path: Path) -> None:
    source, target = tmp_path / "ana.db", tmp_path / "study.db"
    sid = record(source)

    for _ in range(2):
        done = merge(source, target)
        assert done.returncode == 0, done.stderr

    with Store.open(target) as store:
        assert store.human_turn_times([sid]) == {sid: {0: TIMES, 1: REOPENED}}
    assert rows(target, "SELECT count(*) FROM human_turn_times") == [(2,)]


def test_merge_refuses_times_convtui_would_not_write(tmp_path: Path) -> None:
    for n, (case, sql) in enumerate(
        {
            "typing_s": "UPDATE human_turn_times SET typing_s = -1 WHERE turn_idx = 0",
            "sent_utc": "UPDATE human_turn_times SET sent_utc = 'yesterday' WHERE turn_idx = 0",
            "both known": "UPDATE human_turn_times SET shown_utc = NULL WHERE turn_idx = 0",
            "reopened": "UPDATE human_turn_times SET typing_s = 1 WHERE turn_idx = 1",
            "simulator": "UPDATE sessions SET user_kind = 'simulator'",
        }.items()
    ):
        source, target = tmp_path / f"{n}-ana.db", tmp_path / f"{n}-study.db"
        record(source)
        with sqlite3.connect(source) as db:
            db.execute(sql)

        done = merge(source, target)

        word = {"both known": "shown_to_sent_s", "reopened": "reopened"}.get(case, case)
        assert_one_line_error(done, str(source), word)
        assert not target.exists() or rows(target, "SELECT count(*) FROM sessions") == [(0,)]


def test_sessions_show_gives_each_answered_turn_its_seconds(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    sid = record(path)

    shown = invoke("sessions", "show", sid, "--db", str(path), "--json")
    text = invoke("sessions", "show", sid, "--db", str(path))

    assert shown.returncode == 0 and text.returncode == 0, shown.stderr + text.stderr
    turns = json.loads(shown.stdout)["turns"]
    assert turns[0]["human_times"] == SHOWN
    assert turns[1]["human_times"]["resumed"] is True
    assert turns[1]["human_times"]["shown_to_sent_s"] is None
    assert "person's time: 30.0 s from shown to sent, 2.5 s typing (14 keystrokes)" in text.stdout
    assert "person's time: unknown (the session was reopened after the turn was shown)" in (
        " ".join(text.stdout.split())
    )


def test_a_turn_nobody_answered_has_no_times_in_show(store: Store, session_id: str) -> None:
    store.save_turn(session_id, turn(0), "running", "key-0")

    shown = invoke("sessions", "show", session_id, "--db", str(store.path), "--json")

    assert "human_times" not in json.loads(shown.stdout)["turns"][0]
