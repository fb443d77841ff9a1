"""``convtui sessions merge`` carries the results of ``convtui study fidelity``: an annotator's
file where two people answered a study (support/fidelity.py) and the fidelity study was run
with scripted ``mock:`` models is merged into the study's database, whose fidelity rows are
then the file's (executions under the target's own ids), whose report is the file's without a
call made, and which a second merge leaves as it was. A row that conflicts with the target's,
or that convtui could not have written, refuses the file in one line, the target as it was."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from store_values import config, turn
from support.cli import assert_one_line_error, invoke
from support.data import needs_bigcodebench
from support.fidelity import count, record_study
from support.scripted import script
from support.study_play import FAILS

from convtui.sessions import Store
from convtui.sessions.database.codec import text_hash
from convtui.sessions.database.errors import StoreError
from convtui.sessions.merging.merge import merge_store
from convtui.sessions.studies.fidelity import FIDELITY_TABLES

pytestmark = needs_bigcodebench

# A target turn's execution by content: its integer id is the file's own.
EXECUTION = (
    "e.cache_key, e.in_cache, e.result_hash, e.task_id, e.code_blob, e.status, e.tests_passed, "
    "e.tests_total, (SELECT group_concat(t.name || ':' || t.status, ',') FROM execution_tests t "
    "WHERE t.execution_id = e.id ORDER BY t.position)"
)


class Source:
    """The annotator's file (fidelity run once, with these models) and its report."""

    def __init__(self, folder: Path, executor, catalog) -> None:
        self.db = folder / "annotator.db"
        record_study(self.db, executor, catalog, folder / "scripts")
        self.simulator = script(folder / "sim.jsonl", ["unused"], ["Check test_one: it fails."])
        self.target = script(folder / "target.jsonl", [FAILS])
        self.report = self.fidelity(self.db)
        assert self.report["run"] == {"simulator_steps": 4, "target_turns": 12}
        self.rows = {t: count(self.db, f"SELECT count(*) FROM {t}") for t in FIDELITY_TABLES}

    def fidelity(self, db: Path) -> dict:
        done = invoke(
            "study", "fidelity", "--db", str(db), "--simulator", self.simulator,
            "--target", self.target, "--resamples", "200", "--json",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def copy(self, into: Path, *, fidelity: bool = True) -> Path:
        """A copy of the file, without its fidelity rows unless ``fidelity``."""
        shutil.copy(self.db, into)
        if not fidelity:
            tamper(into, *(f"DELETE FROM {table}" for table in reversed(FIDELITY_TABLES)))
        return into


@pytest.fixture(scope="module")
def source(tmp_path_factory, executor, catalog) -> Source:
    return Source(tmp_path_factory.mktemp("fidelity"), executor, catalog)


def tamper(path: Path, *statements: str) -> None:
    """Change ``path`` as anyone with sqlite3 could (CHECK constraints off, as they can be)."""
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA ignore_check_constraints = ON")
        for sql in statements:
            db.execute(sql)
    db.close()


def merge(source: Path, target: Path) -> dict:
    done = invoke("sessions", "merge", str(source), "--db", str(target), "--json")
    assert done.returncode == 0, done.stderr
    [result] = json.loads(done.stdout)["sources"]
    return result


def fidelity_rows(path: Path) -> dict[str, list[tuple]]:
    """Every fidelity row of ``path``, a target turn with its execution by content."""
    turns = [
        "session_id", "turn_idx", "source", "target", "protocol", "request_hash", "call_id",
        "reply_blob", "code_blob", "passed", "tests_passed", "tests_total", "created_utc",
    ]  # fmt: skip
    with sqlite3.connect(path) as db:
        found = {
            table: db.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3").fetchall()
            for table in ("fidelity_calls", "fidelity_feedback")
        }
        found["fidelity_turns"] = db.execute(
            f"SELECT {', '.join('f.' + c for c in turns)}, {EXECUTION} FROM fidelity_turns f "
            "JOIN executions e ON e.id = f.execution_id ORDER BY 1, 2, 3, 4, 5"
        ).fetchall()
    db.close()
    return found


def execution_ids(path: Path) -> list[int]:
    with sqlite3.connect(path) as db:
        found = db.execute(
            "SELECT execution_id FROM fidelity_turns "
            "ORDER BY session_id, turn_idx, source, target, protocol"
        )
        ids = [row[0] for row in found]
    db.close()
    return ids


def fingerprint(path: Path) -> str:
    """The file by its bytes (a source: SQLite never opens it)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def content(path: Path) -> list[str]:
    """The database by its content: every table's schema and rows."""
    with sqlite3.connect(path) as db:
        found = list(db.iterdump())
    db.close()
    return found


def test_the_results_travel_and_the_targets_report_is_the_files_without_a_call(
    source: Source, tmp_path: Path
) -> None:
    annotator, study = source.copy(tmp_path / "a.db"), tmp_path / "study.db"
    with Store.open(study) as store:  # another run first: the target's execution ids differ
        run_id = store.create_run("live", config(), "ids=0", ["BigCodeBench/0"])
        [other] = store.pending_sessions(run_id)
        store.save_turn(other.id, turn(0), "running", "key-other")

    result = merge(annotator, study)

    assert (result["sessions_added"], result["fidelity_added"]) == (2, sum(source.rows.values()))
    assert fidelity_rows(study) == fidelity_rows(annotator)
    assert len(fidelity_rows(study)["fidelity_turns"]) == 12
    assert execution_ids(study) != execution_ids(annotator)
    calls = count(study, "SELECT count(*) FROM fidelity_calls")
    report = source.fidelity(study)
    assert report["run"] == {"simulator_steps": 0, "target_turns": 0}
    assert count(study, "SELECT count(*) FROM fidelity_calls") == calls
    assert {k: v for k, v in report.items() if k != "run"} == {
        k: v for k, v in source.report.items() if k != "run"
    }

    before = content(study)
    again = merge(annotator, study)
    assert [again[k] for k in ("sessions_added", "sessions_present", "fidelity_added")] == [0, 2, 0]
    assert content(study) == before
    shown = invoke("sessions", "merge", str(annotator), "--db", str(study))
    assert shown.returncode == 0 and "fidelity" not in shown.stdout


def test_a_second_file_holding_the_same_results_adds_no_call_rows(
    source: Source, tmp_path: Path
) -> None:
    """Two files that ran the same fidelity study (the same sessions, models and answers)
    hold the same calls under ids of their own. Merged one after the other, the second adds
    no row: a call the target holds with the same request, place and answer is that call.
    Before, the second merge copied every call again (the call log's rows doubled)."""
    twin = source.copy(tmp_path / "twin.db", fidelity=False)
    assert source.fidelity(twin)["run"] == {"simulator_steps": 4, "target_turns": 12}
    twin_calls = fetchall_ids(twin)
    assert twin_calls.isdisjoint(fetchall_ids(source.db))  # their own ids
    study = tmp_path / "study.db"
    merge(source.db, study)
    calls = count(study, "SELECT count(*) FROM fidelity_calls")
    assert calls == source.rows["fidelity_calls"]
    before = content(study)

    again = merge(twin, study)

    assert again["fidelity_added"] == 0
    assert count(study, "SELECT count(*) FROM fidelity_calls") == calls
    assert content(study) == before

    # A target holding only the calls: the twin's feedback and turns arrive naming them.
    asked = source.copy(tmp_path / "asked.db")
    tamper(asked, "DELETE FROM fidelity_turns", "DELETE FROM fidelity_feedback")
    other = tmp_path / "other.db"
    merge(asked, other)
    added = merge(twin, other)["fidelity_added"]
    assert added == source.rows["fidelity_feedback"] + source.rows["fidelity_turns"]
    unnamed = (
        "SELECT count(*) FROM {} WHERE call_id IS NOT NULL "
        "AND call_id NOT IN (SELECT id FROM fidelity_calls)"
    )
    assert count(other, unnamed.format("fidelity_feedback")) == 0
    assert count(other, unnamed.format("fidelity_turns")) == 0
    assert count(other, "SELECT count(*) FROM fidelity_calls") == calls


def fetchall_ids(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        found = {row[0] for row in db.execute("SELECT id FROM fidelity_calls")}
    db.close()
    return found


def test_results_on_sessions_the_target_already_holds_travel(
    source: Source, tmp_path: Path
) -> None:
    """The sessions were merged before the fidelity study ran on the annotator's file."""
    early, study = source.copy(tmp_path / "early.db", fidelity=False), tmp_path / "study.db"
    assert merge(early, study)["fidelity_added"] == 0

    result = merge(source.copy(tmp_path / "a.db"), study)

    assert (result["sessions_added"], result["sessions_present"]) == (0, 2)
    assert result["fidelity_added"] == sum(source.rows.values())
    assert fidelity_rows(study) == fidelity_rows(source.db)
    shown = invoke("sessions", "merge", str(source.db), "--db", str(tmp_path / "other.db"))
    assert shown.returncode == 0, shown.stderr
    assert f"{sum(source.rows.values())} fidelity rows added" in shown.stdout


def test_a_started_call_arrives_abandoned_and_takes_its_answer_later(
    source: Source, tmp_path: Path
) -> None:
    """A copy taken while the annotator's fidelity run was asking: the call comes
    ``abandoned`` (the target's next run asks it again), and its answer with a later copy."""
    asking, study = source.copy(tmp_path / "asking.db"), tmp_path / "study.db"
    first = "(SELECT min(id) FROM fidelity_calls)"
    tamper(
        asking,
        "DELETE FROM fidelity_turns",
        "DELETE FROM fidelity_feedback",
        f"UPDATE fidelity_calls SET status = 'started', response_blob = NULL, "
        f"finished_utc = NULL WHERE id = {first}",
    )
    merge(asking, study)
    status = f"SELECT count(*) FROM fidelity_calls WHERE status = 'abandoned' AND id = {first}"
    assert count(study, status) == 1

    added = source.rows["fidelity_feedback"] + source.rows["fidelity_turns"]
    assert merge(source.db, study)["fidelity_added"] == added
    assert fidelity_rows(study) == fidelity_rows(source.db)


FEEDBACK = "(SELECT session_id FROM fidelity_feedback ORDER BY session_id LIMIT 1)"


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (
            "UPDATE fidelity_feedback SET text_blob = '{other}' WHERE session_id = " + FEEDBACK,
            ("fidelity feedback of simulator:expert:", "differs (text_blob)"),
        ),
        (
            "UPDATE fidelity_calls SET model = 'mock:other' WHERE id = "
            "(SELECT min(id) FROM fidelity_calls)",
            ("fidelity call", "differs (model)"),
        ),
        (
            "UPDATE fidelity_turns SET reply_blob = '{other}' WHERE source = 'none'",
            ("fidelity turn of", "handed none", "differs (reply_blob)"),
        ),
    ],
    ids=["feedback words", "call model", "turn reply"],
)
def test_a_row_that_differs_from_the_targets_is_refused(
    source: Source, tmp_path: Path, change: str, words: tuple[str, ...]
) -> None:
    study = tmp_path / "study.db"
    merge(source.db, study)
    other = source.copy(tmp_path / "other.db")
    words_hash = text_hash("Other words.")
    tamper(
        other,
        f"INSERT INTO blobs (hash, text) VALUES ('{words_hash}', 'Other words.')",
        change.format(other=words_hash),
    )
    before = content(study)

    done = invoke("sessions", "merge", str(other), "--db", str(study))

    assert_one_line_error(done, str(other), str(study), *words, "not merged")
    assert content(study) == before


