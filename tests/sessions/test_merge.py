"""``convtui sessions merge``: sessions of other databases brought into one, under their ids."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from store_values import config, turn
from support.cli import assert_one_line_error, invoke
from support.studies import study_spec, write_study

from convtui.sessions import Store


def record(path: Path, selection: str, tasks: list[str], turns: int = 2) -> list[str]:
    """A live run of ``tasks`` in a new file at ``path``, each session ``turns`` turns."""
    with Store.open(path) as store:
        run_id = store.create_run("live", config(), selection, tasks)
        ids = []
        for session in store.pending_sessions(run_id):
            for idx in range(turns):
                last = idx == turns - 1
                store.save_turn(
                    session.id,
                    turn(idx, passed=last),
                    "solved" if last else "running",
                    f"key-{session.id}-{idx}",
                )
            ids.append(session.id)
        store.finish_run(run_id, "done")
    return ids


def counts(path: Path) -> dict[str, int]:
    with sqlite3.connect(path) as db:
        return {
            table: db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("runs", "sessions", "turns", "model_calls", "executions", "blobs")
        }


def dump(path: Path) -> list[str]:
    with sqlite3.connect(path) as db:
        return list(db.iterdump())


def merge(*args: str) -> dict:
    done = invoke("sessions", "merge", *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_two_sources_merge_into_one_and_show_the_same(tmp_path: Path) -> None:
    a, b, study = tmp_path / "a.db", tmp_path / "b.db", tmp_path / "study.db"
    ids_a = record(a, "ids=0-1", ["BigCodeBench/0", "BigCodeBench/1"])
    ids_b = record(b, "ids=2", ["BigCodeBench/2"], turns=3)

    out = merge(str(a), str(b), "--db", str(study))

    assert [s["sessions_added"] for s in out["sources"]] == [2, 1]
    assert [s["sessions_present"] for s in out["sources"]] == [0, 0]
    total = counts(study)
    assert total["sessions"] == 3 and total["runs"] == 2
    assert total["turns"] == counts(a)["turns"] + counts(b)["turns"]
    assert total["model_calls"] == counts(a)["model_calls"] + counts(b)["model_calls"]
    for source, ids in ((a, ids_a), (b, ids_b)):
        for session_id in ids:
            for extra in ((), ("--json",)):
                mine = invoke("sessions", "show", session_id, "--db", str(source), *extra)
                theirs = invoke("sessions", "show", session_id, "--db", str(study), *extra)
                assert mine.returncode == theirs.returncode == 0
                assert mine.stdout == theirs.stdout
    with sqlite3.connect(study) as db:
        origins = {r[0] for r in db.execute("SELECT origin FROM runs")}
    assert origins == {f"merged from {a}", f"merged from {b}"}


def test_merging_again_adds_nothing(tmp_path: Path) -> None:
    a, study = tmp_path / "a.db", tmp_path / "study.db"
    record(a, "ids=0-1", ["BigCodeBench/0", "BigCodeBench/1"])
    merge(str(a), "--db", str(study))
    before = dump(study)

    again = invoke("sessions", "merge", str(a), "--db", str(study))

    assert again.returncode == 0, again.stderr
    assert "nothing to add, 2 already present" in again.stdout
    assert dump(study) == before


def one_session_and_its_copy(tmp_path: Path) -> tuple[Path, Path, str]:
    """``a.db`` holding one session of one turn, ``c.db`` a copy of it (for a test to change),
    and the session's id."""
    a, c = tmp_path / "a.db", tmp_path / "c.db"
    [session_id] = record(a, "ids=0", ["BigCodeBench/0"], turns=1)
    shutil.copy(a, c)
    return a, c, session_id


def assert_refused_after(first: Path, then: Path, study: Path, *words: str) -> None:
    """``first`` merges into ``study``; ``then`` is refused in one line naming itself, the
    study and ``words``, and the study is left as it was."""
    merge(str(first), "--db", str(study))
    before = dump(study)

    done = invoke("sessions", "merge", str(then), "--db", str(study))

    assert_one_line_error(done, str(then), str(study), *words)
    assert dump(study) == before


def test_a_conflicting_session_is_refused_and_the_target_unchanged(tmp_path: Path) -> None:
    a, c, session_id = one_session_and_its_copy(tmp_path)
    with Store.open(c) as store:
        store.db.execute("UPDATE sessions SET status = 'stalled' WHERE id = ?", (session_id,))
        store.db.conn.commit()

    assert_refused_after(a, c, tmp_path / "study.db", session_id, "status")


def test_a_session_with_more_turns_in_one_file_is_refused(tmp_path: Path) -> None:
    a, c, session_id = one_session_and_its_copy(tmp_path)
    with Store.open(c) as store:
        store.set_session_status(session_id, "running")
        store.save_turn(session_id, turn(1, passed=True), "solved", "key-more")

    assert_refused_after(c, a, tmp_path / "study.db", session_id)


def test_a_non_sqlite_source_is_refused_in_one_line(tmp_path: Path) -> None:
    notes, study = tmp_path / "notes.db", tmp_path / "study.db"
    notes.write_text("not a database\n")

    done = invoke("sessions", "merge", str(notes), "--db", str(study))

    assert_one_line_error(done, str(notes))
    assert not study.exists()
    assert notes.read_text() == "not a database\n"


def test_an_annotators_offline_copy_brings_its_sessions_and_their_assignments_back(
    tmp_path: Path,
) -> None:
    """The study database is copied to an annotator's machine, they answer an assignment
    there, and the copy is merged back: the session arrives and answers that assignment in
    the study database too; another study's database is refused."""
    from convtui.sessions.studies.study_rows import assignments, next_assignment, start_assignment

    spec = study_spec(
        tasks=("BigCodeBench/0", "BigCodeBench/1"),
        feedback="CF,EF:full",
        turns=1,
        annotators=("ana", "ben"),
        overlap=1,
        seed=0,
    )
    study, offline, other = tmp_path / "study.db", tmp_path / "ana.db", tmp_path / "other.db"
    for path in (study, other):  # two studies alike but for their ids
        write_study(path, spec, salt=path.name)
    shutil.copy(study, offline)
    with Store.open(offline) as store:
        study_id = store.db.execute("SELECT id FROM studies").fetchone()[0]
        mine = next_assignment(store, study_id, "ana")
        assert mine is not None
        session = start_assignment(store, study_id, mine.task_id, "ana", spec.config(), "human")
        store.set_session_status(session, "abandoned")

    out = merge(str(offline), "--annotator", "ana", "--db", str(study))
    assert (out["sources"][0]["sessions_added"], out["sources"][0]["assignments_linked"]) == (1, 1)
    with Store.open(study) as store:
        linked = [a for a in assignments(store, study_id, "ana") if a.task_id == mine.task_id]
        assert [(a.session_id, a.state) for a in linked] == [(session, "done")]
        assert next_assignment(store, study_id, "ana") is None
    before = dump(other)
    refused = invoke("sessions", "merge", str(offline), "--db", str(other))
    assert_one_line_error(refused, "different studies")
    assert dump(other) == before
