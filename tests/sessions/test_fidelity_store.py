"""The fidelity tables (m013, sessions/studies/fidelity.py): a file made before the migration opens
with them empty and its sessions unchanged; the fixture of this schema holds a simulator's
feedback and a target's turn; the journal reuses a finished call without writing, and a call
left ``started`` by a killed process is abandoned."""

from __future__ import annotations

import shutil
from pathlib import Path

from support.fidelity import dump
from support.store_fixtures import FIXTURES, fixture_script

from convtui.core.models.types import ChatMessage, Completion, GenerationParams
from convtui.core.turns.journal import CallRequest, request_hash
from convtui.sessions import Store
from convtui.sessions.database.schema import applied_migrations
from convtui.sessions.studies.fidelity import (
    FidelityJournal,
    abandon_started_calls,
    feedback_rows,
    fidelity_counts,
    read_states,
    target_turn_rows,
)


def test_a_file_made_before_the_migration_opens_with_empty_tables(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    shutil.copy(FIXTURES / "store-m012_human_turn_times.sqlite", path)
    before = dump(path)
    expected = fixture_script()

    with Store.open(path) as store:
        applied = applied_migrations(store.db)
        assert applied[applied.index("m012_human_turn_times") + 1] == "m013_fidelity"
        assert fidelity_counts(store) == {
            "fidelity_calls": 0,
            "fidelity_feedback": 0,
            "fidelity_turns": 0,
        }
        [state] = read_states(store)  # the person's turn 0 of the fixture
        assert (state.annotator, state.turn_idx, state.person_text) == ("ana", 0, expected.SAID)
        assert state.user_kind == "human" and state.draft is None
    assert dump(path) == before


def test_the_fixture_of_this_schema_holds_feedback_and_a_target_turn(tmp_path: Path) -> None:
    path = tmp_path / "m013.db"
    shutil.copy(FIXTURES / "store-m013_fidelity.sqlite", path)
    expected = fixture_script()

    with Store.open(path) as store:
        [state] = read_states(store)
        [(key, row)] = feedback_rows(store).items()
        assert key == (state.state_id, f"simulator:novice:{expected.SIMULATOR}")
        assert row.text == expected.SIMULATED and row.call_id is not None
        assert (row.identity.persona, row.identity.protocol) == ("novice", "convtui")
        [(turn_key, turn)] = target_turn_rows(store).items()
        assert turn_key == (state.state_id, "person", expected.TARGET, "convtui")
        assert (turn.passed, turn.tests_passed, turn.tests_total) == (True, 1, 1)
        assert store.db.execute("PRAGMA foreign_key_check").fetchall() == []


def test_the_journal_reuses_without_writing_and_abandons_dead_calls(tmp_path: Path) -> None:
    path = tmp_path / "m013.db"
    shutil.copy(FIXTURES / "store-m013_fidelity.sqlite", path)
    params = GenerationParams(max_tokens=8)
    asked = (ChatMessage("user", "Say something."),)
    key = request_hash("mock:x", asked, params)
    with Store.open(path) as store:
        [state] = read_states(store)
        journal = FidelityJournal(store, state, "target", "none", "k")
        assert journal.find(1, "generate", key) is None
        call = journal.started(CallRequest(1, "generate", key, asked, params, "mock:x"))
        assert abandon_started_calls(store) == 1  # its process died
        assert journal.find(1, "generate", key) is None  # never answered: asked again
        call = journal.started(CallRequest(1, "generate", key, asked, params, "mock:x"))
        done = Completion("Hello.", "stop", 2, 1, 0.25, 1, "mock", None, False)
        journal.finished(call, done)
        calls = fidelity_counts(store)["fidelity_calls"]
        found = journal.find(1, "generate", key)
        assert found is not None and (found.text, found.cached) == ("Hello.", True)
        assert fidelity_counts(store)["fidelity_calls"] == calls