TURN = "(SELECT min(rowid) FROM fidelity_turns)"


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (
            "UPDATE fidelity_calls SET turn_idx = 99 WHERE id = "
            "(SELECT min(id) FROM fidelity_calls)",
            ("fidelity call", "is on no turn of the file where a person gave their words"),
        ),
        (
            f"UPDATE fidelity_feedback SET turn_idx = 99 WHERE session_id = {FEEDBACK} "
            "AND turn_idx = 0",
            ("fidelity_feedback.session_id, turn_idx", "names a row of turns"),
        ),
        (
            "UPDATE fidelity_calls SET status = 'great'",
            ("is damaged (CHECK constraint failed in fidelity_calls)",),
        ),
        (
            "UPDATE fidelity_feedback SET status = 'silent'",
            ("fidelity feedback of", "is 'silent' with words"),
        ),
        (
            "UPDATE fidelity_feedback SET persona = 'oracle'",
            ("is damaged (CHECK constraint failed in fidelity_feedback)",),
        ),
        (
            f"UPDATE fidelity_turns SET passed = 1 WHERE rowid = {TURN}",
            ("fidelity turn of", "says it passed but its execution did not"),
        ),
        (
            f"UPDATE fidelity_turns SET tests_passed = tests_total + 1 WHERE rowid = {TURN}",
            ("fidelity turn of", "tests passed but its execution"),
        ),
        (
            "UPDATE fidelity_turns SET execution_id = (SELECT e.id FROM executions e "
            "WHERE e.task_id != (SELECT s.task_id FROM sessions s "
            "WHERE s.id = fidelity_turns.session_id) LIMIT 1)",
            ("fidelity turn of", "names an execution of BigCodeBench/"),
        ),
        (
            "UPDATE fidelity_turns SET call_id = (SELECT id FROM fidelity_calls "
            "WHERE role = 'simulator' LIMIT 1)",
            ("fidelity turn of", "which answered another request"),
        ),
        (
            "UPDATE fidelity_calls SET status = 'error' WHERE role = 'simulator'",
            ("fidelity feedback of", "which did not answer"),
        ),
    ],
    ids=[
        "call on no turn",
        "feedback on no turn",
        "call status",
        "silent with words",
        "persona",
        "verdict",
        "test counts",
        "execution of another task",
        "call of another request",
        "unanswered call",
    ],
)
def test_a_fidelity_row_convtui_could_not_have_written_is_refused(
    source: Source, tmp_path: Path, change: str, words: tuple[str, ...]
) -> None:
    study = tmp_path / "study.db"
    merge(source.copy(tmp_path / "early.db", fidelity=False), study)
    bad = source.copy(tmp_path / "bad.db")
    tamper(bad, change)
    study_before, bad_before = content(study), fingerprint(bad)

    done = invoke("sessions", "merge", str(bad), "--db", str(study))

    assert_one_line_error(done, str(bad), *words, "nothing merged")
    assert content(study) == study_before
    assert fingerprint(bad) == bad_before


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ("UPDATE fidelity_calls SET status = 'great'", ("has status 'great'",)),
        ("UPDATE fidelity_calls SET role = 'judge'", ("has role 'judge'",)),
        ("UPDATE fidelity_feedback SET persona = 'oracle'", ("has persona 'oracle'",)),
        ("UPDATE fidelity_feedback SET status = 'loud'", ("has status 'loud'",)),
    ],
    ids=["call status", "call role", "persona", "feedback status"],
)
def test_a_value_outside_its_check_is_refused_by_the_merge_itself(
    source: Source, tmp_path: Path, change: str, words: tuple[str, ...]
) -> None:
    """A file is checked as a file first (``quick_check`` finds a value outside its CHECK);
    ``merge_store`` refuses such a row itself, for a store it is handed open."""
    bad = source.copy(tmp_path / "bad.db")
    tamper(bad, change)
    with Store.open(bad) as mine, Store.open(tmp_path / "study.db") as theirs:
        with pytest.raises(StoreError) as refused:
            merge_store(mine, theirs)
        assert count(theirs.path, "SELECT count(*) FROM sessions") == 0
    assert all(word in str(refused.value) for word in (*words, "nothing merged"))
