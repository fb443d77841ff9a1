"""A study's rows in a real SQLite file (sessions/studies/study_rows.py): written once per database,
read back as written, tokens checked against their hashes only, assignments followed through
their sessions, and an annotator who leaves handing on what they had not finished."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.studies import PILOT, PILOT_TASKS

from convtui.core.settings.config import SessionConfig
from convtui.core.settings.omega import FeedbackConfig
from convtui.core.studies.spec import (
    Assignment,
    StudyError,
    assign,
    new_token,
    reassign,
    token_hash,
)
from convtui.sessions import Store
from convtui.sessions.studies.study_rows import (
    add_annotator,
    annotators,
    assignments,
    attach_session,
    create_study,
    hand_over,
    load_study,
    next_assignment,
    set_token,
    start_assignment,
    study_tasks,
    who_holds,
)

SPEC, TASKS = PILOT, PILOT_TASKS
CONFIG = SessionConfig(model=SPEC.model, feedback=FeedbackConfig("full", "expert"), max_turns=2)


@pytest.fixture
def study(tmp_path: Path):
    store = Store.open(tmp_path / "study.db")
    tokens = {name: new_token() for name in SPEC.annotators}
    given = assign(TASKS, SPEC.annotators, SPEC.overlap, SPEC.seed)
    study_id = create_study(
        store, SPEC, CONFIG, given, {n: token_hash(t) for n, t in tokens.items()}
    )
    yield store, study_id, tokens, given
    store.close()


def test_the_study_reads_back_as_written_and_a_second_is_refused(study) -> None:
    store, study_id, _tokens, given = study
    row = load_study(store)
    assert (row.id, row.name, row.spec, row.config) == (study_id, "pilot", SPEC, CONFIG)
    assert annotators(store, study_id) == [("ana", True), ("ben", True), ("cy", True)]
    stored = [(a.task_id, a.annotator, a.position) for a in assignments(store, study_id)]
    assert sorted(stored) == sorted((a.task_id, a.annotator, a.position) for a in given)
    with pytest.raises(StudyError, match="already holds study 'pilot'"):
        create_study(store, SPEC, CONFIG, given, {n: token_hash(n) for n in SPEC.annotators})


def test_no_token_is_stored_and_each_opens_only_its_annotator(study) -> None:
    store, study_id, tokens, _given = study
    with store.reading() as db:
        dump = "\n".join(db.conn.iterdump())
    assert not any(token in dump for token in tokens.values())
    assert {who_holds(store, study_id, t) for t in tokens.values()} == {"ana", "ben", "cy"}
    assert who_holds(store, study_id, tokens["ana"]) == "ana"
    assert who_holds(store, study_id, "not-a-token") is None
    fresh = new_token()
    set_token(store, study_id, "ana", token_hash(fresh))
    assert who_holds(store, study_id, tokens["ana"]) is None  # the old one stops at once
    assert who_holds(store, study_id, fresh) == "ana"


def test_an_assignment_goes_pending_started_done_and_the_next_comes_up(study) -> None:
    store, study_id, _tokens, _given = study
    first = next_assignment(store, study_id, "ben")
    assert first is not None and first.position == 0 and first.state == "pending"
    session = store.create_interactive_session(first.task_id, CONFIG, annotator="ben")
    attach_session(store, study_id, first.task_id, "ben", session)
    again = next_assignment(store, study_id, "ben")
    assert again is not None and (again.task_id, again.state) == (first.task_id, "started")
    with pytest.raises(StudyError, match="not an open assignment of ben"):
        attach_session(store, study_id, first.task_id, "ben", session)
    store.set_session_status(session, "abandoned")
    after = next_assignment(store, study_id, "ben")
    assert after is not None and after.position == 1
    mine = assignments(store, study_id, "ben")
    assert [a.state for a in mine][:2] == ["done", "pending"]


def test_someone_who_leaves_hands_on_what_they_had_not_done(study) -> None:
    store, study_id, tokens, given = study
    theirs = [a for a in assignments(store, study_id, "cy")]
    session = store.create_interactive_session(theirs[0].task_id, CONFIG, annotator="cy")
    attach_session(store, study_id, theirs[0].task_id, "cy", session)
    store.set_session_status(session, "solved")
    moves = reassign(given, "cy", frozenset({theirs[0].task_id}), ["ana", "ben"])
    hand_over(store, study_id, "cy", moves)
    assert who_holds(store, study_id, tokens["cy"]) is None
    states = {a.task_id: a.state for a in assignments(store, study_id, "cy")}
    assert states[theirs[0].task_id] == "done"
    assert sorted(t for t, s in states.items() if s == "reassigned") == sorted(
        a.task_id for a, _ in moves
    )
    assert next_assignment(store, study_id, "cy") is None
    for moved, to in moves:
        taken = [a for a in assignments(store, study_id, to) if a.task_id == moved.task_id]
        assert len(taken) == 1 and taken[0].state == "pending"
    # Every task still has two annotators who are to do it or did it.
    live = [a for a in assignments(store, study_id) if a.state != "reassigned"]
    assert all(sum(a.task_id == t for a in live) == 2 for t in TASKS)


def test_a_new_annotator_is_enrolled_once(study) -> None:
    store, study_id, _tokens, _given = study
    add_annotator(store, study_id, "dee", token_hash("t"), [Assignment(TASKS[0], "dee", 0)])
    assert annotators(store, study_id)[-1] == ("dee", True)
    assert [a.task_id for a in assignments(store, study_id, "dee")] == [TASKS[0]]
    with pytest.raises(StudyError, match="already has an annotator 'dee'"):
        add_annotator(store, study_id, "dee", token_hash("u"), [])


def test_a_database_without_a_study_names_the_command_that_makes_one(tmp_path: Path) -> None:
    with Store.open(tmp_path / "plain.db") as store, pytest.raises(StudyError) as caught:
        load_study(store)
    assert "convtui study init STUDY.toml" in str(caught.value)


def test_a_session_opened_for_an_assignment_is_attached_in_the_same_write(study) -> None:
    store, study_id, _tokens, given = study
    first = next_assignment(store, study_id, "ana")
    assert first is not None
    session = start_assignment(store, study_id, first.task_id, "ana", CONFIG, "human")
    row = store.session(session)
    assert (row.task_id, row.annotator, row.status) == (first.task_id, "ana", "planned")
    mine = assignments(store, study_id, "ana")[0]
    assert (mine.session_id, mine.state) == (session, "started")
    # The assignment is no longer open: nothing is written, not even the session row.
    with pytest.raises(StudyError, match="not an open assignment of ana"):
        start_assignment(store, study_id, first.task_id, "ana", CONFIG, "human")
    with store.reading() as db:
        assert db.execute("SELECT COUNT(*) FROM sessions").fetchone() == (1,)
    assert study_tasks(store, study_id) == list(dict.fromkeys(a.task_id for a in given))
