"""A full ConvCodeWorld sweep through the harness: `convtui bench live` over every BigCodeBench
task, every feedback configuration Ω and 11 generations, with a scripted model and a scripted
simulator, so that what is measured is the harness and not a model.

The script (``mock:``) answers every turn with the same function, which raises at once: turn 0
as BigCodeBench's generation sends it back, each feedback turn in DSPy's format (ConvCodeWorld's
prompts), and the simulator with a sentence in DSPy's format too. Every session therefore plays
all its generations (none passes), each turn is executed (the executions cache answers a turn
whose code and tests it has run, as in any sweep that meets the same code twice), and every
model call is recorded in the journal as a real run's would be.

What it reports, per repeat and as the median of ``--repeats``:

- ``wall_s`` and ``turns``: the command's wall time (a new process: imports, opening the store
  and starting the sandboxes included) and the turns recorded.
- ``harness_cpu_ms_per_turn``: the CPU time of the bench process itself (user + system, from
  /proc, not its sandboxes) per turn: the harness's own cost, which a sandbox run or a model
  call does not inflate, as "wall minus sandbox and model time" would be on a machine where
  they overlap.
- ``harness_wall_ms_per_turn``: (wall − Σ sandbox run time / jobs) / turns: "wall minus
  sandbox and model time". The scripted model answers in the bench process itself, so its
  share is in there; its recorded latencies are not subtracted, as they overlap (eight
  sessions wait on it at once) and would sum past the wall.
- ``rss_mb`` at 10%, 50% and 100% of the turns: resident memory of the bench process alone
  (growth would be something the harness keeps per session done) and of its sandboxes; 100%
  is the last sample before the process ended (samples are a quarter second apart).
- ``db_bytes_per_turn``: the database file (after a checkpoint) over the turns.
- ``report_s`` and ``sessions_list_s``: `convtui report --json` and `convtui sessions list
  --json` on the finished database, medians of three.

With ``--kill`` one more run is killed with SIGKILL when about half of its turns are recorded,
then the same command runs again; the script checks that the second run played no turn twice
(every (session, turn) once), asked no model for a call the journal had (non-cached calls =
calls recorded before the kill + calls the rest needed) and ran no execution twice.

Run: python scripts/perf/sweep.py [--tasks 1140] [--feedback all] [--turns 10] [--repeats 3]
     [--protocol convcodeworld] [--kill] [--json out.json]
The numbers measured on this machine: docs/capacity.md ("A sweep through the harness").
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

RAISING = 'def task_func(*args, **kwargs):\n    raise ValueError("not written")\n'
PAGE = os.sysconf("SC_PAGE_SIZE")
TICKS = os.sysconf("SC_CLK_TCK")
MARKS = (0.1, 0.5, 1.0)


def write_script(path: Path, turns: int, delay_s: float = 0.0) -> str:
    """The scripted model and simulator: turn 0 as fenced code, each feedback turn's code and
    the simulator's words in DSPy's format (ConvCodeWorld's parser reads them; convtui's reads
    the fenced code)."""
    code = f" produce the generated_code. We fix the code.\n\nCode: ```python\n{RAISING}```"
    said = (
        " produce the user_feedback. We compare the code.\n\n"
        "User Feedback: The function raises at once; return the result instead."
    )
    rows = [{"purpose": "generate", "text": f"```python\n{RAISING}```"}]
    rows += [{"purpose": "generate", "text": code}] * turns
    rows += [{"purpose": "simulate", "text": said}] * turns
    text = "".join(json.dumps({**r, "delay_s": delay_s}) + "\n" for r in rows)
    path.write_text(text, encoding="utf-8")
    return f"mock:{path}"


def bench_argv(model: str, db: Path, args: argparse.Namespace) -> list[str]:
    argv = [sys.executable, "-m", "convtui", "bench", "live", "--model", model]
    argv += ["--feedback", args.feedback, "--turns", str(args.turns), "--protocol", args.protocol]
    argv += ["--ids", f"0-{args.tasks - 1}", "--db", str(db), "--json"]
    return argv


def turns_per_task(folder: Path, model: str, args: argparse.Namespace) -> float:
    """How many turns a task gives under these settings (Ω where the user stays silent on code
    that compiles end a session early), from a sweep of the first two tasks: it places the
    10%, 50% and 100% marks and the kill."""
    db = folder / "calibrate.db"
    small = argparse.Namespace(**{**vars(args), "tasks": 2})
    run_bench(bench_argv(model, db, small), db, Watch(1))
    return count_turns(db) / 2


def _stat(pid: int) -> list[bytes] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    return raw[raw.rfind(b")") + 2 :].split()


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of ``pid`` alone (not its children)."""
    fields = _stat(pid)
    return 0.0 if fields is None else (int(fields[11]) + int(fields[12])) / TICKS


