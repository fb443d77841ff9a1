"""`convtui bench live` and `convtui report` as the benchmark tests drive them (in process),
and what they read back from a run's SQLite file."""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from support.cli import env, invoke
from support.sqlite_rows import fetchall

# Small but real: three stdlib tasks, three turns, short replies. Our own protocol: under
# convcodeworld a reply must fill DSPy's fields, so what a session does would depend on what
# SmolLM2 writes (test_live_ccw.py plays that protocol with scripted replies).
RUN = [
    "--ids", "2,3,8", "--turns", "2", "--feedback", "CF,EF:full", "--max-tokens", "200",
    "--protocol", "convtui",
]  # fmt: skip
# The runs on the embedded SmolLM2 (in process, behind its server, replayed): smaller still,
# since its generation is most of the suite's time; two turns keep a feedback turn in each.
EMBEDDED_RUN = [
    "--ids", "2,3", "--turns", "1", "--feedback", "CF,EF:full", "--max-tokens", "64",
    "--protocol", "convtui",
]  # fmt: skip
# The context size of the runs on llama.cpp's server: the in-process backend's default, which
# a server compared with it must match.
EMBEDDED_N_CTX = 8192
# A reply that runs and fails every task's tests (no task wants None back).
FAILS = "```python\nimport random\ndef task_func(*args, **kwargs):\n    return None\n```"


def bench(db: Path, *extra: str, run: Sequence[str] = RUN) -> subprocess.CompletedProcess[str]:
    """``convtui bench live RUN --db DB --json EXTRA``, in process."""
    return invoke("bench", "live", *run, "--db", str(db), "--json", *extra)


def benched(db: Path, *extra: str, run: Sequence[str] = RUN) -> Path:
    """``db`` once :func:`bench` has run into it and succeeded."""
    done = bench(db, *extra, run=run)
    assert done.returncode == 0, done.stdout + done.stderr
    return db


def report(db: Path) -> dict:
    """``convtui report --db DB --json``, without the files it names."""
    done = invoke("report", "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    data.pop("files")
    return data


def tables(db: Path) -> dict:
    """The report's tables, without what names the run (its id, its files)."""
    data = report(db)
    return {"columns": data["columns"], "max_turns": data["max_turns"]}


def recorded(db: Path) -> dict[tuple[str, str, int], str]:
    """(task, feedback, turn) -> the code recorded for it."""
    rows = fetchall(
        db,
        "SELECT s.task_id, s.feedback, t.idx, t.code FROM turn_texts t "
        "JOIN sessions s ON s.id = t.session_id",
    )
    return {(task, fb, idx): code for task, fb, idx, code in rows}


def histories(db: Path) -> dict[tuple[str, str, int], tuple]:
    """(task, feedback, turn) -> what the next prompt is built from: code and feedback."""
    rows = fetchall(
        db,
        "SELECT s.task_id, s.feedback, t.idx, t.code, t.compile_feedback, "
        "t.execution_feedback, t.verbal_feedback FROM turn_texts t "
        "JOIN sessions s ON s.id = t.session_id",
    )
    return {(task, fb, idx): tuple(rest) for task, fb, idx, *rest in rows}


def calls(db: Path, where: str = "1") -> list[tuple]:
    """(task, feedback, turn, purpose, status, messages, params) of every model call."""
    return fetchall(
        db,
        "SELECT s.task_id, s.feedback, m.turn_idx, m.purpose, m.status, m.messages_json, "
        "m.params_json FROM model_calls m JOIN sessions s ON s.id = m.session_id "
        f"WHERE {where} ORDER BY s.task_id, s.feedback, m.turn_idx, m.id",
    )


def calls_started(db: Path) -> int:
    """How many model calls the run in ``db`` has begun (0 before the file exists)."""
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            return conn.execute("SELECT COUNT(*) FROM model_calls").fetchone()[0]
    except sqlite3.OperationalError:  # the schema is not written yet
        return 0


def kill_at_random_points(
    argv: Sequence[str], db: Path, rng: random.Random, longest: Sequence[float]
) -> int:
    """Start ``argv`` (a run writing to ``db``) once per entry of ``longest`` and SIGKILL it
    at a random time, up to that many seconds, after it begins a model call beyond those
    ``db`` held when it started: not after a fixed time, which on a fast machine can outlast
    the whole run. Returns how many were killed (a run may finish first)."""
    kills = 0
    for wait_s in longest:
        process = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env()
        )
        seen = calls_started(db)
        deadline = time.monotonic() + 120
        while process.poll() is None and calls_started(db) <= seen and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(rng.uniform(0.0, wait_s))
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
            kills += 1
        process.wait(30)
    return kills


def assert_intact_and_no_call_paid_twice(db: Path) -> None:
    """``db`` passes SQLite's integrity check, and no call that had finished was paid for
    again (each request of a turn has at most one call not answered from the journal)."""
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        paid = conn.execute(
            "SELECT session_id, turn_idx, purpose, request_hash, COUNT(*) FROM model_calls "
            "WHERE status = 'ok' AND cache_hit = 0 GROUP BY 1, 2, 3, 4 HAVING COUNT(*) > 1"
        ).fetchall()
        assert paid == []
