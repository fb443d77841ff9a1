"""Two annotators who work offline, each recording into their own copy of the study
database, merged back with `convtui sessions merge`: `convtui study report` on the merged
database is the report of the same work done on one host, replays included; merging a file
a second time adds nothing and changes no report.

The same work: tasks 2, 4, 8 to both ana and ben (turns 0-2), each session played by the
real turn loop and sandbox with scripted replies (support/study_play.py)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from support.cli import invoke
from support.data import needs_bigcodebench
from support.scripted import script
from support.studies import study_spec, write_study
from support.study_play import FAILS, play_assignment, solving_at

pytestmark = needs_bigcodebench

# annotator -> task -> the turn their session first passes (None: never).
WORK = {
    "ana": {"BigCodeBench/2": 0, "BigCodeBench/4": None, "BigCodeBench/8": 1},
    "ben": {"BigCodeBench/2": 1, "BigCodeBench/4": None, "BigCodeBench/8": 2},
}


def play(db: Path, annotator: str, executor, bigcodebench, scripts: Path) -> None:
    scripts.mkdir(exist_ok=True)
    for task_id, turn in WORK[annotator].items():
        task = bigcodebench.get(task_id)
        play_assignment(db, executor, task, annotator, solving_at(task, turn), scripts)


def report(db: Path, target: str, *extra: str) -> str:
    done = invoke("study", "report", "--db", str(db), "--target", target, *extra)
    assert done.returncode == 0, done.stderr
    return done.stdout.replace(str(db), "STUDY.db")


def without_runs(text: str) -> dict:
    """The JSON report less what names this database's own replay runs."""
    data = json.loads(text)
    for scoring in data["scores"]:
        scoring.pop("runs")
    return data


def dump(path: Path) -> list[str]:
    with sqlite3.connect(path) as db:
        return list(db.iterdump())


def test_work_recorded_offline_and_merged_reports_as_if_done_on_one_host(
    tmp_path, executor, bigcodebench
):
    spec = study_spec(
        tasks=tuple(WORK["ana"]),
        model=script(tmp_path / "study-model.jsonl", [FAILS]),
        annotators=("ana", "ben"),
        seed=0,
    )
    target = script(tmp_path / "target.jsonl", [FAILS])
    host, study = tmp_path / "host.db", tmp_path / "study.db"
    write_study(host, spec)
    write_study(study, spec)
    for annotator in WORK:  # on the host, one after the other
        play(host, annotator, executor, bigcodebench, tmp_path / "host")
    for annotator in WORK:  # each on a copy of the study database of their own
        offline = tmp_path / f"{annotator}.db"
        shutil.copy(study, offline)
        play(offline, annotator, executor, bigcodebench, tmp_path / annotator)
    sources = []
    for annotator in WORK:  # each file as the annotator who recorded it hands it in
        merged = invoke(
            "sessions", "merge", str(tmp_path / f"{annotator}.db"), "--annotator", annotator,
            "--db", str(study), "--json",
        )  # fmt: skip
        assert merged.returncode == 0, merged.stderr
        sources += json.loads(merged.stdout)["sources"]
    assert [(s["sessions_added"], s["assignments_linked"]) for s in sources] == [(3, 3), (3, 3)]

    one_host = report(host, target, "--json")
    offline = report(study, target, "--json")
    assert without_runs(offline) == without_runs(one_host)
    data = without_runs(offline)
    assert (data["progress"]["done"], data["agreement"]["pairs"]) == (6, 3)
    assert data["agreement"]["solved"]["alpha"] == 1.0  # both solve 2 and 8, neither 4
    assert [r["mrr"] for r in data["scores"][0]["annotators"]] == [50.0, 27.8]
    assert report(study, target) == report(host, target)  # the tables too

    before = dump(study)
    again = invoke("sessions", "merge", str(tmp_path / "ana.db"), "--db", str(study), "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["sources"][0]["sessions_added"] == 0
    assert dump(study) == before
    assert report(study, target, "--json") == offline
