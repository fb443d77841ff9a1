"""`convtui compare --plan`: what a planned comparison can detect, with no database; its
numbers are the statistics module's formulas, and 2 points at a 50% rate need 4,906 tasks
(worked by hand: (1.95996 + 0.84162)² · 0.5 / 0.02² = 4,905.9)."""

from __future__ import annotations

import json

import pytest
from support.compare import compare

from convtui.core.metrics.stats import (
    binary_difference_sd,
    detectable_difference,
    units_needed,
)


def test_plan_numbers_are_the_power_formulas() -> None:
    done = compare(
        "--plan", "--tasks", "40", "--baseline", "0.3", "--correlation", "0.5",
        "--difference", "0.02", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    sd = binary_difference_sd(0.3, 0.5)
    assert data["sd"] == sd
    assert data["detectable_difference"] == detectable_difference(40, sd)
    assert data["tasks_needed"] == units_needed(0.02, sd)
    assert (data["alpha"], data["power"]) == (0.05, 0.8)


def test_two_points_at_a_fifty_percent_rate_need_4906_tasks_said_in_words() -> None:
    done = compare("--plan", "--difference", "0.02", "--tasks", "1140")
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert "a difference of 2 points needs 4,906 tasks at 80% power" in text
    detectable = 100 * detectable_difference(1140, binary_difference_sd(0.5, 0.5))
    assert f"1,140 tasks detect a difference of {detectable:.1f} points" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--plan"], "--plan needs --tasks"),
        (["--plan", "--tasks", "40", "--baseline", "1"], "leaves no task whose outcome can differ"),
        (["--plan", "--difference", "0"], "must be above 0"),
        (["--plan", "--tasks", "0"], "--tasks"),
    ],
)
def test_a_plan_it_cannot_make_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    done = compare(*args)
    assert done.returncode == 2, done.stdout + done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: ") and message in line, line
