"""save_turn is one atomic, idempotent step; load_turns gives back equal Turn values."""

from __future__ import annotations

from dataclasses import replace

import pytest
from store_values import completion, turn

from convtui.core.execution.types import ExecResult
from convtui.core.turns.record import Turn
from convtui.sessions import NotFoundError, Store


def count(store: Store, table: str) -> int:
    return store.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_load_turns_round_trips_results_tests_tracebacks_completions_and_prompts(
    store: Store, session_id: str
) -> None:
    saved = [turn(0), turn(1), turn(2, passed=True)]
    for t in saved:
        store.save_turn(session_id, t, "solved" if t.passed else "running", f"key-{t.idx}")

    loaded = store.load_turns(session_id)

    assert loaded == saved
    assert isinstance(loaded[0].execution, ExecResult)
    assert loaded[0].execution.tests[1].traceback.endswith("✗ [bold]\x00")
    assert loaded[0].prompt == saved[0].prompt and isinstance(loaded[0].prompt, tuple)
    assert loaded[2].simulate_call is None and loaded[0].verbal_feedback is not None


def test_a_replayed_save_turn_is_a_no_op(store: Store, session_id: str) -> None:
    first = turn(0)
    assert store.save_turn(session_id, first, "running", "key-0") is True
    tables = ("turns", "executions", "execution_tests", "model_calls", "blobs")
    before = {table: count(store, table) for table in tables}

    assert store.save_turn(session_id, first, "running", "key-0") is False
    assert store.save_turn(session_id, turn(0, passed=True), "solved", "key-x") is False

    assert {table: count(store, table) for table in tables} == before
    session = store.session(session_id)
    assert (session.turns_done, session.status, session.first_pass_turn) == (1, "running", None)


def test_save_turn_moves_the_session_counters_with_the_turn(store: Store, session_id: str) -> None:
    store.save_turn(session_id, turn(0), "running")
    store.save_turn(session_id, turn(1, passed=True), "solved")

    session = store.session(session_id)
    assert session.turns_done == 2
    assert session.status == "solved"
    assert session.first_pass_turn == 1
    assert session.finished


def test_first_pass_turn_keeps_the_first_passing_turn(store: Store, session_id: str) -> None:
    # An interactive user may go on after a pass; the first one stays the outcome.
    store.save_turn(session_id, turn(0, passed=True), "running")
    store.save_turn(session_id, turn(1, passed=True), "solved")

    assert store.session(session_id).first_pass_turn == 0


def test_turns_are_recorded_in_order_without_gaps(store: Store, session_id: str) -> None:
    with pytest.raises(ValueError, match="cannot record turn 1"):
        store.save_turn(session_id, turn(1), "running")

    assert count(store, "turns") == 0
    assert store.session(session_id).turns_done == 0


def test_a_turn_for_an_unknown_session_is_refused(store: Store) -> None:
    with pytest.raises(NotFoundError):
        store.save_turn("nope", turn(0), "running")


def test_a_turn_without_execution_or_calls_round_trips(store: Store, session_id: str) -> None:
    bare = Turn(
        idx=0,
        reply="",
        code="",
        compiled=False,
        compile_feedback="SyntaxError: invalid syntax",
        execution=None,
    )
    store.save_turn(session_id, bare, "stalled")

    assert store.load_turns(session_id) == [bare]
    assert count(store, "executions") == count(store, "model_calls") == 0


def test_a_turn_recorded_without_a_journal_still_gets_its_call_rows(
    store: Store, session_id: str
) -> None:
    store.save_turn(session_id, turn(0), "running")

    calls = list(store.db.query("SELECT purpose, status, model FROM model_calls ORDER BY purpose"))
    assert calls == [
        {"purpose": "generate", "status": "ok", "model": "smollm2"},
        {"purpose": "simulate", "status": "ok", "model": "smollm2"},
    ]


