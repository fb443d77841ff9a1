"""Child process of the kill-safety test: plays a run's pending sessions the way the bench
does (lease, abandon stale calls, journaled model calls, cached executions, one save per
turn), as fast as it can, so that a SIGKILL lands anywhere.

    python store_writer.py DB RUN_ID
"""

from __future__ import annotations

import sys
from dataclasses import replace

from store_values import MODEL, completion, config, prompt, turn

from convtui.core.models.types import Attempt
from convtui.core.turns.journal import CallRequest, request_hash
from convtui.core.turns.record import Turn
from convtui.sessions import SessionRow, Store

PARAMS = config().params


def first_pass(task_id: str, max_turns: int) -> int:
    """When a task passes (a value >= max_turns: never), fixed per task."""
    return int(task_id.rsplit("/", 1)[1]) % (max_turns + 2)


def expected_turn(session: SessionRow, idx: int) -> Turn:
    reply = completion(f"reply for {session.task_id} {session.feedback} turn {idx}")
    made = turn(idx, passed=idx == first_pass(session.task_id, session.max_turns), generate=reply)
    return replace(made, reply=reply.text)


def play(store: Store, session: SessionRow) -> None:
    store.set_session_status(session.id, "running")
    journal = store.journal(session.id)
    cache = store.execution_cache()
    for idx in range(len(store.load_turns(session.id)), session.max_turns):
        wanted = expected_turn(session, idx)
        key = request_hash(MODEL, prompt(idx), PARAMS)
        reply = journal.find(idx, "generate", key)
        if reply is None:
            call = journal.started(CallRequest(idx, "generate", key, prompt(idx), PARAMS, MODEL))
            journal.attempt(call, Attempt(1, "rate_limit", 0.05, "429", 1.5))
            journal.attempt(call, Attempt(2, "ok", 0.25, "", None))
            reply = replace(wanted.generate_call)  # type: ignore[type-var]
            journal.finished(call, reply)
        made = replace(wanted, generate_call=reply)
        exec_key = f"{session.task_id}:{idx}"
        assert made.execution is not None
        if cache.get(exec_key) is None:
            cache.put(exec_key, session.task_id, made.code, made.execution)
        if made.passed:
            status = "solved"
        elif idx + 1 >= session.max_turns:
            status = "exhausted"
        else:
            status = "running"
        store.save_turn(session.id, made, status, exec_key)
        if status != "running":
            return


def main(db: str, run_id: str) -> int:
    with Store.open(db) as store:
        store.take_lease(run_id)
        store.abandon_started_calls(run_id)
        print("ready", flush=True)
        for session in store.pending_sessions(run_id):
            play(store, session)
        store.finish_run(run_id, "done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
