"""``convtui sessions merge`` takes from one file only what the study can afford: at most so
many sessions, turns, bytes and seconds (each a default an option raises), refused in one
line naming the cap, what was found and the option, with nothing of the file written; and a
dry run that says what a merge would add and writes nothing."""

from __future__ import annotations

import hashlib
import inspect
import json
import shutil
import sqlite3
import time
import tracemalloc
from pathlib import Path

import pytest
from store_values import config, turn
from support.cli import assert_one_line_error, invoke
from support.store_fixtures import FIXTURES
from support.studies import study_spec, write_study

from convtui.sessions import Store
from convtui.sessions.database.errors import StoreError
from convtui.sessions.database.ids import new_id
from convtui.sessions.merging.merge import merge_store
from convtui.sessions.merging.merge_limits import (
    DEFAULT_MAX_SESSIONS,
    Budget,
    MergeLimits,
)
from convtui.sessions.studies.study_rows import start_assignment

TASKS = ("BigCodeBench/0", "BigCodeBench/1")
# The newest store fixture: a run's sessions with turns, a person's session, and what study
# fidelity found on it (tests/fixtures/make_store_fixture.py).
FIXTURE = sorted(FIXTURES.glob("store-*.sqlite"))[-1]


def sessions_of_one_turn(path: Path, count: int) -> list[str]:
    """``count`` more interactive sessions (no annotator) in ``path``, one failing turn each."""
    ids = []
    with Store.open(path) as store:
        for n in range(count):
            session = store.create_interactive_session(f"BigCodeBench/{n}", config(), "none")
            store.save_turn(session, turn(0), "running", f"key-{session}")
            ids.append(session)
    return ids


def dump(path: Path) -> list[str]:
    with sqlite3.connect(path) as db:
        return list(db.iterdump())


def fingerprint(path: Path) -> dict[str, str]:
    return {
        name.name: hashlib.sha256(name.read_bytes()).hexdigest()
        for name in (path, path.with_name(path.name + "-wal"))
        if name.exists()
    }


