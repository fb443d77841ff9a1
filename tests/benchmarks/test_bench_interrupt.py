"""Ctrl+C in ``convtui bench live``: the command says what the database kept and the command
that goes on, exits 130, and that command finishes the run without redoing a turn. A real
process, since the signal is the point; the scripted model (``mock:``, its replies slowed so
the signal lands mid-run) keeps the verdicts machine-independent."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from support.data import DATA, needs_bigcodebench

pytestmark = needs_bigcodebench
FAILS = "```python\ndef task_func(*args, **kwargs):\n    return None\n```"


def _turns(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute("SELECT count(*) FROM turns").fetchone()[0]
    except sqlite3.OperationalError:  # not migrated yet
        return 0


def test_ctrl_c_says_what_was_kept_and_the_command_that_goes_on(tmp_path) -> None:
    script = tmp_path / "slow.jsonl"
    rows = [{"purpose": "generate", "text": FAILS, "delay_s": 0.5}] * 12
    script.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    db = tmp_path / "int.db"
    args = [
        "bench", "live", "--model", f"mock:{script}", "--ids", "2,3", "--turns", "2",
        "--feedback", "CF,EF:full", "--protocol", "convtui", "--db", str(db),
        "--concurrency", "1",
    ]  # fmt: skip
    environ = {**os.environ, "CONVTUI_DATA_DIR": str(DATA), "CI": "true"}
    running = subprocess.Popen(
        [sys.executable, "-m", "convtui", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environ,
        # Ctrl+C's default action, whatever this process inherited: a shell's background job
        # (CI's, say) starts with SIGINT ignored, and Python then never raises KeyboardInterrupt.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 120
    while _turns(db) < 1 and time.monotonic() < deadline and running.poll() is None:
        time.sleep(0.1)
    assert running.poll() is None, "the run ended before it could be interrupted"
    running.send_signal(signal.SIGINT)
    _, err = running.communicate(timeout=120)
    assert running.returncode == 130, err
    kept, again = err.strip().splitlines()[-2:]
    with sqlite3.connect(db) as conn:
        (run_id,) = conn.execute("SELECT id FROM runs").fetchone()
        recorded = conn.execute("SELECT count(*) FROM turns").fetchone()[0]
    assert kept.startswith(f"interrupted: kept run {run_id} in {db}: ")
    assert f"{recorded} turn{'s' * (recorded != 1)} recorded" in kept
    assert again == "go on where it stopped: convtui " + " ".join(args)
    done = subprocess.run(
        [sys.executable, "-m", "convtui", *args, "--json"],
        capture_output=True,
        text=True,
        env=environ,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["resumed"] is True
    with sqlite3.connect(db) as conn:
        # Two tasks, turns 0 to 2 each, none twice.
        assert conn.execute(
            "SELECT count(*), count(DISTINCT session_id || ':' || idx) FROM turns"
        ).fetchone() == (6, 6)
