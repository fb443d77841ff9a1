"""The call journal: every call a row as it happens; a finished call is never paid twice."""

from __future__ import annotations

from dataclasses import replace

from store_values import MODEL, attempts, completion, config, prompt, turn
from support.omegas import omegas

from convtui.core.turns.journal import CallJournal, CallRequest, request_hash
from convtui.sessions import Store
from convtui.sessions.database.journal import load_attempts

PARAMS = config().params
KEY = request_hash(MODEL, prompt(0), PARAMS)


def call_rows(store: Store) -> list[dict]:
    return list(
        store.db.query(
            "SELECT id, status, cache_hit, reused_call_id, error, attempts FROM model_calls "
            "ORDER BY id"
        )
    )


def test_the_store_journal_satisfies_the_loop_protocol(store: Store, session_id: str) -> None:
    journal: CallJournal = store.journal(session_id)
    assert journal.find(0, "generate", KEY) is None


def test_a_finished_call_is_reused_as_a_recorded_cache_hit(store: Store, session_id: str) -> None:
    journal = store.journal(session_id)
    call_id = journal.started(CallRequest(0, "generate", KEY, prompt(0), PARAMS, MODEL))
    answer = completion("the reply")
    journal.finished(call_id, answer)

    found = journal.find(0, "generate", KEY)

    assert found == replace(answer, cached=True)
    first, hit = call_rows(store)
    assert (first["id"], first["status"], first["cache_hit"]) == (call_id, "ok", 0)
    assert (hit["status"], hit["cache_hit"], hit["reused_call_id"]) == ("ok", 1, call_id)


def test_a_reused_answer_links_the_turn_to_the_cache_hit_row(store: Store, session_id: str) -> None:
    journal = store.journal(session_id)
    call_id = journal.started(CallRequest(0, "generate", KEY, prompt(0), PARAMS, MODEL))
    journal.finished(call_id, completion("the reply"))
    reused = journal.find(0, "generate", KEY)
    assert reused is not None

    saved = turn(0, generate=reused)
    store.save_turn(session_id, saved, "running")

    assert store.load_turns(session_id) == [saved]
    linked = store.db.execute("SELECT generate_call_id FROM turns").fetchone()[0]
    assert linked == call_rows(store)[1]["id"]  # the cache-hit row, not a new one
    assert len(call_rows(store)) == 3  # generate, its reuse, the simulate call of the turn


def test_started_abandoned_and_failed_calls_are_not_reused(store: Store, session_id: str) -> None:
    journal = store.journal(session_id)
    journal.started(CallRequest(0, "generate", KEY, prompt(0), PARAMS, MODEL))
    assert journal.find(0, "generate", KEY) is None

    run_id = store.session(session_id).run_id
    assert store.abandon_started_calls(run_id) == 1
    assert journal.find(0, "generate", KEY) is None

    failed = journal.started(CallRequest(0, "generate", KEY, prompt(0), PARAMS, MODEL))
    journal.finished(failed, None, "HTTP 500 after 8 attempts")
    assert journal.find(0, "generate", KEY) is None

    statuses = [(row["status"], row["error"]) for row in call_rows(store)]
    assert statuses == [("abandoned", ""), ("error", "HTTP 500 after 8 attempts")]


def test_a_call_is_reused_only_for_the_same_turn_purpose_and_request(
    store: Store, session_id: str
) -> None:
    journal = store.journal(session_id)
    journal.finished(
        journal.started(CallRequest(0, "generate", KEY, prompt(0), PARAMS, MODEL)),
        completion("reply"),
    )

    assert journal.find(1, "generate", KEY) is None
    assert journal.find(0, "simulate", KEY) is None
    assert journal.find(0, "generate", "other-request") is None


def test_sharing_across_sessions_reuses_another_sessions_call(store: Store) -> None:
    run_id = store.create_run(
        "live", config(), "ids=0", ["BigCodeBench/0"], omegas("CF", "CF,EF:full")
    )
    first, second = store.pending_sessions(run_id)
    paid = store.journal(first.id)
    paid.finished(
        paid.started(CallRequest(0, "generate", KEY, prompt(0), PARAMS, MODEL)), completion("r")
    )

    assert store.journal(second.id).find(0, "generate", KEY) is None
    shared = store.journal(second.id, share_across_sessions=True).find(0, "generate", KEY)

    assert shared == completion("r", cached=True)


def test_attempts_are_recorded_once_each(store: Store, session_id: str) -> None:
    journal = store.journal(session_id)
    call_id = journal.started(CallRequest(0, "generate", KEY, prompt(0), PARAMS, MODEL))
    for attempt in attempts():
        journal.attempt(call_id, attempt)
    journal.attempt(call_id, attempts()[0])  # reported twice: still one row

    journal.finished(call_id, None, "gave up")

    assert load_attempts(store.db, call_id) == attempts()
    assert call_rows(store)[0]["attempts"] == 2


def test_abandoning_touches_only_the_given_run(store: Store, session_id: str) -> None:
    other_run = store.create_run("live", config(), "ids=1", ["BigCodeBench/1"])
    other = store.pending_sessions(other_run)[0].id
    store.journal(session_id).started(CallRequest(0, "generate", KEY, prompt(0), PARAMS, MODEL))
    store.journal(other).started(CallRequest(0, "generate", KEY, prompt(0), PARAMS, MODEL))

    assert store.abandon_started_calls(other_run) == 1
    assert sorted(row["status"] for row in call_rows(store)) == ["abandoned", "started"]
    assert store.abandon_started_calls(session_id=session_id) == 1


def test_a_turns_calls_keep_their_position_and_kind_and_a_reuse_its_own_position(
    store: Store, session_id: str
) -> None:
    """ConvCodeWorld's turns make several calls (repairs, the simulator) as raw prompts: each
    row says where in the turn it was made and how it was sent; the second of two identical
    repair prompts is answered from the first (as DSPy's cache answered the reference)."""
    from convtui.core.turns.journal import text_request_hash

    journal = store.journal(session_id)
    key = text_request_hash(MODEL, "Previous Code: ...", PARAMS)
    first = journal.started(CallRequest(1, "repair", key, prompt(1), PARAMS, MODEL, 0, "text"))
    journal.finished(first, completion("Code: ```python\npass\n```"))
    assert journal.find(1, "repair", key, seq=1) is not None
    rows = list(
        store.db.query(
            "SELECT seq, kind, purpose, cache_hit FROM model_calls WHERE session_id = ? "
            "ORDER BY id",
            [session_id],
        )
    )
    assert rows == [
        {"seq": 0, "kind": "text", "purpose": "repair", "cache_hit": 0},
        {"seq": 1, "kind": "text", "purpose": "repair", "cache_hit": 1},
    ]
    assert key != request_hash(MODEL, prompt(1), PARAMS)  # never a chat call's hash
