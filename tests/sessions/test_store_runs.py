"""Runs: created with all their sessions, found again after a kill, driven by one process."""

from __future__ import annotations

import os
import subprocess
from dataclasses import replace

import pytest
from store_values import config, turn
from support.omegas import omegas

from convtui.core.settings.omega import ALL_CONFIGS, FeedbackConfig
from convtui.sessions import RunLeasedError, Store, run_config_hash
from convtui.sessions.reading.results import list_runs, run_outcomes

TASKS = ["BigCodeBench/0", "BigCodeBench/1", "BigCodeBench/2"]


def test_a_run_is_created_with_all_its_sessions_planned(store: Store) -> None:
    cfg = config(simulator="openai:gpt-4o-mini")
    run_id = store.create_run("live", cfg, "bigcodebench ids=0-2", TASKS, ALL_CONFIGS)

    pending = store.pending_sessions(run_id)
    assert len(pending) == len(TASKS) * 9
    assert {s.status for s in pending} == {"planned"}
    assert [s.task_id for s in pending[:9]] == [TASKS[0]] * 9  # task-major order
    novice = next(s for s in pending if s.feedback == "CF,VF:novice")
    silent = next(s for s in pending if s.feedback == "CF,EF:full")
    assert (novice.user_kind, novice.simulator) == ("simulator", "openai:gpt-4o-mini")
    assert (silent.user_kind, silent.simulator) == ("none", None)
    run = store.run(run_id)
    assert (
        run.feedback == tuple(c.label for c in ALL_CONFIGS)
        and run.task_count == 3
        and run.status == "planned"
    )
    assert run.config == cfg


def test_pending_sessions_leave_out_finished_ones(store: Store) -> None:
    run_id = store.create_run("live", config(), "ids=0-2", TASKS)
    first, second, third = store.pending_sessions(run_id)
    store.save_turn(first.id, turn(0, passed=True), "solved")
    store.set_session_status(second.id, "failed", "model error: 401")
    store.set_session_status(third.id, "running")

    assert [s.id for s in store.pending_sessions(run_id)] == [third.id]
    assert store.session(second.id).error == "model error: 401"


def test_the_same_command_finds_its_unfinished_run(store: Store) -> None:
    cfg = config()
    run_id = store.create_run("live", cfg, "ids=0-2", TASKS)

    assert store.find_resumable_run(cfg.config_hash, "ids=0-2") == run_id
    assert store.find_resumable_run(cfg.config_hash, "ids=0-9") is None
    assert store.find_resumable_run(replace(cfg, max_turns=10).config_hash, "ids=0-2") is None

    store.finish_run(run_id, "interrupted")
    assert store.find_resumable_run(cfg.config_hash, "ids=0-2") == run_id
    store.finish_run(run_id, "done")
    assert store.find_resumable_run(cfg.config_hash, "ids=0-2") is None


def test_feedback_is_stored_by_label_once_each_and_all_means_the_nine(store: Store) -> None:
    run_id = store.create_run("live", config(), "ids=0", TASKS[:1], omegas("cf, ef:FULL", "all"))

    labels = store.run(run_id).feedback
    assert labels[0] == "CF,EF:full" and set(labels) == {c.label for c in ALL_CONFIGS}
    assert len(store.pending_sessions(run_id)) == 9


def test_a_run_over_several_feedback_configs_has_its_own_hash(store: Store) -> None:
    cfg = config()
    labels = ["CF", "CF,EF:full"]
    run_id = store.create_run("live", cfg, "ids=0-2", TASKS, omegas(*labels))

    assert store.find_resumable_run(cfg.config_hash, "ids=0-2") is None
    assert store.find_resumable_run(run_config_hash(cfg, reversed(labels)), "ids=0-2") == run_id
    assert run_config_hash(cfg, [cfg.feedback.label]) == cfg.config_hash


def test_a_second_live_process_is_refused_the_lease(
    store: Store, other_process: subprocess.Popen
) -> None:
    run_id = store.create_run("live", config(), "ids=0-2", TASKS)
    store.take_lease(run_id, other_process.pid, seconds=60)

    with pytest.raises(RunLeasedError, match=f"pid {other_process.pid}"):
        store.take_lease(run_id)

    other_process.kill()
    other_process.wait()
    store.take_lease(run_id)  # its holder died: taken over before the lease expires
    run = store.run(run_id)
    assert (run.pid, run.status) == (os.getpid(), "running")


def test_an_expired_lease_can_be_taken_and_the_holder_can_renew(
    store: Store, other_process: subprocess.Popen
) -> None:
    run_id = store.create_run("live", config(), "ids=0-2", TASKS)
    store.take_lease(run_id, other_process.pid, seconds=-1)

    store.take_lease(run_id, seconds=60)
    store.take_lease(run_id, seconds=120)  # renewal by the holder
    with pytest.raises(RunLeasedError):
        store.take_lease(run_id, other_process.pid)

    store.finish_run(run_id, "done")
    run = store.run(run_id)
    assert run.status == "done" and run.lease_until_utc is None and run.finished_utc


def test_outcomes_and_run_summaries_for_reports(store: Store) -> None:
    run_id = store.create_run("live", config(), "ids=0-2", TASKS, omegas("CF", "CF,EF:full"))
    other = store.create_run("live", config(max_turns=5), "ids=0-2", TASKS[:1])
    sessions = store.pending_sessions(run_id)
    store.save_turn(sessions[0].id, turn(0), "running")
    store.save_turn(sessions[0].id, turn(1, passed=True), "solved")
    store.save_turn(sessions[1].id, turn(0), "exhausted")

    outcomes = run_outcomes(store, [run_id])

    assert len(outcomes) == 6 and len(run_outcomes(store)) == 7
    assert run_outcomes(store, []) == []
    solved = outcomes[0]
    assert (solved.task_id, solved.feedback, solved.status) == (TASKS[0], "CF", "solved")
    assert (solved.first_pass_turn, solved.turns_done, solved.max_turns) == (1, 2, 3)
    assert outcomes[1].first_pass_turn is None and outcomes[1].finished

    summaries = {s.id: s for s in list_runs(store)}
    assert [s.id for s in list_runs(store)] == [other, run_id]  # newest first
    summary = summaries[run_id]
    assert (summary.sessions, summary.finished_sessions, summary.solved_sessions) == (6, 2, 1)
    assert summary.turns == 3 and summary.resumable and not summary.held
    store.take_lease(run_id)
    assert {s.id: s for s in list_runs(store)}[run_id].held


def test_an_interactive_session_keeps_its_own_config(store: Store) -> None:
    cfg = config(FeedbackConfig("partial", "expert"), simulator="openai:gpt-4o")
    session_id = store.create_interactive_session("CodeIF/11", cfg, "assist")

    session = store.session(session_id)
    assert session.run_id is None and session.user_kind == "assist"
    assert session.feedback == "CF,EF:partial,VF:expert"
    assert store.session_config(session_id) == cfg
    store.save_turn(session_id, turn(0), "running")
    assert store.load_turns(session_id) == [turn(0)]
    assert run_outcomes(store) == []  # not part of any benchmark run


def test_a_run_session_runs_the_run_config_with_its_own_feedback(store: Store) -> None:
    cfg = config()
    run_id = store.create_run("live", cfg, "ids=0", TASKS[:1], omegas("CF,VF:novice"))
    session_id = store.pending_sessions(run_id)[0].id

    assert store.session_config(session_id) == replace(
        cfg, feedback=FeedbackConfig("none", "novice")
    )
