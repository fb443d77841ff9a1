"""What must stay readable whatever the terminal's size (issue 34, point 10): at 80x24 the
header keeps the session id and Ω and the status line says all it says (each takes a second
line rather than cut); at 120x40 the task's code header is in view inside the task pane, not
behind its scroll; at 80x24 its signature line still is.

Pilot on the scripted ``mock:`` model (its spec is a long path in tmp_path: a long model name
is the case to fit). Read from the screen as drawn, row by row."""

from __future__ import annotations

import pytest
from scripted import ScriptedApps, run, screen_of
from textual.pilot import Pilot
from tui_harness import HEADER, WRONG, awaiting_feedback, fenced, screen_text

from convtui.tui.widgets.status_line import StatusLine

pytestmark = pytest.mark.slow


def rows_of(pilot: Pilot, selector: str) -> list[str]:
    """The drawn rows inside the widget ``selector`` (its border included)."""
    region = screen_of(pilot).query_one(selector).region
    drawn = screen_text(pilot.app)
    return [row[region.x : region.right] for row in drawn[region.y : region.bottom]]


def test_at_80x24_the_header_and_the_status_line_are_whole(scripted: ScriptedApps) -> None:
    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        await pilot.pause()
        status = screen.query_one(StatusLine)
        # A part wider than the screen (the long model spec) goes on over the next row.
        shown = "".join(row.strip() for row in rows_of(pilot, "#status-line"))
        for part in status.parts():
            assert part in shown, (part, shown)
        assert "waiting for your feedback" in shown
        header = "".join(row.strip() for row in rows_of(pilot, "#session-title"))
        session_id = screen.controller.session_id
        assert session_id is not None
        assert f"session {session_id}" in header, header
        assert "CF,EF:full,VF:novice" in header, header
        # And the panes the person works with are still there.
        for selector in ("#code-pane", "#test-table", "#feedback-composer"):
            assert screen.query_one(selector).region.height >= 3, selector

    run(scripted.app([WRONG]), scenario, size=(80, 24))


@pytest.mark.parametrize(
    ("size", "lines"),
    [
        ((120, 40), ["import random", "import statistics", "def task_func(LETTERS):"]),
        ((80, 24), ["def task_func(LETTERS):"]),
    ],
)
def test_the_tasks_code_header_is_in_view_in_the_task_pane(
    scripted: ScriptedApps, size: tuple[int, int], lines: list[str]
) -> None:
    async def scenario(pilot: Pilot) -> None:
        await awaiting_feedback(pilot)
        await pilot.pause()
        pane = "\n".join(rows_of(pilot, "#task-pane"))
        for line in lines:
            assert line in pane, (line, pane)
        assert "Create a dictionary" in pane  # and the prompt starts above it

    run(scripted.app([WRONG]), scenario, size=size)


LONG = fenced(
    HEADER
    + "def task_func(LETTERS):\n"
    + "".join(f"    step_{i} = {i}\n" for i in range(12))
    + "    return {}\n"
)


@pytest.mark.parametrize(("size", "least"), [((80, 24), 6), ((120, 40), 8)])
def test_the_code_gets_most_of_a_small_terminals_rows(
    scripted: ScriptedApps, size: tuple[int, int], least: int
) -> None:
    """The code is what a person judges: at 80x24 it showed three lines (two with a header on
    two rows) beside the task, the tests and the composer. The tab bar's underline, a test row
    and a composer line now go to it; the tests' header and first row and the composer stay."""

    async def scenario(pilot: Pilot) -> None:
        await awaiting_feedback(pilot)
        await pilot.pause()
        code = "\n".join(rows_of(pilot, "#code-pane"))
        lines = ["import random", "import statistics", "def task_func", "return {}"]
        shown = [line for line in lines + [f"step_{i} = {i}" for i in range(12)] if line in code]
        assert len(shown) >= least, code
        tests = "\n".join(rows_of(pilot, "#test-table"))
        assert "first line of the error" in tests and "test_case_1" in tests, tests
        assert screen_of(pilot).query_one("#feedback-composer").region.height >= 3

    run(scripted.app([LONG]), scenario, size=size)
