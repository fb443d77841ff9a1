"""`convtui report` on static (replayed) runs: scores as ConvCodeBench's print_results, from a
real SQLite store whose verdicts are written by hand (no model, no executor), so every number
below is computed by hand from the verdict patterns."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from support.cli import invoke
from support.verdicts import config, play

from convtui.sessions import SessionRow, Store

# Reference verdicts per task (turn 0, 1, 2), and the target's when it replays them (3 turns).
REFERENCE = {
    "BigCodeBench/1": (False, False, True),
    "BigCodeBench/2": (True,),
    "BigCodeBench/3": (False, False, False),
    "BigCodeBench/4": (False, False, False),
}
TARGET = {
    "BigCodeBench/1": (False, False, True),  # own pass at turn 2: 1/3
    "BigCodeBench/2": (False, True),  # the reference's turn 0 passed: 1
    "BigCodeBench/3": (False, True),  # own pass at turn 1: 1/2
    "BigCodeBench/4": (True,),  # own turn 0 (compensate_init): 1
}


def replay(
    store: Store,
    target: str,
    references: list[SessionRow],
    context: str,
    verdicts: dict[str, tuple[bool, ...]] = TARGET,
) -> str:
    cfg = replace(config(target), context=context)
    run_id = store.create_static_run(cfg, f"static;{target}", references, {"log_set": "x"})
    for row in store.run_sessions(run_id):
        play(store, row.id, verdicts[row.task_id])
    return run_id


def live(store: Store, model: str, verdicts: dict[str, tuple[bool, ...]]) -> list[SessionRow]:
    run_id = store.create_run("live", config(model), "ids=1-4", sorted(verdicts))
    for row in store.run_sessions(run_id):
        play(store, row.id, verdicts[row.task_id])
    return store.run_sessions(run_id)


def report(db: Path, *args: str) -> subprocess.CompletedProcess:
    return invoke("report", "--db", str(db), *args, environ={"CI": os.environ.get("CI")})


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "results.db"
    with Store.open(path) as store:
        replay(store, "target-model", live(store, "ref-model", REFERENCE), "markov")
    return path


def test_static_scores_follow_print_results_with_the_references_successes(db: Path) -> None:
    done = report(db, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    (static,) = data["static"]
    assert static["model"] == "target-model"
    assert static["reference"] == "ref-model"
    assert static["context"] == "markov"
    assert static["compensate_init"] is True
    assert static["tasks"] == 4
    # MRR = (1/3 + 1 + 1/2 + 1) / 4; Recall: every task counts as solved.
    assert static["mrr"] == round(100 * (1 / 3 + 1 + 1 / 2 + 1) / 4, 1)
    assert static["recall"] == 100.0
    # Rows start at turn 1: turn 1 passes for tasks 2 (reference turn 0), 3 and 4 (carried
    # forward after its own turn 0); turn 2 for all four.
    assert static["pass_at_turn_from"] == 1
    assert static["pass_at_turn"] == [75.0, 100.0]
    # The reference's own live run is reported as a live column beside it.
    (live,) = data["columns"]
    assert live["model"] == "ref-model"
    assert live["recall"] == 50.0


def test_the_tables_name_the_log_set_and_the_csv_files_hold_the_static_scores(
    db: Path, tmp_path: Path
) -> None:
    done = report(db, "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert "Static (replayed) MRR and Recall" in done.stdout
    assert "compensate_init=True" in done.stdout.replace("\n", "")
    text = (tmp_path / "out" / "results-static-mrr-recall.csv").read_text()
    (row,) = csv.DictReader(io.StringIO(text))
    assert row == {
        "model": "target-model",
        "feedback": "CF,EF:full",
        "protocol": "convtui",
        "reference": "ref-model",
        "context": "markov",
        "feedback_by": "",
        "tasks": "4",
        "mrr": "70.8",
        "recall": "100.0",
        "compensate_init": "True",
        # Four tasks: bounds blank, and why.
        "mrr_low": "",
        "mrr_high": "",
        "recall_low": "",
        "recall_high": "",
        "interval_reason": "4 tasks are too few for an interval (at least 10)",
    }


def every(*verdicts: bool) -> dict[str, tuple[bool, ...]]:
    return dict.fromkeys(REFERENCE, verdicts)


def test_correlate_ranks_three_models_live_against_static_as_by_hand(tmp_path: Path) -> None:
    pytest.importorskip("scipy")  # the exec extra
    path = tmp_path / "three.db"
    with Store.open(path) as store:
        references = live(store, "ref-model", REFERENCE)
        # Live MRR: a 1, b 1/2, c 0. Static MRR: a 0.708 (TARGET), b 1 (every own turn 0
        # passes), c 0.25 (only the task whose reference passed at turn 0).
        for model, own, replayed in (
            ("a", every(True), TARGET),
            ("b", every(False, True), every(True)),
            ("c", every(False, False, False), every(False, False, False)),
        ):
            live(store, model, own)
            replay(store, model, references, "markov", replayed)
    done = report(path, "--json", "--correlate", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    rows = {
        (r["feedback"], r["metric"]): r
        for r in json.loads(done.stdout)["correlation"]["rows"]
        if r["reference"] == "ref-model"
    }
    mrr = rows[("CF,EF:full", "MRR")]
    assert mrr["models"] == ["a", "b", "c"]  # ref-model has no static column of its own
    # Live ranks a 3, b 2, c 1; static a 2, b 3, c 1: sum d^2 = 2, rho = 1 - 6*2/(3*8).
    assert mrr["spearman_rho"] == pytest.approx(0.5)
    # Pairs: (a,b) discordant, (a,c) and (b,c) concordant: tau = (2 - 1) / 3.
    assert mrr["kendall_tau"] == pytest.approx(1 / 3)
    # Recall live a 1, b 1, c 0; static a 1, b 1, c 1/4: the same tied ranks both ways
    # (a and b share 2.5), so both coefficients are 1 (Kendall's tau-b handles the tie).
    recall = rows[("CF,EF:full", "Recall")]
    assert recall["spearman_rho"] == pytest.approx(1.0)
    assert recall["kendall_tau"] == pytest.approx(1.0)


def test_human_log_sets_are_labelled_with_their_annotators_and_sessions(tmp_path: Path) -> None:
    path = tmp_path / "human.db"
    with Store.open(path) as store:
        references = []
        for task_id, person in (("BigCodeBench/1", "ann"), ("BigCodeBench/3", "bob")):
            session_id = store.create_interactive_session(
                task_id, config("tui-model"), "human", annotator=person
            )
            play(store, session_id, REFERENCE[task_id])
            references.append(store.session(session_id))
        replay(store, "target-model", references, "markov")
    done = report(path, "--json", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr  # a database of replays and TUI sessions only
    data = json.loads(done.stdout)
    assert data["columns"] == []
    (static,) = data["static"]
    assert static["feedback_by"] == "human feedback (2 annotators, 2 sessions)"
    assert static["mrr"] == round(100 * (1 / 3 + 1 / 2) / 2, 1)


def test_a_database_with_no_session_at_all_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    Store.open(path).close()
    done = report(path)
    assert done.returncode != 0
    assert done.stderr.strip().count("\n") == 0
    assert "no benchmark sessions" in done.stderr