def merge(*args: str) -> dict:
    done = invoke("sessions", "merge", *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def study(tmp_path: Path) -> Path:
    """A target that already holds something, so 'unchanged' means something."""
    target = tmp_path / "study.db"
    sessions_of_one_turn(target, 1)
    return target


def test_the_sessions_cap_counts_what_a_file_adds_and_refuses_one_past_it(
    tmp_path: Path, study: Path
) -> None:
    source = tmp_path / "three.db"
    sessions_of_one_turn(source, 1)
    merge(str(source), "--db", str(study))
    sessions_of_one_turn(source, 2)  # the file holds three sessions, the study one of them
    before = dump(study)

    refused = invoke("sessions", "merge", str(source), "--db", str(study), "--max-sessions", "1")

    assert_one_line_error(refused, str(source), "2 sessions", "--max-sessions", "(1)")
    assert "--max-sessions 2" in refused.stderr  # how to take it
    assert dump(study) == before
    out = merge(str(source), "--db", str(study), "--max-sessions", "2")
    assert out["sources"][0]["sessions_added"] == 2


def test_the_turns_cap_refuses_a_file_whose_sessions_hold_more(tmp_path: Path, study: Path) -> None:
    source = tmp_path / "long.db"
    with Store.open(source) as store:
        session = store.create_interactive_session("BigCodeBench/5", config(max_turns=5), "none")
        for idx in range(4):
            store.save_turn(session, turn(idx), "running", f"key-{idx}")
    before = dump(study)

    refused = invoke("sessions", "merge", str(source), "--db", str(study), "--max-turns", "3")

    assert_one_line_error(refused, str(source), "4 turns", "--max-turns", "--max-turns 4")
    assert dump(study) == before


def test_the_bytes_cap_refuses_a_file_before_it_is_copied(tmp_path: Path) -> None:
    source, target = tmp_path / "big.db", tmp_path / "new.db"
    sessions_of_one_turn(source, 1)
    size = source.stat().st_size

    refused = invoke("sessions", "merge", str(source), "--db", str(target), "--max-bytes", "4096")

    assert_one_line_error(refused, str(source), f"{size:,} bytes", "--max-bytes", "(4,096)")
    assert not target.exists()


def test_the_seconds_cap_refuses_a_file_in_one_line(tmp_path: Path, study: Path) -> None:
    source = tmp_path / "slow.db"
    sessions_of_one_turn(source, 2)
    before = dump(study)

    refused = invoke("sessions", "merge", str(source), "--db", str(study), "--max-seconds", "0")

    assert_one_line_error(refused, str(source), "--max-seconds", "rolled back")
    assert dump(study) == before


class _SpentOnceWriting(Budget):
    """A clock that runs out the moment the merge holds the target's write lock: what a slow
    disk or a large file does to a real one, at a point a test can name."""

    def __init__(self, target: Store, shown: Path) -> None:
        super().__init__(60.0, shown)
        self.target = target

    def over(self) -> bool:
        return self.target.db.conn.in_transaction


def test_time_up_while_writing_rolls_the_whole_file_back(tmp_path: Path, study: Path) -> None:
    source = tmp_path / "slow.db"
    sessions_of_one_turn(source, 3)
    before = dump(study)

    with Store.open(source) as mine, Store.open(study) as theirs:
        budget = _SpentOnceWriting(theirs, source)
        with pytest.raises(StoreError, match=r"--max-seconds.*rolled back"):
            merge_store(mine, theirs, budget=budget)
        assert not theirs.db.conn.in_transaction

    assert dump(study) == before


def test_the_default_cap_refuses_20000_empty_sessions_at_once_and_in_little_memory(
    tmp_path: Path, study: Path
) -> None:
    """The attack, a tenth of its size: a valid file of empty sessions, each of them a row
    convtui could have written. Before the caps it was read whole into Python and merged."""
    source = tmp_path / "flood.db"
    with Store.open(source) as store:
        first = store.create_interactive_session("BigCodeBench/0", config(), "human", "ana")
    with sqlite3.connect(source) as db:
        row = db.execute("SELECT * FROM sessions WHERE id = ?", (first,)).fetchone()
        marks = ", ".join("?" * len(row))
        db.executemany(
            f"INSERT INTO sessions VALUES ({marks})",
            ((new_id(), *row[1:]) for _ in range(20_000 - 1)),
        )
    before = dump(study)

    tracemalloc.start()
    started = time.monotonic()
    refused = invoke("sessions", "merge", str(source), "--db", str(study))
    took = time.monotonic() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    assert_one_line_error(refused, "20,000 sessions", f"({DEFAULT_MAX_SESSIONS:,})")
    assert dump(study) == before
    assert took < 3.0, took
    assert peak < 16 * 1024**2, peak  # the 20,000 rows never became Python objects


def test_the_commands_defaults_are_the_libraries() -> None:
    """--help shows the caps without loading the store, so the command writes them out."""
    from convtui.cli.records import sessions_merge

    defaults = {name: p.default for name, p in inspect.signature(sessions_merge).parameters.items()}
    limits = MergeLimits()
    assert (
        defaults["max_sessions"],
        defaults["max_turns"],
        defaults["max_bytes"],
        defaults["max_seconds"],
    ) == (limits.sessions, limits.turns, limits.bytes, limits.seconds)
    shown = invoke("sessions", "merge", "--help")
    for option in ("--max-sessions", "--max-turns", "--max-bytes", "--max-seconds", "--dry-run"):
        assert option in shown.stdout


# --- dry run ----------------------------------------------------------------------------------


def test_a_dry_run_says_what_a_merge_adds_and_writes_nothing(tmp_path: Path) -> None:
    """The fixture holds a run's sessions, a person's and study fidelity's rows on it."""
    source, target = tmp_path / "fixture.db", tmp_path / "new.db"
    shutil.copy(FIXTURE, source)

    dry = merge(str(source), "--db", str(target), "--dry-run")

    assert not target.exists()
    real = merge(str(source), "--db", str(target))
    assert dry["dry_run"] and not real["dry_run"]
    for key in ("sessions_added", "turns_added", "assignments_linked", "fidelity_added"):
        assert dry["sources"][0][key] == real["sources"][0][key], key
    assert real["sources"][0]["sessions_added"] > 0
    assert real["sources"][0]["turns_added"] > 0
    assert real["sources"][0]["fidelity_added"] > 0


def test_a_dry_run_into_a_study_counts_the_links_and_leaves_the_file_as_it_was(
    tmp_path: Path,
) -> None:
    spec = study_spec(tasks=TASKS, feedback="CF,EF:full", turns=2, annotators=("ana",), overlap=1)
    study, copy = tmp_path / "study.db", tmp_path / "ana.db"
    study_id = write_study(study, spec)
    shutil.copy(study, copy)
    with Store.open(copy) as store:
        for task in TASKS:
            session = start_assignment(store, study_id, task, "ana", spec.config(), "human")
            store.save_turn(session, turn(0), "running", f"key-{task}")
    before = fingerprint(study)

    dry = invoke(
        "sessions", "merge", str(copy), "--annotator", "ana", "--db", str(study), "--dry-run"
    )

    assert dry.returncode == 0, dry.stderr
    assert "would add 2 sessions (2 turns), link 2 assignments, add 0 fidelity rows" in dry.stdout
    assert "nothing written" in dry.stdout
    assert fingerprint(study) == before
    real = merge(str(copy), "--annotator", "ana", "--db", str(study))
    assert (real["sources"][0]["sessions_added"], real["sources"][0]["assignments_linked"]) == (
        2,
        2,
    )
