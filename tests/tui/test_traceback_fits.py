"""The traceback window's words are read whole at 80x24 and 120x40 without scrolling: what
stands in for a missing traceback and a one-line reason for the run wrap to the window, and
a repository test's id too long for the title is shown whole under it. The traceback's own
lines still never wrap (tests/tui/test_long_lines.py). Pilot on the scripted ``mock:`` model,
the window read from the screen as drawn, inside its frame."""

from __future__ import annotations

import pytest
from scripted import ScriptedApps, run
from textual.pilot import Pilot
from tui_harness import WRONG, awaiting_feedback, screen_text, wait_until

from convtui.tui import render
from convtui.tui.screens.traceback import TracebackModal
from convtui.tui.viewmodels import TestRow

# As long as CodeIF-Bench's repository test ids get: wider than the title at 80 columns.
NAME = "tests/test_core.py::CounterTest::test_add_refuses_a_negative_amount_with_a_value_error"
WHY = "the code does not compile: SyntaxError: '{' was never closed (line 4)"


def inside_the_frame(pilot: Pilot) -> str:
    """Every character drawn inside the window's frame, in reading order, no whitespace."""
    region = pilot.app.screen.query_one(".detail-frame").scrollable_content_region
    rows = screen_text(pilot.app)[region.y : region.bottom]
    return "".join("".join(row[region.x : region.right].split()) for row in rows)


def whole(text: str) -> str:
    return "".join(text.split())


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_a_test_that_never_ran_is_read_whole_name_and_words(
    scripted: ScriptedApps, size: tuple[int, int]
) -> None:
    row = TestRow(NAME, "not_run", 0.0, "")
    seen: dict[str, str] = {}

    async def scenario(pilot: Pilot) -> None:
        await awaiting_feedback(pilot)
        pilot.app.push_screen(TracebackModal(row, WHY))
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, TracebackModal), "it")
        await pilot.pause(0.2)  # the name is shown once the frame's width is known
        seen["drawn"] = inside_the_frame(pilot)
        seen["title"] = "".join(screen_text(pilot.app)).replace(" ", "")

    run(scripted.app([WRONG]), scenario, size=size)
    drawn = seen["drawn"]
    assert whole(render.NO_TRACEBACK["not_run"]) in drawn, drawn
    assert whole(f"The run: {WHY}") in drawn, drawn
    assert whole(NAME) in drawn or whole(NAME) in seen["title"], drawn
