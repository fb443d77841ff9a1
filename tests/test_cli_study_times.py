"""A person's time per turn in a study: ``study report`` gives each annotator's median
seconds from shown to sent and typing, with the turns measured (text and ``--json``), and
``study export`` a row's times in the Parquet columns its card describes. A real SQLite study
whose sessions are recorded through the store (hand-built turns, no model, no sandbox)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from support.cli import invoke
from support.studies import study_spec, write_study

from convtui.benchmarks.commands.study.study_report_views import TIMES_NOTE, TURNS_NOTE
from convtui.core.execution.types import ExecResult
from convtui.core.turns.record import Turn
from convtui.sessions import Store
from convtui.sessions.database.human_times import HumanTurnTimes
from convtui.sessions.studies.study_rows import load_study, start_assignment

TASKS = ("BigCodeBench/0", "BigCodeBench/1")


def said(idx: int) -> Turn:
    """A failing turn a person gave feedback on."""
    return Turn(
        idx=idx,
        reply=f"```python\ndef task_func():\n    return {idx}\n```",
        code=f"def task_func():\n    return {idx}\n",
        compiled=True,
        compile_feedback="No compilation errors",
        execution=ExecResult("fail", (), 0.5, isolation="landlock", detail="it fails"),
        execution_feedback="test_x failed",
        verbal_feedback=f"Fix turn {idx}.",
        feedback_source="human",
    )


def times(shown_to_sent: float, typing: float, keys: int) -> HumanTurnTimes:
    return HumanTurnTimes(
        sent_utc="2026-05-09T07:01:00.000000Z",
        shown_utc="2026-05-09T07:00:00.000000Z",
        first_key_utc="2026-05-09T07:00:05.500000Z" if keys else None,
        shown_to_sent_s=shown_to_sent,
        typing_s=typing,
        keystrokes=keys,
    )


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """ana: task 0 two turns (30 s with 2 s typing, 10 s without typing) then given up; task 1
    one turn shown before she reopened the session (unknown) then given up. ben: task 0 one
    turn, 50 s with 8 s typing, given up; task 1 one turn recorded without times (as before
    they were recorded), given up."""
    db = tmp_path_factory.mktemp("study") / "study.db"
    write_study(db, study_spec(tasks=TASKS, annotators=("ana", "ben"), overlap=2, turns=3))
    with Store.open(db) as store:
        study = load_study(store)

        def session(task: str, who: str, answered: list[HumanTurnTimes | None]) -> None:
            sid = start_assignment(store, study.id, task, who, study.config, "human")
            store.set_session_status(sid, "running")
            for idx, measured in enumerate(answered):
                store.save_turn(sid, said(idx), "running", f"{sid}-{idx}", measured)
            store.set_session_status(sid, "abandoned")

        session(TASKS[0], "ana", [times(30.0, 2.0, 12), times(10.0, 0.0, 0)])
        session(TASKS[1], "ana", [HumanTurnTimes("2026-05-09T08:00:00.000000Z", resumed=True)])
        session(TASKS[0], "ben", [times(50.0, 8.0, 40)])
        session(TASKS[1], "ben", [None])
    return db


def test_the_report_gives_each_annotators_median_time_per_turn(study: Path) -> None:
    as_json = invoke("study", "report", "--db", str(study), "--json")
    as_text = invoke("study", "report", "--db", str(study))

    assert as_json.returncode == 0 and as_text.returncode == 0, as_json.stderr + as_text.stderr
    assert json.loads(as_json.stdout)["time_per_turn"] == {
        "ana": {
            "turns": 3,
            "measured": 2,
            "median_shown_to_sent_s": 20.0,
            "median_typing_s": 1.0,
        },
        "ben": {"turns": 1, "measured": 1, "median_shown_to_sent_s": 50.0, "median_typing_s": 8.0},
    }
    lines = [" ".join(line.replace("│", " ").split()) for line in as_text.stdout.splitlines()]
    assert "Time per turn (median seconds)" in as_text.stdout
    assert any(line.startswith("ana 2 of 3 20.0 1.0") for line in lines), as_text.stdout
    assert any(line.startswith("ben 1 50.0 8.0") for line in lines), as_text.stdout


def test_the_tables_notes_are_paragraphs_from_the_left_edge_not_centred_captions(
    study: Path,
) -> None:
    """A rich caption is centred and no wider than its table: the notes stood as narrow
    blocks of broken lines. Each is now one line from column 0 (the terminal wraps it)."""
    shown = invoke("study", "report", "--db", str(study))
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    scored = "The annotators' own sessions with the study's model, scored live: MRR the mean of"
    for note in (TIMES_NOTE, TURNS_NOTE):
        assert note in lines, shown.stdout
    assert any(
        line.startswith(scored) and line.endswith("too few tasks for one.") for line in lines
    )


def test_the_export_carries_each_turns_times_and_its_card_says_what_they_are(
    study: Path, tmp_path: Path
) -> None:
    out = tmp_path / "pilot"
    done = invoke("study", "export", "--db", str(study), "--out", str(out))
    assert done.returncode == 0, done.stderr

    rows = pq.read_table(out / "data/transcripts.parquet").to_pylist()
    got = {
        (r["annotator"], r["task_id"], r["turn"]): (
            r["shown_to_sent_s"],
            r["typing_s"],
            r["keystrokes"],
            None if r["shown_utc"] is None else r["shown_utc"].isoformat(),
            None if r["first_key_utc"] is None else r["first_key_utc"].isoformat(),
            None if r["sent_utc"] is None else r["sent_utc"].isoformat(),
        )
        for r in rows
    }
    assert got == {
        ("ana", TASKS[0], 0): (
            30.0,
            2.0,
            12,
            "2026-05-09T07:00:00+00:00",
            "2026-05-09T07:00:05.500000+00:00",
            "2026-05-09T07:01:00+00:00",
        ),
        ("ana", TASKS[0], 1): (
            10.0,
            0.0,
            0,
            "2026-05-09T07:00:00+00:00",
            None,
            "2026-05-09T07:01:00+00:00",
        ),
        ("ana", TASKS[1], 0): (None, None, None, None, None, "2026-05-09T08:00:00+00:00"),
        ("ben", TASKS[0], 0): (
            50.0,
            8.0,
            40,
            "2026-05-09T07:00:00+00:00",
            "2026-05-09T07:00:05.500000+00:00",
            "2026-05-09T07:01:00+00:00",
        ),
        ("ben", TASKS[1], 0): (None, None, None, None, None, None),
    }
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "| `shown_to_sent_s` | float64 | Seconds from `shown_utc` to `sent_utc`" in card
    assert "| `typing_s` | float64 | Seconds spent typing" in card
    assert "a gap over 5 s counted as thinking" in card
