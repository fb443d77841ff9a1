"""`convtui bench live --protocol convcodeworld` end to end: the feedback turns ConvCodeWorld
plays (core/ccw/turn.py) driven by the turn loop, through a real SQLite file and the real
sandbox. Scripted (``mock:FILE``): the replies are fixed, so the calls each turn makes are
known in advance; what those prompts say, byte for byte, is tested against the reference's
rules in tests/core/test_ccw_turn.py — here, that the loop sends exactly what that module
renders, with the purposes and positions the reference's turn has."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from support.ccw_live import BROKEN, FAILING, HINT, STILL_BROKEN
from support.ccw_live import fixed as _fixed
from support.cli import invoke
from support.data import needs_bigcodebench
from support.live import bench

from convtui.core.ccw.turn import TurnInputs, run_turn
from convtui.core.feedback.evaluate import FeedbackSettings, render_execution
from convtui.sessions import Store

pytestmark = needs_bigcodebench


def _script(path: Path, rows: list[tuple[str, str]]) -> str:
    path.write_text("".join(json.dumps({"purpose": p, "text": t}) + "\n" for p, t in rows))
    return f"mock:{path}"


def _calls(db: Path, feedback: str) -> list[tuple[int, int, str, str, str]]:
    """(turn, seq, purpose, kind, prompt) of every model call of the session, in order; a
    call whose identical request was answered before is a reuse row (as DSPy's cache answered
    the reference's repeated repair prompts)."""
    with sqlite3.connect(db) as conn:
        found = conn.execute(
            "SELECT m.turn_idx, m.seq, m.purpose, m.kind, m.messages_json FROM model_calls m "
            "JOIN sessions s ON s.id = m.session_id WHERE s.feedback = ? "
            "ORDER BY m.turn_idx, m.seq",
            (feedback,),
        ).fetchall()
        texts = dict(conn.execute("SELECT hash, text FROM blobs").fetchall())
    return [
        (turn, seq, purpose, kind, "".join(texts[h] for _, h in json.loads(refs)))
        for turn, seq, purpose, kind, refs in found
    ]


def _turn_code(db: Path, feedback: str, idx: int) -> str:
    with sqlite3.connect(db) as conn:
        (code,) = conn.execute(
            "SELECT b.text FROM turns t JOIN sessions s ON s.id = t.session_id "
            "JOIN blobs b ON b.hash = t.code_blob WHERE s.feedback = ? AND t.idx = ?",
            (feedback, idx),
        ).fetchone()
    return code


def test_code_that_stays_broken_gets_three_repair_calls_and_no_simulator(tmp_path):
    model = _script(
        tmp_path / "s.jsonl",
        [
            ("generate", FAILING),
            ("generate", BROKEN),
            ("repair", STILL_BROKEN),
            ("simulate", HINT),
        ],
    )
    db = tmp_path / "r.db"
    run = ["--ids", "2", "--turns", "2", "--feedback", "CF,EF:full,VF:expert"]
    done = bench(db, "--model", model, "--protocol", "convcodeworld", run=run)
    assert done.returncode == 0, done.stderr
    calls = _calls(db, "CF,EF:full,VF:expert")
    by_turn = [[(s, p, k) for t, s, p, k, _ in calls if t == idx] for idx in range(3)]
    # Turn 0: BigCodeBench's request (a chat call: the script declares no chat template, so
    # the mock plays a hosted chat model). Turn 1: the code compiles, the expert speaks first.
    assert by_turn[0] == [(0, "generate", "chat")]
    assert by_turn[1] == [(0, "simulate", "text"), (1, "generate", "text")]
    # pot.py forward: up to max_iters=3 code calls while the code does not compile; the hop
    # limit then ends the turn before the expert is asked.
    assert by_turn[2] == [(0, "repair", "text"), (1, "repair", "text"), (2, "repair", "text")]


def test_the_expert_reviews_the_repaired_code_and_the_loop_sends_what_the_turn_renders(
    tmp_path,
    bigcodebench,
):
    task = bigcodebench.get("BigCodeBench/2")
    fixed = _fixed(task.ground_truth.split("def task_func", 1)[1].join(["def task_func", ""]))
    model = _script(
        tmp_path / "s.jsonl",
        [
            ("generate", FAILING),
            ("generate", BROKEN),
            ("repair", fixed),
            ("simulate", HINT),
            ("generate", fixed),
        ],
    )
    db = tmp_path / "r.db"
    omega = "CF,EF:full,VF:expert"
    run = ["--ids", "2", "--turns", "2", "--feedback", omega]
    done = bench(db, "--model", model, "--protocol", "convcodeworld", run=run)
    assert done.returncode == 0, done.stderr
    calls = [c for c in _calls(db, omega) if c[0] == 2]
    assert [(seq, purpose) for _, seq, purpose, _, _ in calls] == [
        (0, "repair"),
        (1, "simulate"),
        (2, "generate"),
    ]
    simulator_prompt = calls[1][4]
    assert "Ground Truth Code:" in simulator_prompt
    assert "Compilation Feedback:" not in simulator_prompt  # the expert never sees CF
    assert "return {\n" not in simulator_prompt  # it reviews the repaired code
    # The same turn, played by ccw/turn.py alone on the same inputs and replies, renders
    # exactly the prompts the loop journaled.
    replies = iter([fixed, HINT, fixed])
    with sqlite3.connect(db) as conn:
        (session_id,) = conn.execute("SELECT id FROM sessions WHERE feedback = ?", (omega,))
    with Store.open(db) as store:
        previous = store.load_turns(session_id[0])[1]
    # The turn reads the previous code's execution feedback untrimmed, as BigCodeBench's
    # results file holds it; that code did not compile, and its run says so (the ALL entry).
    settings = FeedbackSettings("full", "ccw", source_lines=False, compile_compat="ccw")
    assert previous.execution is not None
    ef = render_execution(task, previous.execution, settings, trim=None)
    alone = run_turn(
        TurnInputs(
            prompt=task.prompt,
            previous_code=_turn_code(db, omega, 1),
            execution="full",
            execution_feedback=ef,
            user="expert",
            ground_truth=task.ground_truth,
            iteration=2,
            max_tokens=2048,
        ),
        lambda call: next(replies),
    )
    assert [r.call.prompt for r in alone.calls] == [prompt for *_, prompt in calls]
    # run.py writes the solution with the import header prefixed.
    assert _turn_code(db, omega, 2) == alone.solution(task.import_header)
    # `sessions show` lists the turn's calls in order and the feedback they were given.
    shown = invoke("sessions", "show", session_id[0], "--db", str(db))
    assert shown.returncode == 0, shown.stderr
    assert "model calls: 0:repair, 1:simulate, 2:generate" in shown.stdout
    assert "feedback this turn was given" in shown.stdout
    assert "protocol  convcodeworld" in shown.stdout