def test_identical_texts_are_stored_once(store: Store, session_id: str) -> None:
    first = turn(0)
    store.save_turn(session_id, first, "running")

    texts = [row[0] for row in store.db.execute("SELECT text FROM blobs")]
    # The reply is also the generate call's response; the code is also the execution's code.
    assert texts.count(first.reply) == 1
    assert texts.count(first.code) == 1
    assert count(store, "blobs") == len(set(texts))


def test_cached_completion_flag_round_trips(store: Store, session_id: str) -> None:
    cached = turn(0, generate=completion("reused reply", cached=True))
    store.save_turn(session_id, cached, "running")

    loaded = store.load_turns(session_id)[0]
    assert loaded.generate_call == cached.generate_call
    assert loaded.generate_call is not None and loaded.generate_call.cached


@pytest.mark.parametrize(
    ("sent", "edited"), [("Check the empty list.", False), ("Check empty input.", True)]
)
def test_an_assisted_turn_keeps_the_draft_and_whether_it_was_edited(
    store: Store, session_id: str, sent: str, edited: bool
) -> None:
    drafted = replace(
        turn(0),
        verbal_feedback=sent,
        feedback_draft="Check the empty list.",
        feedback_source="human",
    )
    store.save_turn(session_id, drafted, "accepted")

    [loaded] = store.load_turns(session_id)
    row = store.db.execute(
        "SELECT feedback_draft, feedback_edited, verbal_feedback FROM turn_texts"
    ).fetchone()

    assert loaded == drafted and loaded.feedback_edited is edited
    assert row == ("Check the empty list.", int(edited), sent)
    assert store.session(session_id).status == "accepted"
    assert store.session(session_id).finished


def test_the_feedback_a_turns_calls_were_given_round_trips(store: Store, session_id: str) -> None:
    from convtui.core.turns.record import TurnFeedback

    given = TurnFeedback(
        compilation="No syntax errors",
        execution="TEST_ONE\nTraceback ...\n",
        user=None,  # a silent novice: not the same as an empty reply
        user_source="none",
    )
    saved = [turn(0), replace(turn(1), received=given)]
    for t in saved:
        store.save_turn(session_id, t, "running", f"key-{t.idx}")
    assert store.load_turns(session_id) == saved


def test_the_exception_text_of_a_module_error_round_trips(store: Store, session_id: str) -> None:
    """BigCodeBench's ALL entry (str(exc)) is kept beside convtui's own wording (m004)."""
    from convtui.core.execution.types import TestOutcome

    broken = ExecResult(
        "error",
        (TestOutcome("test_one", "not_run"),),
        detail="the code does not compile: SyntaxError: expected ':' (line 6)",
        error_message="expected ':' (__test__.py, line 6)",
    )
    saved = [replace(turn(0), execution=broken, compiled=False)]
    store.save_turn(session_id, saved[0], "running", "key-0")
    (loaded,) = store.load_turns(session_id)
    assert loaded.execution is not None
    assert loaded.execution.error_message == "expected ':' (__test__.py, line 6)"
    assert loaded == saved[0]


def test_the_traceback_of_an_error_while_loading_round_trips(store: Store, session_id: str) -> None:
    """convtui's protocol renders a load error from its traceback (m011), so a resumed or
    replayed session must read the same one back."""
    from convtui.core.execution.types import TestOutcome

    tb = (
        "Traceback (most recent call last):\n"
        '  File "__test__.py", line 3, in <module>\n'
        "    for k, v in iteritems({}):\n"
        "NameError: name 'iteritems' is not defined\n"
    )
    raised = ExecResult(
        "error",
        (TestOutcome("test_one", "not_run"),),
        detail="name 'iteritems' is not defined",
        error_message="name 'iteritems' is not defined",
        error_traceback=tb,
    )
    saved = replace(turn(0), execution=raised)
    store.save_turn(session_id, saved, "running", "key-0")
    (loaded,) = store.load_turns(session_id)
    assert loaded.execution is not None
    assert loaded.execution.error_traceback == tb
    assert loaded == saved
