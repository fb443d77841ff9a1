"""Progress where no bar can be drawn: ``convtui bench live`` with its output piped (a file, a
CI log) prints a plain line now and then, as pip and pytest do, rather than nothing for
minutes. A real process, since a pipe for stderr is the point; the scripted model (``mock:``,
its replies slowed) makes the run last a few of the tiny intervals the test asks for."""

from __future__ import annotations

import json
import re
import subprocess

from support.cli import env, run_process
from support.data import needs_bigcodebench

pytestmark = needs_bigcodebench
FAILS = "```python\ndef task_func(*args, **kwargs):\n    return None\n```"
LINE = re.compile(r"^(\d+)/2 sessions done, (\d+) solved, elapsed (\d+)s · ", re.MULTILINE)


def _bench(tmp_path, every: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "slow.jsonl"
    rows = [{"purpose": "generate", "text": FAILS, "delay_s": 0.4}] * 4
    script.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    args = [
        "bench", "live", "--model", f"mock:{script}", "--ids", "2,3", "--turns", "1",
        "--feedback", "CF,EF:full", "--protocol", "convtui", "--db", str(tmp_path / "p.db"),
        "--concurrency", "1",
    ]  # fmt: skip
    return run_process(*args, environ=env(CONVTUI_PROGRESS_EVERY=every), timeout=600)


def test_a_piped_bench_run_prints_a_progress_line_now_and_then(tmp_path) -> None:
    done = _bench(tmp_path, "0.1")
    assert done.returncode == 0, done.stderr
    lines = LINE.findall(done.stderr)
    assert len(lines) >= 3, done.stderr
    finished = [int(n) for n, _, _ in lines]
    assert finished == sorted(finished) and finished[0] < 2, done.stderr
    assert {solved for _, solved, _ in lines} == {"0"}  # the scripted code never passes


def test_piped_progress_says_what_is_in_progress_now(tmp_path) -> None:
    """The lines name the turn being written now, not the last one finished: before, a run
    printed "BigCodeBench/2 ... turn 0 ✗" again and again while turn 1 was being played."""
    done = _bench(tmp_path, "0.1")
    assert done.returncode == 0, done.stderr
    now = re.findall(r"· now: (BigCodeBench/\d) CF,EF:full turn (\d)", done.stderr)
    assert ("BigCodeBench/2", "1") in now and ("BigCodeBench/3", "1") in now, done.stderr
    # One session at a time (--concurrency 1): the tasks follow in order, each turn once on.
    order = [(task, int(turn)) for task, turn in now]
    assert order == sorted(order), done.stderr


def test_no_progress_lines_when_turned_off(tmp_path) -> None:
    done = _bench(tmp_path, "0")
    assert done.returncode == 0, done.stderr
    assert not LINE.search(done.stderr), done.stderr


def test_elapsed_time_reads_as_short_as_the_span_allows() -> None:
    from convtui.benchmarks.progress import elapsed_text

    assert elapsed_text(45.9) == "45s"
    assert elapsed_text(80) == "1m20s"
    assert elapsed_text(2 * 3600 + 5 * 60) == "2h05m00s"
