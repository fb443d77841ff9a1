"""scripts/perf/sweep.py on a tiny sweep (two tasks, one Ω, two feedback turns) through the
real `convtui bench live`, its sandbox and store, with the script's scripted model: every
measure is there, the memory marks are taken in order, and the run killed with SIGKILL halfway
then run again records every turn once and asks and runs nothing twice. Timings are only
checked to be numbers, never bounded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support.cli import env
from support.data import needs_bigcodebench

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "perf" / "sweep.py"

pytestmark = needs_bigcodebench


def test_a_tiny_sweep_killed_and_resumed(tmp_path: Path) -> None:
    out = tmp_path / "sweep.json"
    argv = [sys.executable, str(SCRIPT), "--tasks", "2", "--feedback", "CF,EF:full,VF:novice"]
    argv += ["--turns", "2", "--repeats", "1", "--kill", "--json", str(out)]
    # Each scripted reply takes a moment, so that the kill lands mid-run.
    argv += ["--reply-delay", "0.3"]
    done = subprocess.run(argv, capture_output=True, text=True, env=env(), timeout=240)
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    [run] = result["runs"]
    # Two tasks, one Ω, turn 0 and two feedback turns, none passing: 6 turns.
    assert result["expected_turns"] == 6
    assert run["turns"] == run["distinct_turns"] == 6
    assert run["sessions"] == 2
    assert list(run["rss_mb"]) == ["10%", "50%", "100%"]
    marks = [run["rss_mb"][m]["turns"] for m in ("10%", "50%", "100%")]
    # 100% is the last sample before the process ended (a quarter second apart at most).
    assert marks == sorted(marks) and 3 <= marks[-1] <= 6
    assert all(run["rss_mb"][m]["harness"] > 0 for m in run["rss_mb"])
    for key in ("harness_cpu_ms_per_turn", "db_bytes_per_turn", "report_s", "sessions_list_s"):
        assert run[key] > 0, key
    resumed = result["kill_and_resume"]
    assert resumed["ok"] and resumed["killed"], resumed
    assert 3 <= resumed["turns_at_kill"] < 6
    assert resumed["turns_after"] == 6
    assert (resumed["calls_asked_again"], resumed["executions_run_again"]) == (0, 0)
