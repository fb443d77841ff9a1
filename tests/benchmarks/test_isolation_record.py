"""The isolation in force travels with a benchmark's results: ``bench live`` records its label
in the run's config and warns on stderr when the level changes verdicts; ``report`` repeats
that warning above the tables of such runs. The command in process, the real sandbox and a
real SQLite file; the model is a script (core/models/mock.py) so nothing depends on what a
model writes."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest
from support.cli import invoke
from support.data import needs_bigcodebench

from convtui.core.execution.isolation import detect, namespaces_problem, verdict_warning

pytestmark = needs_bigcodebench
FAILS = "```python\ndef task_func(*args, **kwargs):\n    return None\n```"


def convtui(*args: str) -> subprocess.CompletedProcess[str]:
    return invoke(*args, environ={"COLUMNS": "200"})


@pytest.fixture
def model(tmp_path: Path) -> str:
    script = tmp_path / "fails.jsonl"
    script.write_text(json.dumps({"purpose": "generate", "text": FAILS}) + "\n")
    return f"mock:{script}"


def bench(db: Path, model: str, isolation: str) -> str:
    """Play BigCodeBench/30 for one turn; the run id."""
    done = convtui(
        "bench", "live", "--model", model, "--ids", "30", "--turns", "0",
        "--isolation", isolation, "--db", str(db), "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    warnings = [ln for ln in done.stderr.splitlines() if ln.startswith("warning: ")]
    expected = verdict_warning(detect(isolation).label)
    assert warnings == ([f"warning: {expected}"] if expected else []), done.stderr
    return json.loads(done.stdout)["run_id"]


def recorded_isolation(db: Path, run_id: str) -> str:
    with sqlite3.connect(db) as conn:
        (config,) = conn.execute("SELECT config_json FROM runs WHERE id = ?", (run_id,)).fetchone()
    return json.loads(config)["isolation"]


def test_a_run_under_landlock_records_it_and_its_report_warns(tmp_path, model):
    db = tmp_path / "results.db"
    run_id = bench(db, model, "landlock")
    assert recorded_isolation(db, run_id) == detect("landlock").label
    done = convtui("report", "--db", str(db))
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first == f"warning: run {run_id}: {verdict_warning('landlock')}"
    data = json.loads(convtui("report", "--db", str(db), "--json").stdout)
    assert data["isolation"] == {run_id: detect("landlock").label}
    assert data["warnings"] == [first.removeprefix("warning: ")]


@pytest.mark.skipif(namespaces_problem() is not None, reason="namespaces unavailable")
def test_a_later_run_under_namespaces_is_a_new_run_and_clears_the_warning(tmp_path, model):
    db = tmp_path / "results.db"
    confined = bench(db, model, "landlock")
    faithful = bench(db, model, "namespaces")
    assert faithful != confined  # a different isolation never resumes the other's run
    assert recorded_isolation(db, faithful) == detect("namespaces").label
    # The newer run holds every task, so the tables come from it alone: nothing to warn of.
    data = json.loads(convtui("report", "--db", str(db), "--json").stdout)
    assert data["isolation"] == {faithful: detect("namespaces").label}
    assert data["warnings"] == []
    only_old = json.loads(convtui("report", "--db", str(db), "--run", confined, "--json").stdout)
    assert len(only_old["warnings"]) == 1
