"""Words typed in the app but not sent (``typed_feedback``): kept, replaced, read back, and
gone with the turn that records them, in the same transaction."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from store_values import config, turn
from support.store_fixtures import FIXTURES, fixture_script

from convtui.sessions import NotFoundError, Store
from convtui.sessions.merging.merge import merge_store


def interactive(store: Store) -> str:
    return store.create_interactive_session("BigCodeBench/0", config(), "human", "ana")


def kept_rows(store: Store) -> list[tuple]:
    return store.db.execute(
        "SELECT session_id, turn_idx, text FROM typed_feedback ORDER BY session_id, turn_idx"
    ).fetchall()


def test_words_are_kept_replaced_read_back_and_removed_when_blank(store: Store) -> None:
    session_id = interactive(store)
    assert store.typed_feedback(session_id, 0) is None

    assert store.keep_typed(session_id, 0, "Sort by the mean") is True
    assert store.keep_typed(session_id, 0, "Sort by the mean, highest first") is True
    found = store.typed_feedback(session_id, 0)
    assert found is not None
    assert (found.turn_idx, found.text, found.instruction) == (
        0,
        "Sort by the mean, highest first",
        None,
    )
    assert found.written_utc.endswith("Z")
    assert store.typed_feedback(session_id, 1) is None

    assert store.keep_typed(session_id, 0, "  \n ") is False
    assert store.typed_feedback(session_id, 0) is None
    assert kept_rows(store) == []


def test_an_unknown_session_keeps_nothing(store: Store) -> None:
    with pytest.raises(NotFoundError):
        store.keep_typed("no-such-session", 0, "words")


def test_saving_the_turn_removes_its_words_and_no_others(store: Store) -> None:
    session_id = interactive(store)
    store.keep_typed(session_id, 0, "Check the sum")
    store.keep_typed(session_id, 1, "typed ahead for turn 1")

    store.save_turn(session_id, turn(0), "running")

    assert kept_rows(store) == [(session_id, 1, "typed ahead for turn 1")]


def test_a_save_turn_that_is_refused_keeps_the_words(store: Store) -> None:
    """The removal is part of the turn's transaction: no turn recorded, no words lost."""
    session_id = interactive(store)
    store.keep_typed(session_id, 1, "for turn 1")
    with pytest.raises(ValueError, match="cannot record turn 1"):
        store.save_turn(session_id, turn(1), "running")  # turn 0 is not recorded yet
    assert kept_rows(store) == [(session_id, 1, "for turn 1")]


def test_words_arriving_after_their_turn_was_saved_are_not_kept(store: Store) -> None:
    """The app writes in the background: a write still on its way when the person sent the
    words must not bring them back beside the turn that holds them."""
    session_id = interactive(store)
    store.save_turn(session_id, turn(0), "running")
    assert store.keep_typed(session_id, 0, "Check the sum in turn 0.") is False
    assert kept_rows(store) == []


def test_a_session_that_ends_between_turns_drops_its_words(store: Store) -> None:
    session_id = interactive(store)
    store.save_turn(session_id, turn(0), "running")
    store.keep_typed(session_id, 1, "for turn 1")
    store.set_session_status(session_id, "running")
    assert len(kept_rows(store)) == 1

    store.set_session_status(session_id, "abandoned")

    assert kept_rows(store) == []
    assert store.keep_typed(session_id, 1, "late") is False


def test_the_fixture_keeps_its_typed_words_and_an_older_one_takes_new_ones(
    tmp_path: Path,
) -> None:
    expected = fixture_script()
    current = tmp_path / "m010.sqlite"
    shutil.copy(FIXTURES / "store-m010_typed_feedback.sqlite", current)
    with Store.open(current) as store:
        [(session_id,)] = store.db.execute("SELECT id FROM sessions WHERE run_id IS NULL")
        found = store.typed_feedback(session_id, 0)
        assert found is not None and found.text == expected.TYPED

    older = tmp_path / "m009.sqlite"
    shutil.copy(FIXTURES / "store-m009_call_endpoints.sqlite", older)
    with Store.open(older) as store:
        assert kept_rows(store) == []
        [(session_id,)] = store.db.execute("SELECT id FROM sessions WHERE run_id IS NULL")
        assert store.keep_typed(session_id, 0, expected.TYPED) is True
        assert store.typed_feedback(session_id, 0) is not None


def test_merging_brings_the_words_of_a_new_session_and_merging_again_changes_nothing(
    tmp_path: Path,
) -> None:
    source, target = tmp_path / "offline.db", tmp_path / "study.db"
    with Store.open(source) as store:
        session_id = interactive(store)
        store.save_turn(session_id, turn(0), "running")
        store.keep_typed(session_id, 1, "typed offline, not sent")
        written = store.typed_feedback(session_id, 1)
    with Store.open(source) as mine, Store.open(target) as theirs:
        merge_store(mine, theirs)
        assert theirs.typed_feedback(session_id, 1) == written
    with sqlite3.connect(target) as db:
        before = list(db.iterdump())
    with Store.open(source) as mine, Store.open(target) as theirs:
        mine.keep_typed(session_id, 1, "typed offline, changed since")
        merge_store(mine, theirs)  # the target's session is the one that goes on there
        assert theirs.typed_feedback(session_id, 1) == written
    with sqlite3.connect(target) as db:
        assert list(db.iterdump()) == before
