"""Harness time of a static replay (`convtui bench static`) whose model calls and executions
are all cached: what re-running a ConvCodeBench replay costs when nothing needs a model or a
sandbox run. Target: 1,140 tasks x 11 turns in under 2 minutes on 2 cores, about
10 ms a turn.

1. A synthetic reference journal: one live run of a made-up reference model over every
   BigCodeBench task (or the first --tasks), 11 turns each (turn 0 and 10 feedback turns),
   every turn failing one test with execution feedback and a novice's words, written through
   the store's own API (not timed).
2. A cold replay with a scripted target (`mock:`, the same raising function at every turn, so
   each task's code runs once in the sandbox and later turns hit the execution cache): fills
   the call journal and the execution cache. Timed and reported, not the target.
3. --repeats warm replays: the static run's turns are deleted and its sessions set back to
   planned, then the same command runs again; every model call is answered by the journal and
   every execution by the cache, which the script checks (no new model_calls or executions
   row). Each is timed as the command's wall time (a new process: imports, opening the
   store, starting the executor included) and reported with its median and ms per turn.

Run: python scripts/perf/replay_speed.py [--tasks 1140] [--repeats 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from convtui.benchmarks.runs.lifecycle import NewRun, open_run
from convtui.core.catalog.loaders import load_catalog
from convtui.core.execution.types import ExecResult, TestOutcome
from convtui.core.settings.config import SessionStatus
from convtui.core.settings.omega import FeedbackConfig
from convtui.core.settings.protocol import build_config
from convtui.core.turns.record import Turn
from convtui.sessions import Store

TURNS = 11
MODEL = "synthetic:reference"
TARGET_CODE = 'def task_func(*args, **kwargs):\n    raise ValueError("not written")\n'


def reference_turn(task_id: str, idx: int) -> Turn:
    traceback = (
        "Traceback (most recent call last):\n"
        f'  File "__test__.py", line {10 + idx}, in test_case_1\n'
        f"AssertionError: {idx} != {idx + 1}\n"
    )
    result = ExecResult(
        status="fail",
        tests=(TestOutcome("test_case_1", "fail", 0.01, traceback),),
        duration_s=0.05,
        isolation="bwrap",
        detail="1 test failed",
    )
    code = f"def task_func(*args, **kwargs):\n    return {idx}  # {task_id}\n"
    return Turn(
        idx=idx,
        reply=f"```python\n{code}```",
        code=code,
        compiled=True,
        compile_feedback="No syntax errors",
        execution=result,
        execution_feedback=f"TEST_CASE_1\n{traceback}\n",
        verbal_feedback=f"Turn {idx}: the result should be {idx + 1}, check the loop bounds.",
        feedback_source=f"simulator:novice:{MODEL}",
    )


def write_reference(db: Path, task_ids: list[str]) -> None:
    config = build_config(
        "convtui",
        model=MODEL,
        feedback=FeedbackConfig("full", "novice"),
        simulator=MODEL,
        turns=TURNS - 1,
        context="markov",
    )
    with Store.open(db) as store:
        new = NewRun(config, "synthetic", "bigcodebench", "live", task_ids=task_ids)
        run_id = open_run(store, new).run_id
        for row in store.run_sessions(run_id):
            for idx in range(TURNS):
                status: SessionStatus = "exhausted" if idx == TURNS - 1 else "running"
                store.save_turn(row.id, reference_turn(row.task_id, idx), status)
        store.finish_run(run_id, "done")


def target_script(path: Path) -> str:
    row = {"purpose": "generate", "text": f"```python\n{TARGET_CODE}```"}
    path.write_text((json.dumps(row) + "\n") * TURNS, encoding="utf-8")
    return f"mock:{path}"


def replay(reference: Path, db: Path, model: str) -> float:
    argv = [sys.executable, "-m", "convtui", "bench", "static", "--logs", str(reference)]
    argv += ["--db", str(db), "--model", model, "--json"]
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"bench static failed ({done.returncode}): {done.stderr.strip()}")
    return elapsed


def counts(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as conn:
        q = (
            "SELECT count(*) FROM turns t JOIN sessions s ON s.id = t.session_id "
            "JOIN runs r ON r.id = s.run_id WHERE r.kind = 'static'"
        )
        return {
            # A call the journal answers is recorded too, as a cache hit naming the one reused.
            "model_calls": conn.execute(
                "SELECT count(*) FROM model_calls WHERE cache_hit = 0"
            ).fetchone()[0],
            "executions": conn.execute("SELECT count(*) FROM executions").fetchone()[0],
            "static_turns": conn.execute(q).fetchone()[0],
        }


def reset_static(db: Path) -> None:
    """Forget the replay's turns, keep its calls and executions: the next run replays."""
    with sqlite3.connect(db) as conn:
        static = (
            "SELECT s.id FROM sessions s JOIN runs r ON r.id = s.run_id WHERE r.kind = 'static'"
        )
        conn.execute(f"DELETE FROM turns WHERE session_id IN ({static})")
        conn.execute(
            f"UPDATE sessions SET status = 'planned', turns_done = 0, first_pass_turn = NULL "
            f"WHERE id IN ({static})"
        )
        conn.execute(
            "UPDATE runs SET status = 'interrupted', finished_utc = NULL WHERE kind = 'static'"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=1140, help="first N BigCodeBench tasks")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None, help="write the results here too")
    args = parser.parse_args()
    task_ids = load_catalog("bigcodebench").ids[: args.tasks]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        reference, db = folder / "reference.db", folder / "replay.db"
        started = time.perf_counter()
        write_reference(reference, task_ids)
        print(
            f"reference: {len(task_ids)} tasks x {TURNS} turns in "
            f"{time.perf_counter() - started:.1f} s",
            flush=True,
        )
        model = target_script(folder / "target.jsonl")
        cold = replay(reference, db, model)
        filled = counts(db)
        print(f"cold replay (fills the caches): {cold:.1f} s, {filled}", flush=True)
        warm = []
        for i in range(args.repeats):
            reset_static(db)
            elapsed = replay(reference, db, model)
            after = counts(db)
            if (after["model_calls"], after["executions"]) != (
                filled["model_calls"],
                filled["executions"],
            ):
                raise SystemExit(f"warm replay {i + 1} was not all cached: {after} vs {filled}")
            if after["static_turns"] != filled["static_turns"]:
                raise SystemExit(f"warm replay {i + 1} played {after} turns, not {filled}")
            warm.append(elapsed)
            print(f"warm replay {i + 1}: {elapsed:.2f} s", flush=True)
    turns = filled["static_turns"]
    median = statistics.median(warm)
    result = {
        "tasks": len(task_ids),
        "turns_per_task": TURNS,
        "replayed_turns": turns,
        "cold_s": round(cold, 2),
        "warm_s": [round(w, 2) for w in warm],
        "warm_median_s": round(median, 2),
        "ms_per_turn": round(1000 * median / turns, 2),
        "target_s": 120.0 * len(task_ids) / 1140,
        "cpus": os.cpu_count(),
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
