"""The tmux smoke test: scripts/tui_smoke.sh drives the real app through
`python -m convtui session` in a 120x40 tmux pane, sends one piece of human feedback, quits
with ctrl+q and checks the database. It covers what Pilot cannot: the typer entry point, the
real terminal driver, startup time and a clean exit.

Scripted: the model is ``mock:FILE`` (turn 0 fails one test, turn 1 another), so the screens
the script waits for come on every machine; the embedded model's own turns are covered by
tests/tui/test_session_pilot.py and tests/benchmarks/test_live.py."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.data import DATA
from tui_harness import ASCENDING, WRONG, write_script

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "tui_smoke.sh"
DEADLINE_S = 120  # per wait inside the script; a normal run takes ~20 s in all
TIMEOUT_S = 560  # the whole script, under pytest's 600 s


pytestmark = [
    pytest.mark.tmux,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.skipif(shutil.which("bash") is None, reason="scripts/tui_smoke.sh needs bash"),
    pytest.mark.skipif(
        not (DATA / "BigCodeBench-v0.1.0.jsonl.gz").exists(),
        reason=f"no BigCodeBench data in {DATA}",
    ),
]


def test_session_takes_human_feedback_in_a_real_terminal(tmp_path: Path) -> None:
    model = write_script(tmp_path / "model.jsonl", [WRONG, ASCENDING])
    # The pane decides the app's size: a COLUMNS or LINES from here (pytest-xdist's workers
    # set 80x24) would make Textual draw at that size instead of the pane's 120x40.
    inherited = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env = {
        **inherited,
        "CONVTUI_DATA_DIR": str(DATA),
        "CONVTUI": f"{sys.executable} -m convtui",
        "PYTHON": sys.executable,
        "DEADLINE_S": str(DEADLINE_S),
    }
    out = tmp_path / "smoke"
    proc = subprocess.Popen(
        ["bash", str(SCRIPT), "--model", model, "--out", str(out)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        output, _ = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)  # lets the script's trap kill its tmux server
        output, _ = proc.communicate(timeout=30)
        pytest.fail(f"scripts/tui_smoke.sh ran past {TIMEOUT_S}s:\n{output}")

    assert proc.returncode == 0, f"scripts/tui_smoke.sh failed:\n{output}"
    screen_1 = (out / "screen-1.txt").read_text(encoding="utf-8")
    screen_2 = (out / "screen-2.txt").read_text(encoding="utf-8")
    assert "waiting for your feedback" in screen_1 and "T0 ✗ 4/5" in screen_1, screen_1
    assert "T0 ✗ 4/5 · human" in screen_2 and "T1 ✗ 4/5" in screen_2, screen_2
    assert (out / "exit.txt").read_text().strip() == "exit=0"
