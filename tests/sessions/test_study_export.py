"""``convtui study export --format parquet``: a study's turns as one Parquet row each, with a
dataset card that ``datasets.load_dataset(folder)`` reads. A real SQLite study whose
sessions are recorded through the store (hand-built turns, no model and no sandbox)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from store_values import turn
from support.cli import assert_one_line_error, invoke
from support.studies import study_spec, write_study

from convtui.sessions import Store
from convtui.sessions.studies.study_rows import load_study, start_assignment

TASKS = ("BigCodeBench/0", "BigCodeBench/1")
PARQUET = "data/transcripts.parquet"


def record_study(db: Path) -> dict[str, list[str]]:
    """Two tasks, each to both ana and ben, under assisted expert feedback. ana solves task
    0 at turn 1 after feedback she rewrote, and leaves task 1 open after one turn whose
    simulated draft she sent as it was; ben gives task 0 up after one turn and has not
    started task 1. Returns each session's annotator, task and status by id."""
    spec = study_spec(tasks=TASKS, annotators=("ana", "ben"), overlap=2, user="assist:expert")
    write_study(db, spec)
    sessions: dict[str, list[str]] = {}
    with Store.open(db) as store:
        study = load_study(store)

        def start(task: str, annotator: str) -> str:
            sid = start_assignment(store, study.id, task, annotator, study.config, "assist")
            store.set_session_status(sid, "running")
            return sid

        rewritten = replace(
            turn(0),
            verbal_feedback="Sort the list before summing it.",
            feedback_source="human",
            feedback_draft="Check the sum in turn 0.",
        )
        ana0 = start(TASKS[0], "ana")
        store.save_turn(ana0, rewritten, "running", "ana0-0")
        store.save_turn(ana0, turn(1, passed=True), "solved", "ana0-1")
        ana1 = start(TASKS[1], "ana")
        drafted = replace(turn(0), feedback_draft="Check the sum in turn 0.")
        store.save_turn(ana1, drafted, "running", "ana1-0")
        ben0 = start(TASKS[0], "ben")
        store.save_turn(ben0, turn(0), "running", "ben0-0")
        store.set_session_status(ben0, "abandoned")
    sessions[ana0] = ["ana", TASKS[0], "solved"]
    sessions[ana1] = ["ana", TASKS[1], "running"]
    sessions[ben0] = ["ben", TASKS[0], "abandoned"]
    return sessions


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[str]]]:
    db = tmp_path_factory.mktemp("study") / "study.db"
    return db, record_study(db)


def export(db: Path, out: Path, *extra: str) -> dict:
    done = invoke("study", "export", "--db", str(db), "--out", str(out), "--json", *extra)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_export_loads_with_datasets_one_row_per_recorded_turn(
    study: tuple[Path, dict[str, list[str]]], tmp_path: Path, offline_hub: Path
) -> None:
    import datasets

    db, sessions = study
    out = tmp_path / "pilot"

    summary = export(db, out)

    assert summary["rows"] == 4 and summary["sessions"] == 3
    assert summary["unfinished_sessions"] == 1
    assert summary["files"] == [str(out / PARQUET), str(out / "README.md")]
    by_file = datasets.load_dataset(
        "parquet", data_files=str(out / PARQUET), split="train", cache_dir=str(offline_hub)
    )
    by_card = datasets.load_dataset(str(out), split="train", cache_dir=str(offline_hub))
    assert by_card.features == by_file.features
    assert by_card.to_list() == by_file.to_list()
    rows = by_file.to_list()
    assert sorted((r["session_id"], r["turn"]) for r in rows) == sorted(
        (sid, idx) for sid in sessions for idx in range(2 if sessions[sid][2] == "solved" else 1)
    )
    assert {r["session_id"]: [r["annotator"], r["task_id"], r["session_status"]] for r in rows} == (
        sessions
    )
    first = {tuple(sessions[r["session_id"]]): r for r in rows if r["turn"] == 0}
    ana_solved = first[("ana", TASKS[0], "solved")]
    ana_open = first[("ana", TASKS[1], "running")]
    ben_gave_up = first[("ben", TASKS[0], "abandoned")]
    assert [f["source"] for f in ana_solved["feedback"]] == [
        "compilation",
        "execution",
        "verbal-human",
    ]
    assert ana_solved["feedback"][2]["text"] == "Sort the list before summing it."
    assert (ana_solved["feedback_draft"], ana_solved["feedback_edited"]) == (
        "Check the sum in turn 0.",
        True,
    )
    assert ana_open["feedback"][2]["source"] == "verbal-simulated"
    assert ana_open["assignment_state"] == "started"
    assert ben_gave_up["assignment_state"] == "done"
    solved = next(r for r in rows if r["turn"] == 1)
    assert (solved["verdict"], solved["passed"], solved["tests_passed"]) == ("pass", True, 2)
    assert [f["source"] for f in solved["feedback"]] == ["compilation"]
    assert (ana_open["verdict"], ana_open["tests_passed"], ana_open["tests_total"]) == (
        "fail",
        1,
        2,
    )
    assert {(r["study"], r["omega"], r["protocol"], r["user_kind"]) for r in rows} == {
        ("pilot", "CF,EF:full,VF:expert", "convtui", "assist")
    }
    assert all(r["turn_created_utc"].tzinfo is not None for r in rows)


