"""`convtui bench live --model A,B` on two real llama.cpp servers of the embedded SmolLM2, one of
them SIGKILLed while it answers: the run completes, every call is recorded once and names
the server that answered, and the run's results equal the run on one server (conftest's
``server_run_db``, on the server that here survives).

Why the results may be compared turn for turn, code included: both servers load the same
GGUF file with the same llama.cpp build and context size, and the harness asks for greedy
decoding (temperature 0, seed 0), so a request gets the same text from either. Nothing here
says what that text is; what the model writes is only compared with itself. Executions
depend only on the code, so equal code gives equal verdicts."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from support.cli import convtui_argv, env, invoke
from support.data import needs_bigcodebench
from support.live import (
    EMBEDDED_N_CTX,
    EMBEDDED_RUN,
    assert_intact_and_no_call_paid_twice,
    calls_started,
    tables,
)
from support.sqlite_rows import fetchall

pytestmark = [pytest.mark.slow, needs_bigcodebench]


def outcomes(db: Path) -> dict[tuple[str, str, int], tuple]:
    """(task, Ω, turn) -> its code, whether it passed, and its execution's verdict."""
    found = fetchall(
        db,
        "SELECT s.task_id, s.feedback, t.idx, t.code, t.passed, e.status, e.tests_passed, "
        "e.tests_total, t.execution_feedback FROM turn_texts t "
        "JOIN sessions s ON s.id = t.session_id JOIN turns u "
        "ON u.session_id = t.session_id AND u.idx = t.idx "
        "LEFT JOIN executions e ON e.id = u.execution_id",
    )
    return {(task, fb, idx): tuple(rest) for task, fb, idx, *rest in found}


def sessions(db: Path) -> list[tuple]:
    return fetchall(
        db,
        "SELECT task_id, feedback, status, turns_done, first_pass_turn FROM sessions "
        "ORDER BY task_id, feedback",
    )


def unnamed(report: dict) -> dict:
    """The report's tables less the model's name (here a list of servers, there one)."""
    columns = [{k: v for k, v in column.items() if k != "model"} for column in report["columns"]]
    return {**report, "columns": columns}


def test_a_replica_killed_during_bench_live_leaves_a_complete_run_equal_to_one_servers(
    llama_server_url, server_run_db, smollm2_path, tmp_path
):
    from support.llama_server import llama_server

    survivor = llama_server_url
    with llama_server(smollm2_path, EMBEDDED_N_CTX, tmp_path) as doomed:
        db = tmp_path / "replicas.db"
        argv = [
            *convtui_argv("bench", "live", *EMBEDDED_RUN, "--db", str(db), "--json"),
            *("--model", f"{survivor},{doomed.url}"),
        ]
        run = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env())
        # Both sessions' first calls start at once, one on each server (the least loaded);
        # a server takes seconds over one, so the kill lands while it answers.
        deadline = time.monotonic() + 120
        while calls_started(db) < 2 and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        assert run.poll() is None, "the run ended before the kill; the test proved nothing"
        doomed.kill()
        out, err = run.communicate(timeout=300)
    assert run.returncode == 0, out.decode() + err.decode()
    answer = json.loads(out)
    assert (answer["sessions_played"], answer["failed"]) == (2, 0)

    paid = fetchall(
        db,
        "SELECT session_id, turn_idx, purpose, seq, status, endpoint FROM model_calls "
        "WHERE cache_hit = 0",
    )
    twice = fetchall(
        db,
        "SELECT session_id, turn_idx, purpose, seq FROM model_calls GROUP BY 1, 2, 3, 4 "
        "HAVING count(*) > 1",
    )
    attempts = fetchall(
        db,
        "SELECT m.id, a.number, a.status, a.endpoint, m.endpoint FROM call_attempts a "
        "JOIN model_calls m ON m.id = a.call_id ORDER BY m.id, a.number",
    )
    assert twice == []  # no call recorded twice
    assert_intact_and_no_call_paid_twice(db)
    assert {status for *_, status, _ in paid} == {"ok"}
    assert {endpoint for *_, endpoint in paid} <= {survivor, doomed.url}
    assert all(endpoint is not None for *_, endpoint in paid)
    # The kill cut a call short on the doomed server; that call went on to the survivor.
    failed_over = {
        call for call, _, status, at, answered in attempts
        if status == "transient" and at == doomed.url and answered == survivor
    }  # fmt: skip
    assert failed_over, attempts
    assert all(at is not None for *_, at, _ in attempts)
    # The results are the one server's: every turn's code and verdict, every session's end.
    assert sessions(db) == sessions(server_run_db)
    assert outcomes(db) == outcomes(server_run_db)
    assert unnamed(tables(db)) == unnamed(tables(server_run_db))

    [(session_id,)] = fetchall(
        db, "SELECT session_id FROM model_calls WHERE id = ?", (min(failed_over),)
    )
    shown = invoke("sessions", "show", session_id, "--db", str(db))
    assert shown.returncode == 0, shown.stderr
    assert "endpoints" in shown.stdout and survivor in shown.stdout
