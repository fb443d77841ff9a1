"""Readers beside a writer, and a writer killed with SIGKILL at random moments: the file
stays sound, holds only whole turns, and a re-run ends where an uninterrupted run ends."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from store_values import config, turn
from store_writer import expected_turn
from support.omegas import omegas
from support.threads import run_together

from convtui.sessions import Store
from convtui.sessions.reading.results import run_outcomes

WRITER = Path(__file__).resolve().parent / "store_writer.py"
TASKS = [f"BigCodeBench/{i}" for i in range(30)]
LABELS = omegas("CF", "CF,EF:full")


def assert_consistent(path: Path) -> int:
    """The invariants a kill must not break; returns the number of turns recorded."""
    with Store.open(path) as store:
        db = store.db
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
        total = 0
        for session in db.query("SELECT * FROM sessions"):
            turns = list(
                db.query(
                    "SELECT idx, passed FROM turns WHERE session_id = ? ORDER BY idx",
                    [session["id"]],
                )
            )
            total += len(turns)
            assert [t["idx"] for t in turns] == list(range(session["turns_done"]))
            passing = [t["idx"] for t in turns if t["passed"]]
            assert session["first_pass_turn"] == (passing[0] if passing else None)
            if passing:
                assert session["status"] == "solved"
        # Every execution holds all of its tests.
        assert not list(
            db.query(
                "SELECT e.id FROM executions e LEFT JOIN execution_tests t "
                "ON t.execution_id = e.id GROUP BY e.id HAVING count(t.position) != e.tests_total"
            )
        )
        # A finished call is never paid for twice: reuse shows up as cache hits.
        assert not list(
            db.query(
                "SELECT session_id, turn_idx, purpose FROM model_calls "
                "WHERE status = 'ok' AND cache_hit = 0 GROUP BY 1, 2, 3 HAVING count(*) > 1"
            )
        )
        return total


def new_run(path: Path) -> str:
    with Store.open(path) as store:
        return store.create_run("live", config(max_turns=5), "ids=0-29", TASKS, LABELS)


def run_writer(path: Path, run_id: str, kill_after_s: float | None) -> tuple[int, float]:
    """Run the writer, SIGKILLed ``kill_after_s`` after it opened the store: its exit code
    and how long it ran after opening."""
    child = subprocess.Popen(
        [sys.executable, str(WRITER), str(path), run_id],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    child.stdout.readline()  # "ready": the store is open
    ready = time.monotonic()
    if kill_after_s is not None:
        time.sleep(kill_after_s)
        child.send_signal(signal.SIGKILL)
    _, err = child.communicate(timeout=120)
    assert child.returncode in (0, -signal.SIGKILL), err
    return child.returncode, time.monotonic() - ready


def outcome_table(path: Path) -> list[tuple]:
    with Store.open(path) as store:
        return sorted(
            (o.task_id, o.feedback, o.status, o.first_pass_turn, o.turns_done)
            for o in run_outcomes(store)
        )


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_a_writer_killed_at_random_points_leaves_only_whole_turns(tmp_path: Path) -> None:
    reference = tmp_path / "clean.db"
    code, took = run_writer(reference, new_run(reference), None)
    assert code == 0
    # Kill after a random share of a whole run's time: eight kills then cover most of it.
    window = took / 4
    rng = random.Random(1234)
    path = tmp_path / "killed.db"
    run_id = new_run(path)
    progress = []
    for _ in range(8):
        if run_writer(path, run_id, rng.uniform(0.0, window))[0] == 0:
            break
        progress.append(assert_consistent(path))
    run_writer(path, run_id, None)  # the same command again, uninterrupted
    total = assert_consistent(path)

    assert any(0 < done < total for done in progress), progress  # some kills hit mid-run
    assert outcome_table(path) == outcome_table(reference)
    with Store.open(path) as store:
        assert store.run(run_id).status == "done"
        assert not store.db.execute("SELECT 1 FROM model_calls WHERE status = 'started'").fetchall()
        for session in store.run_sessions(run_id):
            for loaded in store.load_turns(session.id):
                # A reply finished before a kill is reused after it: the same, marked cached.
                assert loaded.generate_call is not None
                fresh = replace(loaded.generate_call, cached=False)
                assert replace(loaded, generate_call=fresh) == expected_turn(session, loaded.idx)


def test_readers_see_whole_turns_while_another_thread_writes(tmp_path: Path) -> None:
    with Store.open(tmp_path / "results.db") as store:
        run_id = store.create_run("live", config(max_turns=6), "ids", TASKS[:10])
        sessions = store.pending_sessions(run_id)
        written = threading.Event()
        # The writer waits for a read between sessions, so reads interleave with writes even
        # when a busy machine schedules the writer thread through all sixty turns at once.
        read_done = threading.Event()
        failures: list[BaseException] = []
        reads = 0

        def write() -> None:
            try:
                for session in sessions:
                    read_done.clear()
                    for idx in range(6):
                        last = idx == 5
                        store.save_turn(session.id, turn(idx), "exhausted" if last else "running")
                    read_done.wait(timeout=10)
            except BaseException as exc:  # reported by the assertion below
                failures.append(exc)
            finally:
                written.set()

        def read() -> None:
            nonlocal reads
            try:
                while not written.is_set():
                    with store.reading() as db:
                        counts = db.execute(
                            "SELECT s.turns_done, (SELECT count(*) FROM turns t "
                            "WHERE t.session_id = s.id) FROM sessions s"
                        ).fetchall()
                    assert all(done == rows for done, rows in counts)
                    for session in sessions[:2]:
                        loaded = store.load_turns(session.id)
                        assert loaded == [turn(i) for i in range(len(loaded))]
                    reads += 1
                    read_done.set()
            except BaseException as exc:  # reported by the assertion below
                failures.append(exc)

        run_together(write, read)

        assert failures == []
        assert reads > 1
        assert {o.turns_done for o in run_outcomes(store, [run_id])} == {6}