def test_the_card_says_what_the_study_was_and_that_open_sessions_are_in(
    study: tuple[Path, dict[str, list[str]]], tmp_path: Path
) -> None:
    db, _sessions = study
    out = tmp_path / "pilot"
    export(db, out)

    card = (out / "README.md").read_text(encoding="utf-8")

    front, prose = card.split("\n---\n", 1)
    assert front.startswith("---\n")
    assert f'path: "{PARQUET}"' in front
    assert "`CF,EF:full,VF:expert`" in prose and "`assist:expert`" in prose
    assert "4 rows from 3 sessions" in prose
    assert "1 session had not ended" in prose
    assert "| ana | 2 | 3 | 1 |" in prose and "| ben | 1 | 1 | 0 |" in prose
    assert "BigCodeBench" in prose and "CodeIF-Bench" in prose
    assert "| `feedback` |" in prose


def test_finished_only_leaves_open_sessions_out(
    study: tuple[Path, dict[str, list[str]]], tmp_path: Path
) -> None:
    db, sessions = study
    out = tmp_path / "done"

    summary = export(db, out, "--finished-only")

    table = pq.read_table(out / PARQUET).to_pylist()
    assert (summary["rows"], summary["sessions"], summary["unfinished_sessions"]) == (3, 2, 0)
    assert {r["session_id"] for r in table} == {s for s, v in sessions.items() if v[2] != "running"}
    assert "Only finished sessions" in (out / "README.md").read_text(encoding="utf-8")


def test_a_folder_with_something_in_it_needs_force(
    study: tuple[Path, dict[str, list[str]]], tmp_path: Path
) -> None:
    db, _sessions = study
    out = tmp_path / "pilot"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n")

    refused = invoke("study", "export", "--db", str(db), "--out", str(out))

    assert_one_line_error(refused, str(out), "--force")
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    export(db, out, "--force")
    export(db, out, "--force")
    assert pq.read_table(out / PARQUET).num_rows == 4
    assert (out / "notes.txt").read_text() == "mine\n"


@pytest.mark.parametrize("case", ["missing", "no study", "not sqlite", "out is a file"])
def test_bad_input_is_one_line(tmp_path: Path, case: str) -> None:
    db, out = tmp_path / "study.db", tmp_path / "out"
    if case == "no study":
        Store.open(db).close()
    elif case == "not sqlite":
        db.write_text("not a database\n")
    elif case == "out is a file":
        write_study(db, study_spec())
        out.write_text("a file\n")

    done = invoke("study", "export", "--db", str(db), "--out", str(out))

    words = {
        "missing": ["no study database", str(db)],
        "no study": ["holds no study", "study init"],
        "not sqlite": ["not a SQLite database"],
        "out is a file": [str(out), "folder"],
    }[case]
    assert_one_line_error(done, *words)
    assert not (out / PARQUET).exists()
    assert case != "missing" or not db.exists()
