"""How long `convtui report` with intervals and `convtui compare` of two models take on a full
ConvCodeWorld sweep: 1,140 BigCodeBench tasks × the 9 feedback configurations Ω × 11
generations (issue 47's target: each under 5 s on the project's 2-core machine, and report's
time without intervals unchanged).

The database is made by the sweep script (scripts/perf/sweep.py: `bench live` with a scripted
model whose every turn raises, so no session passes), then copied under a second model's name
in SQL (a second run, its sessions and turns, the executions shared), and every turn's verdict
rewritten by a seeded rule so that both models solve a realistic share of tasks at varied
turns and differ on some: a task's difficulty u is drawn from its id; model A
(``mock:first-model``) solves it when u < 0.35, B (``mock:second-model``) when u < 0.38, at a
turn drawn from the task, Ω and model. The verdicts are data for the statistics to chew on,
not a benchmark result. Making it takes a sweep (about 10 minutes
here); `--db PATH` keeps it for the next run.

Timed, each a new process, medians of ``--repeats``, taken in turns (one of each, then again)
so that a slower minute of the machine falls on all of them alike:

- ``report``: `convtui report --db DB --json --out TMP` (intervals on, the default 2,000
  resamples);
- ``report_no_intervals``: the same with `--no-intervals`;
- ``compare``: `convtui compare --db DB --by model --json` (both models, paired on task and Ω);
- ``report_baseline``: with ``--baseline-python PY``, `report --json` run by another
  interpreter, one where an earlier commit of convtui is installed (before intervals existed):
  ``report_no_intervals`` against it is "report's time without intervals unchanged". Make one
  with `git worktree add /tmp/base COMMIT && python3 -m venv /tmp/base/.venv &&
  /tmp/base/.venv/bin/pip install -e "/tmp/base[exec]"` (its llama.cpp is not needed).

Run: python scripts/perf/compare_speed.py [--db sweep2.db] [--repeats 3] [--tasks 1140]
     [--baseline-python /tmp/base/.venv/bin/python] [--json out.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sweep import Watch, bench_argv, run_bench, write_script

FIRST_MODEL = "mock:first-model"
SECOND_MODEL = "mock:second-model"


def make_database(db: Path, tasks: int) -> None:
    """The sweep's database for one scripted model, then a second model's copy, verdicts
    rewritten (see the module's docstring)."""
    with tempfile.TemporaryDirectory(prefix="convtui-compare-speed-") as tmp:
        args = argparse.Namespace(
            tasks=tasks, feedback="all", turns=10, protocol="convcodeworld", reply_delay=0.0
        )
        model = write_script(Path(tmp) / "model.jsonl", args.turns)
        print(f"making {db}: a sweep of {tasks} tasks x 9 settings (minutes)", file=sys.stderr)
        run_bench(bench_argv(model, db, args), db, Watch(1))
    with sqlite3.connect(db) as conn:
        for table in ("runs", "sessions"):  # the script's temporary path is no name to read
            conn.execute(f"UPDATE {table} SET model = ?", (FIRST_MODEL,))
        copy_run_as(conn, SECOND_MODEL)
        rewrite_verdicts(conn)


def copy_run_as(conn: sqlite3.Connection, model: str) -> None:
    """A second run of the same sessions and turns under ``model`` (ids suffixed ``B``)."""
    (run_id,) = conn.execute("SELECT id FROM runs ORDER BY id LIMIT 1").fetchone()
    _copy_rows(conn, "runs", "id = ?", (run_id,), {"id": "id || 'B'", "model": "?"}, (model,))
    _copy_rows(
        conn,
        "sessions",
        "run_id = ?",
        (run_id,),
        {"id": "id || 'B'", "run_id": "run_id || 'B'", "model": "?"},
        (model,),
    )
    _copy_rows(
        conn,
        "turns",
        "session_id IN (SELECT id FROM sessions WHERE run_id = ?)",
        (run_id,),
        {"session_id": "session_id || 'B'", "generate_call_id": "NULL", "simulate_call_id": "NULL"},
        (),
    )


def _copy_rows(
    conn: sqlite3.Connection,
    table: str,
    where: str,
    where_params: tuple,
    changed: dict[str, str],
    changed_params: tuple,
) -> None:
    columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
    chosen = ", ".join(changed.get(c, c) for c in columns)
    conn.execute(
        f"INSERT INTO {table} ({', '.join(columns)}) SELECT {chosen} FROM {table} WHERE {where}",
        (*changed_params, *where_params),
    )


def _unit(*parts: str) -> float:
    digest = hashlib.sha256("\0".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def rewrite_verdicts(conn: sqlite3.Connection) -> None:
    """Each session passes from a turn drawn for it on, or never (see the docstring)."""
    rows = conn.execute("SELECT id, task_id, feedback, model FROM sessions").fetchall()
    updates = []
    for session_id, task_id, feedback, model in rows:
        second = model == SECOND_MODEL
        solved = _unit(task_id) < (0.38 if second else 0.35)
        first = int(11 * _unit(task_id, feedback, model)) if solved else 99
        updates.append((first, session_id))
    conn.executemany("UPDATE turns SET passed = (idx >= ?) WHERE session_id = ?", updates)


def timed_round(commands: dict[str, list[str]], walls: dict[str, list[float]], cwd: Path) -> None:
    """One run of each command, from ``cwd``: not a checkout, whose own ``convtui`` folder
    ``python -m`` would import instead of the interpreter's."""
    for name, argv in commands.items():
        started = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=cwd)
        walls[name].append(time.perf_counter() - started)
        if done.returncode != 0:
            raise SystemExit(f"{name} failed ({done.returncode}): {done.stderr.strip()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, default=None, help="keep (or reuse) the database here")
    parser.add_argument("--tasks", type=int, default=1140, help="first N BigCodeBench tasks")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline-python", default=None, help="an earlier commit's interpreter")
    parser.add_argument("--json", type=Path, default=None, help="write the results here too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="convtui-compare-speed-") as tmp:
        db = args.db or Path(tmp) / "sweep2.db"
        if not db.exists():
            make_database(db, args.tasks)
        out = Path(tmp) / "out"
        convtui = [sys.executable, "-m", "convtui"]
        report = ["report", "--db", str(db), "--json", "--out", str(out)]
        commands = {
            "report": [*convtui, *report],
            "report_no_intervals": [*convtui, *report, "--no-intervals"],
            "compare": [*convtui, "compare", "--db", str(db), "--by", "model", "--json"],
        }
        if args.baseline_python:
            commands["report_baseline"] = [args.baseline_python, "-m", "convtui", *report]
        walls: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.repeats):
            timed_round(commands, walls, Path(tmp))
        with sqlite3.connect(db) as conn:
            sessions, turns = conn.execute(
                "SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM turns)"
            ).fetchone()
    result = {
        "sessions": sessions,
        "turns": turns,
        "repeats": args.repeats,
        "walls_s": {k: [round(w, 3) for w in v] for k, v in walls.items()},
        "median_s": {k: round(statistics.median(v), 3) for k, v in walls.items()},
    }
    if "report_baseline" in walls:
        result["no_intervals_over_baseline"] = round(
            statistics.median(walls["report_no_intervals"])
            / statistics.median(walls["report_baseline"]),
            3,
        )
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