def rss(pid: int) -> int:
    fields = _stat(pid)
    return 0 if fields is None else int(fields[21]) * PAGE


def descendants(root: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields is not None:
                parents[int(entry)] = int(fields[1])
    found, frontier = [], [root]
    while frontier:
        pid = frontier.pop()
        kids = [p for p, parent in parents.items() if parent == pid]
        found += kids
        frontier += kids
    return found


def count_turns(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return int(conn.execute("SELECT count(*) FROM turns").fetchone()[0])
    except sqlite3.OperationalError:  # the schema is not there yet
        return 0


@dataclass
class Watch:
    """What the running bench process used, sampled as its turns are recorded: memory at the
    first sample past 10% and 50% of the expected turns, and at the last sample before it
    ended (100%: the expected count is an estimate, so the end is taken as it comes)."""

    expected_turns: int
    rss_mb: dict[str, dict[str, float]] = field(default_factory=dict)
    cpu_s: float = 0.0
    last: dict[str, float] = field(default_factory=dict)

    def sample(self, pid: int, turns: int) -> None:
        harness = rss(pid)
        if not harness:  # it has ended
            return
        self.cpu_s = max(self.cpu_s, cpu_s(pid))
        self.last = {
            "harness": round(harness / 2**20, 1),
            "sandboxes": round(sum(rss(p) for p in descendants(pid)) / 2**20, 1),
            "turns": turns,
        }
        for mark in MARKS[:-1]:
            label = f"{round(mark * 100)}%"
            if label not in self.rss_mb and turns >= mark * self.expected_turns:
                self.rss_mb[label] = self.last

    def ended(self) -> None:
        self.rss_mb["100%"] = self.last


def run_bench(argv: list[str], db: Path, watch: Watch, kill_at: int | None = None) -> float:
    """Run ``argv`` to its end (or SIGKILL it once ``kill_at`` turns are recorded), sampling
    into ``watch``; its wall time, negative when it was killed."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    while process.poll() is None:
        turns = count_turns(db)
        watch.sample(process.pid, turns)
        if kill_at is not None and turns >= kill_at:
            process.send_signal(signal.SIGKILL)
            process.wait()
            return started - time.perf_counter()
        time.sleep(0.05 if kill_at is not None else 0.25)
    elapsed = time.perf_counter() - started
    _, err = process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"bench live failed ({process.returncode}): {err.decode().strip()}")
    watch.ended()
    return elapsed


def totals(db: Path) -> dict[str, float]:
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        one = lambda sql: conn.execute(sql).fetchone()[0] or 0  # noqa: E731
        return {
            "turns": one("SELECT count(*) FROM turns"),
            "distinct_turns": one(
                "SELECT count(*) FROM (SELECT DISTINCT session_id, idx FROM turns)"
            ),
            "sessions": one("SELECT count(*) FROM sessions"),
            "model_calls": one("SELECT count(*) FROM model_calls WHERE cache_hit = 0"),
            "model_s": one("SELECT sum(latency_s) FROM model_calls WHERE cache_hit = 0"),
            "executions": one("SELECT count(*) FROM executions"),
            "sandbox_s": one("SELECT sum(duration_s) FROM executions"),
            "db_bytes": db.stat().st_size,
        }


def timed(argv: list[str], repeats: int = 3) -> float:
    walls = []
    for _ in range(repeats):
        started = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        walls.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv[3:5])} failed: {done.stderr.strip()}")
    return statistics.median(walls)


def one_sweep(folder: Path, model: str, args: argparse.Namespace, k: int, expected: int) -> dict:
    db = folder / f"sweep-{k}.db"
    watch = Watch(expected)
    wall = run_bench(bench_argv(model, db, args), db, watch)
    got = totals(db)
    turns = got["turns"]
    jobs = os.cpu_count() or 1
    harness_wall = wall - got["sandbox_s"] / jobs
    convtui = [sys.executable, "-m", "convtui"]
    return {
        "wall_s": round(wall, 2),
        **{
            key: round(value, 2) if isinstance(value, float) else value
            for key, value in got.items()
        },
        "harness_cpu_ms_per_turn": round(1000 * watch.cpu_s / turns, 3),
        "harness_wall_ms_per_turn": round(1000 * harness_wall / turns, 3),
        "rss_mb": watch.rss_mb,
        "db_bytes_per_turn": round(got["db_bytes"] / turns),
        "report_s": round(timed([*convtui, "report", "--db", str(db), "--json"]), 3),
        "sessions_list_s": round(
            timed([*convtui, "sessions", "list", "--db", str(db), "--json"]), 3
        ),
    }


def killed_and_resumed(
    folder: Path, model: str, args: argparse.Namespace, expected: int, whole: int | None
) -> dict:
    """SIGKILL a sweep halfway, run the same command again, and check that nothing was done
    twice: no turn recorded twice, no model call asked again that had answered before the kill
    (same session, turn, purpose and request), no execution run again whose result was cached
    before the kill."""
    db = folder / "killed.db"
    argv = bench_argv(model, db, args)
    killed = run_bench(argv, db, Watch(expected), kill_at=expected // 2) < 0
    with sqlite3.connect(db) as conn:
        calls_before = conn.execute("SELECT max(rowid) FROM model_calls").fetchone()[0] or 0
        runs_before = conn.execute("SELECT max(id) FROM executions").fetchone()[0] or 0
    at_kill = count_turns(db)
    run_bench(argv, db, Watch(expected))
    with sqlite3.connect(db) as conn:
        one = lambda sql, *p: conn.execute(sql, p).fetchone()[0] or 0  # noqa: E731
        asked_again = one(
            "SELECT count(*) FROM model_calls n WHERE n.rowid > ? AND n.cache_hit = 0 AND EXISTS "
            "(SELECT 1 FROM model_calls o WHERE o.rowid <= ? AND o.status = 'ok' "
            "AND o.session_id = n.session_id AND o.turn_idx = n.turn_idx "
            "AND o.purpose = n.purpose AND o.request_hash = n.request_hash)",
            calls_before,
            calls_before,
        )
        run_again = one(
            "SELECT count(*) FROM executions n WHERE n.id > ? AND n.cache_key IN "
            "(SELECT cache_key FROM executions WHERE id <= ? AND in_cache = 1)",
            runs_before,
            runs_before,
        )
    after = totals(db)
    checks: dict[str, int | bool] = {
        "killed": killed,
        "turns_at_kill": at_kill,
        "turns_after": int(after["turns"]),
        "expected_turns": expected,
        "calls_asked_again": asked_again,
        "executions_run_again": run_again,
    }
    # As many turns as the sweep run whole recorded, where one ran; else the estimate.
    checks["ok"] = (
        killed
        and after["turns"] == after["distinct_turns"] == (whole or expected)
        and asked_again == 0
        and run_again == 0
    )
    return checks


def summary(runs: list[dict]) -> dict:
    keys = ("wall_s", "harness_cpu_ms_per_turn", "harness_wall_ms_per_turn", "db_bytes_per_turn",
            "report_s", "sessions_list_s")  # fmt: skip
    return {key: statistics.median(r[key] for r in runs) for key in keys}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=1140, help="first N BigCodeBench tasks")
    parser.add_argument("--feedback", default="all", help="one Ω, or all for the nine")
    parser.add_argument("--turns", type=int, default=10, help="feedback turns after turn 0")
    parser.add_argument("--protocol", default="convcodeworld", choices=("convcodeworld", "convtui"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--kill", action="store_true", help="also a run killed halfway, resumed")
    parser.add_argument(
        "--reply-delay",
        type=float,
        default=0.0,
        help="seconds each scripted reply takes (a tiny sweep needs it for the kill to land)",
    )
    parser.add_argument("--json", type=Path, default=None, help="write the results here too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="convtui-sweep-") as tmp:
        folder = Path(tmp)
        model = write_script(folder / "model.jsonl", args.turns, args.reply_delay)
        expected = round(turns_per_task(folder, model, args) * args.tasks)
        runs = []
        for k in range(args.repeats):
            runs.append(one_sweep(folder, model, args, k, expected))
            print(json.dumps({"repeat": k + 1, **runs[-1]}), flush=True)
        result: dict = {
            "tasks": args.tasks,
            "feedback": args.feedback,
            "generations_per_session": args.turns + 1,
            "expected_turns": expected,
            "protocol": args.protocol,
            "cpus": os.cpu_count(),
            "runs": runs,
            "median": summary(runs),
        }
        if args.kill:
            whole = int(runs[0]["turns"]) if runs else None
            result["kill_and_resume"] = killed_and_resumed(folder, model, args, expected, whole)
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    resumed = result.get("kill_and_resume")
    return 1 if resumed is not None and not resumed["ok"] else 0


if __name__ == "__main__":
    sys.exit(main())
