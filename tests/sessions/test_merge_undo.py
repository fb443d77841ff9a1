"""``convtui sessions merge --undo`` takes back exactly what the last merge added (every file
of that command), while whatever was recorded into the study since stays; it refuses, in one
line and changing nothing, when something recorded since builds on what the merge added, when
there is nothing to undo, and when the last merge was undone already."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from store_values import config, turn
from support.cli import assert_one_line_error, invoke
from support.studies import study_spec, write_study

from convtui.sessions import Store
from convtui.sessions.studies.study_rows import assignments, start_assignment

TASKS = ("BigCodeBench/0", "BigCodeBench/1")


class Study:
    """A study's database and ana's offline copy, where she answered both her tasks (one
    failing turn each, still running)."""

    def __init__(self, tmp_path: Path) -> None:
        self.spec = study_spec(
            tasks=TASKS, feedback="CF,EF:full", turns=2, annotators=("ana",), overlap=1
        )
        self.db, self.ana = tmp_path / "study.db", tmp_path / "ana.db"
        self.id = write_study(self.db, self.spec)
        shutil.copy(self.db, self.ana)
        self.sessions = []
        with Store.open(self.ana) as store:
            for task in TASKS:
                session = start_assignment(store, self.id, task, "ana", self.spec.config(), "human")
                store.save_turn(session, turn(0), "running", f"key-{task}")
                self.sessions.append(session)

    def merge(self, *more: Path) -> None:
        files = [str(self.ana), *map(str, more)]
        done = invoke("sessions", "merge", *files, "--annotator", "ana", "--db", str(self.db))
        assert done.returncode == 0, done.stderr

    def undo(self) -> dict:
        done = invoke("sessions", "merge", "--undo", "--db", str(self.db), "--json")
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)


def run_file(path: Path) -> None:
    """A benchmark run of one task, one passing turn: a file with a run of its own."""
    with Store.open(path) as store:
        run_id = store.create_run("live", config(), "ids=5", ["BigCodeBench/5"])
        (session,) = store.pending_sessions(run_id)
        store.save_turn(session.id, turn(0, passed=True), "solved", "key-run")
        store.finish_run(run_id, "done")


def dump(path: Path) -> list[str]:
    """The database as SQL, less the merge's own record of itself."""
    with sqlite3.connect(path) as db:
        return [line for line in db.iterdump() if not line.startswith('INSERT INTO "merge')]


def test_undo_takes_back_every_file_of_the_last_merge_and_nothing_else(tmp_path: Path) -> None:
    study, bench = Study(tmp_path), tmp_path / "bench.db"
    run_file(bench)
    before = dump(study.db)
    study.merge(bench)
    assert dump(study.db) != before

    undone = study.undo()

    assert dump(study.db) == before
    assert undone["sources"] == [str(study.ana), str(bench)]
    counts = [undone[k] for k in ("sessions_removed", "runs_removed", "links_cleared")]
    assert counts == [3, 1, 2]
    study.merge(bench)  # and the files merge again as they did the first time
    with Store.open(study.db) as store:
        linked = [a.session_id for a in assignments(store, study.id, "ana")]
    assert sorted(linked) == sorted(study.sessions)


def test_undo_keeps_what_was_recorded_since_with_the_texts_it_shares(tmp_path: Path) -> None:
    """A served study goes on recording while its organiser merges: a session recorded on
    the host after the merge uses the prompt texts the merge brought in first."""
    study = Study(tmp_path)
    study.merge()
    with Store.open(study.db) as store:
        since = store.create_interactive_session("BigCodeBench/7", config(), "human", "cy")
        store.save_turn(since, turn(0), "running", "key-since")

    study.undo()

    with Store.open(study.db) as store:
        held = [r[0] for r in store.db.execute("SELECT id FROM sessions").fetchall()]
        assert held == [since]
        assert store.load_turns(since)[0].prompt == turn(0).prompt  # its texts all there
        assert store.db.execute("PRAGMA foreign_key_check").fetchall() == []


def test_undo_refuses_when_a_merged_session_was_continued_on_the_host(tmp_path: Path) -> None:
    """ana's unfinished session, merged in, goes on in the study's app: undoing the merge
    would throw her new turn away."""
    study = Study(tmp_path)
    study.merge()
    with Store.open(study.db) as store:
        store.save_turn(study.sessions[0], turn(1), "exhausted", "key-more")
    before = dump(study.db)

    refused = invoke("sessions", "merge", "--undo", "--db", str(study.db))

    assert_one_line_error(refused, str(study.db), "since", "nothing undone")
    assert dump(study.db) == before


def test_nothing_to_undo_and_an_undo_undone_each_say_so_in_one_line(tmp_path: Path) -> None:
    study = Study(tmp_path)
    missing = tmp_path / "missing.db"

    assert_one_line_error(
        invoke("sessions", "merge", "--undo", "--db", str(missing)), "nothing to undo"
    )
    assert not missing.exists()
    assert_one_line_error(
        invoke("sessions", "merge", "--undo", "--db", str(study.db)), "nothing to undo"
    )
    study.merge()
    study.undo()
    before = dump(study.db)

    again = invoke("sessions", "merge", "--undo", "--db", str(study.db))

    assert_one_line_error(again, str(study.ana), "undone already", "merge the files again")
    assert dump(study.db) == before
    with_files = invoke("sessions", "merge", str(study.ana), "--undo", "--db", str(study.db))
    assert_one_line_error(with_files, "--undo", "no files")
