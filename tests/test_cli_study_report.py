"""`convtui study report` on a study whose outcomes are known: each annotator's session of
each task played by the real turn loop and sandbox with scripted replies that pass first at
a chosen turn (support/study_play.py), an expert simulated user recorded by `bench live`
into the same database, and a target model replayed against both. Every score and alpha
below is computed by hand in the docstrings.

The study: tasks 5, 2, 4, 8; ana, ben and cy, each task to two of them; turns 0-2 (budget
3). Who passes first at which turn (- never, . not played):

    task   4    5    2    8
    ana    0    0         -
    ben         -    .
    cy     1         2    -

The expert simulator's code passes task 4 at turn 1 and nothing else."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.cli import assert_one_line_error, invoke
from support.data import needs_bigcodebench
from support.scripted import script
from support.sqlite_rows import fetchall
from support.studies import study_spec, write_study
from support.study_play import FAILS, play_assignment, solving_at

pytestmark = needs_bigcodebench

TASKS = ("BigCodeBench/5", "BigCodeBench/2", "BigCodeBench/4", "BigCodeBench/8")
FIRST_PASS = {
    ("ana", "BigCodeBench/4"): 0,
    ("ana", "BigCodeBench/5"): 0,
    ("ana", "BigCodeBench/8"): None,
    ("ben", "BigCodeBench/5"): None,
    ("cy", "BigCodeBench/4"): 1,
    ("cy", "BigCodeBench/2"): 2,
    ("cy", "BigCodeBench/8"): None,
}
EXPERT = "CF,EF:full,VF:expert"


@pytest.fixture(scope="module")
def study(tmp_path_factory, executor, bigcodebench) -> Path:
    folder = tmp_path_factory.mktemp("study")
    db = folder / "study.db"
    spec = study_spec(
        tasks=TASKS,
        model=script(folder / "study-model.jsonl", [FAILS]),
        annotators=("ana", "ben", "cy"),
        seed=0,
    )
    write_study(db, spec)
    for (annotator, task_id), turn in FIRST_PASS.items():
        task = bigcodebench.get(task_id)
        play_assignment(db, executor, task, annotator, solving_at(task, turn), folder)
    four = bigcodebench.get("BigCodeBench/4")
    simulator = script(folder / "expert.jsonl", solving_at(four, 1), ["Expert: check the keys."])
    recorded = invoke(
        "bench", "live", "--model", simulator, "--feedback", EXPERT, "--protocol", "convtui",
        "--turns", "2", "--ids", "2,4,5,8", "--db", str(db), "--json",
    )  # fmt: skip
    assert recorded.returncode == 0, recorded.stderr
    return db


def report(db: Path, *extra: str) -> dict:
    done = invoke("study", "report", "--db", str(db), "--json", *extra)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def table(scoring: dict) -> dict[str, tuple]:
    """annotator -> (tasks, MRR, Recall, the simulated set's (tasks, MRR, Recall))."""
    rows = [*scoring["annotators"], scoring["all"]]
    return {
        r["annotator"]: (
            r["tasks"],
            r["mrr"],
            r["recall"],
            *[(s["tasks"], s["mrr"], s["recall"]) for s in r["simulated"]],
        )
        for r in rows
    }


def test_own_scores_simulated_scores_and_agreement_are_the_hand_computed_ones(study):
    """Own sessions, live MRR (1/(k+1)) and Recall: ana 4, 5, 8 -> (1 + 1 + 0)/3 = 66.7,
    2/3; ben 5 -> 0, 0; cy 4, 2, 8 -> (1/2 + 1/3)/3 = 27.8, 2/3; all seven: (2 + 5/6)/7 =
    40.5, 4/7 = 57.1. The expert on the same tasks (4 at turn 1: 1/2): ana's 16.7, 33.3;
    ben's 0, 0; cy's 16.7, 33.3; all seven (4 counted twice) 1/7 = 14.3, 2/7 = 28.6.

    Agreement over 4, 5 and 8 (2 is cy's alone): solved (1,1), (1,0), (0,0): nominal alpha
    1 - 5·2/(2·3·3) = 4/9; turns (1,2), (1,4), (4,4), unsolved = 4: interval alpha 9/34
    (worked out in tests/core/test_study_agreement.py)."""
    data = report(study)
    assert set(data) == {
        "study", "db", "progress", "scores", "simulated_logs", "record_simulated", "agreement",
        "time_per_turn",
    }  # fmt: skip
    # Sessions recorded through the store without a person's times (tests/test_cli_study_times.py
    # has some): none measured.
    assert data["time_per_turn"]["ana"] == {
        "turns": 0, "measured": 0, "median_shown_to_sent_s": None, "median_typing_s": None,
    }  # fmt: skip
    progress = data["progress"]
    assert (progress["done"], progress["assignments"]) == (7, 8)
    assert [
        (a["name"], a["assigned"], a["done"], a["pending"]) for a in progress["annotators"]
    ] == [
        ("ana", 3, 3, 0),
        ("ben", 2, 1, 1),
        ("cy", 3, 3, 0),
    ]
    (own,) = data["scores"]
    assert (own["replayed"], own["runs"], own["failed_sessions"]) == (False, [], 0)
    assert own["model"].startswith("mock:") and own["model"].endswith("study-model.jsonl")
    assert table(own) == {
        "ana": (3, 66.7, 66.7, (3, 16.7, 33.3)),
        "ben": (1, 0.0, 0.0, (1, 0.0, 0.0)),
        "cy": (3, 27.8, 66.7, (3, 16.7, 33.3)),
        "all annotators": (7, 40.5, 57.1, (7, 14.3, 28.6)),
    }
    (simulated,) = own["simulated"]
    assert (simulated["user"], simulated["feedback"]) == ("expert", EXPERT)
    assert data["simulated_logs"] == [simulated["log_set"]] and data["record_simulated"] is None
    agreement = data["agreement"]
    assert agreement["tasks"] == ["BigCodeBench/4", "BigCodeBench/5", "BigCodeBench/8"]
    assert (agreement["annotators"], agreement["overlapped_tasks"], agreement["pairs"]) == (3, 3, 3)
    assert agreement["agreed_on_solved"] == 66.7
    assert agreement["solved"] == {"level": "nominal", "alpha": round(4 / 9, 4), "reason": None}
    turns = agreement["turns_to_solve"]
    assert (turns["level"], turns["alpha"], turns["unsolved_counts_as"]) == (
        "interval",
        round(9 / 34, 4),
        [4],
    )


def test_each_annotator_against_the_simulated_user_is_paired_over_tasks_with_holm(study):
    """Reciprocal ranks (own sessions) and the expert's on the same tasks (4 at turn 1: 1/2): ana 4,
    5, 8: 1, 1, 0 against 1/2, 0, 0: differences 1/2, 1, 0, mean 1/2 = 50.0 points; the exact
    sign-flip test over the two that differ: |±1/2 ± 1| reaches 3/2 in 2 of 4 patterns, p = 0.5;
    d_z = 1/2 over sd 1/2 = 1. Recall 1, 1, 0 against 1, 0, 0: task 5 alone, McNemar p = 1.
    ben's task 5: 0 against 0, p = 1. cy 4, 2, 8: 1/2, 1/3, 0 against 1/2, 0, 0: one differs, p
    = 1. Holm over the three: ana's 3 x 0.5, capped at 1.

    All annotators pooled, clustered by task: task 4 (ana 1/2, cy 0) mean 1/4, task 5 (ana 1,
    ben 0) 1/2, task 2 (cy) 1/3, task 8 0; over the 7 pairs (1/2 + 1 + 1/3)/7 = 11/42 = 26.2
    points; the three tasks that differ are all better: p = 2/8. Recall: tasks 5 (1/2) and 2 (1)
    better; task 5 holds two pairs (no McNemar), so the exact sign-flip test of the task means:
    |±1/2 ± 1| reaches 3/2 in 2 of 4, p = 2/4. Three or four tasks are too few for an interval:
    each says so."""
    (own,) = report(study)["scores"]
    assert own["bootstrap"]["unit"] == "tasks"
    assert (
        own["bootstrap"]["text"] == "95% percentile bootstrap over tasks (2000 resamples, seed 0)"
    )
    ana, ben, cy = own["annotators"]
    [against] = ana["versus"]
    assert against["mrr"]["difference"]["value"] == 50.0
    assert (against["mrr"]["p_value"], against["mrr"]["effect_size"]) == (0.5, 1.0)
    assert against["mrr"]["first_better"] == ["BigCodeBench/4", "BigCodeBench/5"]
    assert (against["recall"]["p_value"], against["recall"]["first_better"]) == (
        1.0,
        ["BigCodeBench/5"],
    )
    assert against["recall"]["test"].startswith("McNemar exact")
    assert (against["holm_mrr"], against["holm_recall"]) == (1.0, 1.0)
    assert [ben["versus"][0]["mrr"]["p_value"], cy["versus"][0]["mrr"]["p_value"]] == [1.0, 1.0]
    assert cy["versus"][0]["mrr"]["difference"]["value"] == round(100 / 9, 1)
    assert ana["intervals"]["mrr"]["value"] == 66.7
    assert ana["intervals"]["mrr"]["reason"] == "3 tasks are too few for an interval (at least 10)"
    pooled = own["all"]["versus"][0]
    assert (pooled["mrr"]["units"], pooled["mrr"]["pairs"]) == (4, 7)
    assert pooled["mrr"]["difference"]["value"] == round(100 * 11 / 42, 1)
    assert pooled["mrr"]["p_value"] == 0.25
    assert pooled["mrr"]["first_better"] == ["BigCodeBench/2", "BigCodeBench/4", "BigCodeBench/5"]
    assert (pooled["recall"]["p_value"], pooled["recall"]["test"]) == (
        0.5,
        "sign-flip permutation test over tasks (exact)",
    )
    assert own["all"]["intervals"]["recall"]["units"] == 4
    shown = invoke("study", "report", "--db", str(study))
    assert "Each annotator against expert simulated by" in shown.stdout
    assert "bootstrap over tasks" in shown.stdout and "0.500 (1.000)" in shown.stdout


def static_runs(db: Path) -> list[tuple]:
    return fetchall(
        db,
        "SELECT r.id, count(s.id), (SELECT count(*) FROM model_calls) FROM runs r "
        "JOIN sessions s ON s.run_id = r.id WHERE r.kind = 'static' GROUP BY r.id",
    )


def test_replayed_against_a_target_the_static_scores_are_the_hand_computed_ones(study, tmp_path):
    """The target always fails on its own; where the reference passed at turn t-1 it is
    handed that code (ConvCodeBench's static MRR, compensate_init): a reference pass at
    turn 0 scores 1, at turn k >= 1 scores 1/(k+1) (handed at turn k+1), except at the last
    turn (nothing is handed after it). ana: 4 and 5 at 0 -> 1, 1; 8 -> 0: 66.7, 66.7. ben:
    0, 0. cy: 4 at 1 -> 1/2; 2 at 2 (the last) -> 0; 8 -> 0: 16.7, 33.3. All: 2.5/7 = 35.7,
    3/7 = 42.9. The expert's 4 at 1 -> 1/2: ana's and cy's tasks 16.7, 33.3; ben's 0;
    all 1/7 = 14.3, 2/7 = 28.6.

    The replays are runs in the study database: the same report again plays nothing."""
    db = tmp_path / "study.db"
    shutil.copy(study, db)
    target = script(tmp_path / "target.jsonl", [FAILS])
    data = report(db, "--target", target)
    own, replayed = data["scores"]
    assert own == report(study)["scores"][0]  # the study's own scores stay as they were
    assert (replayed["model"], replayed["replayed"], replayed["failed_sessions"]) == (
        target,
        True,
        0,
    )
    assert table(replayed) == {
        "ana": (3, 66.7, 66.7, (3, 16.7, 33.3)),
        "ben": (1, 0.0, 0.0, (1, 0.0, 0.0)),
        "cy": (3, 16.7, 33.3, (3, 16.7, 33.3)),
        "all annotators": (7, 35.7, 42.9, (7, 14.3, 28.6)),
    }
    runs = static_runs(db)
    # One run per log set: ana's, ben's and cy's sessions, and the expert's four.
    assert sorted(n for _id, n, _calls in runs) == [1, 3, 3, 4]
    assert sorted(replayed["runs"]) == sorted(r[0] for r in runs)

    again = report(db, "--target", target)
    assert again == data
    assert static_runs(db) == runs  # no run, session or model call added


def test_the_tables_say_what_was_scored_and_the_figures_are_written(study, tmp_path):
    shown = invoke("study", "report", "--db", str(study), "--plot", str(tmp_path / "fig"))
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert "7/8 assignments done" in out and "per annotator" in out
    assert "MRR and Recall (%)" in out and "all annotators" in out and "66.7" in out
    assert "expert simulated by" in out and "16.7 / 33.3 (3)" in out
    assert "3 overlapped tasks (finished by two or more annotators), 3 pairs of sessions" in out
    assert "0.444" in out and "0.265" in out and "unsolved = 4" in out
    names = ["study-scores.png", "study-scores.svg", "study-solved.png", "study-solved.svg"]
    assert sorted(p.name for p in (tmp_path / "fig").iterdir()) == names
    assert (tmp_path / "fig" / "study-scores.png").read_bytes()[:4] == b"\x89PNG"
    assert all(str(tmp_path / "fig" / name) in out.replace("\n", "") for name in names)
    as_json = report(study, "--plot", str(tmp_path / "fig2"))
    assert [Path(p).name for p in as_json["plots"]] == names


def test_a_study_with_nothing_done_says_so_and_how_to_record_simulated_users(tmp_path):
    db = tmp_path / "pilot.db"
    write_study(db, study_spec())
    data = report(db)
    assert (data["progress"]["done"], data["progress"]["assignments"]) == (0, 12)
    rows = data["scores"][0]["annotators"]
    assert [(r["annotator"], r["tasks"], r["mrr"]) for r in rows] == [
        ("ana", 0, None),
        ("ben", 0, None),
        ("cy", 0, None),
    ]
    assert data["simulated_logs"] == []
    command = data["record_simulated"]
    assert command.startswith("convtui bench live --model mock:replies.jsonl --protocol convtui")
    assert "--feedback CF,EF:full,VF:expert --turns 2" in command
    ids = command.split("--ids ", 1)[1].split()[0]
    assert sorted(ids.split(","), key=int) == ["2", "3", "8", "13", "16", "19"]
    assert command.endswith(f"--db {db}")
    for measure in ("solved", "turns_to_solve"):
        assert data["agreement"][measure]["alpha"] is None
        assert "no task was finished by two" in data["agreement"][measure]["reason"]
    shown = invoke("study", "report", "--db", str(db), "--target", "mock:unused.jsonl")
    assert shown.returncode == 0, shown.stderr
    assert "no simulated logs for the study's tasks" in shown.stdout
    assert "convtui bench live" in shown.stdout and "undefined" in shown.stdout


def test_a_bad_database_is_one_line_and_exit_2(tmp_path):
    missing = invoke("study", "report", "--db", str(tmp_path / "nope.db"))
    assert_one_line_error(missing, "no study database at", "convtui study init")
    assert not (tmp_path / "nope.db").exists()
    notes = tmp_path / "notes.db"
    notes.write_text("not a database\n")
    assert_one_line_error(invoke("study", "report", "--db", str(notes)), "not a SQLite database")
    plain = tmp_path / "plain.db"
    from convtui.sessions import Store

    with Store.open(plain):
        pass
    assert_one_line_error(invoke("study", "report", "--db", str(plain), "--json"), "holds no study")


def test_the_bootstrap_is_set_by_seed_and_resamples_and_named(study):
    """study report draws its intervals as --seed and --resamples say, and says so; the same
    seed gives the same bytes."""
    first = report(study, "--seed", "5", "--resamples", "300")
    (own,) = first["scores"]
    assert own["bootstrap"]["text"] == "95% percentile bootstrap over tasks (300 resamples, seed 5)"
    assert (own["bootstrap"]["seed"], own["bootstrap"]["resamples"]) == (5, 300)
    assert report(study, "--seed", "5", "--resamples", "300") == first
    assert_one_line_error(invoke("study", "report", "--db", str(study), "--seed", "-1"), "--seed")
