"""A window opened over the session (a test's traceback, the keys help, a question such as
"Give up?") shows its own keys in the footer, not the session's: Send, Skip or Rerun do
nothing while it is open. Pilot on the scripted ``mock:`` model, at 80x24 and 120x40, read
from the bottom row as drawn."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot
from tui_harness import WRONG, AppFactory, awaiting_feedback, play, screen_text, wait_until

from convtui.tui.screens.confirm import ConfirmModal
from convtui.tui.screens.help import HelpModal
from convtui.tui.screens.traceback import TracebackModal
from convtui.tui.widgets.results_table import TestResultsTable

SESSION_KEYS = ("Send", "Skip", "Rerun", "Give up")


def bottom_row(pilot: Pilot) -> str:
    return screen_text(pilot.app)[-1]


async def opened(pilot: Pilot, window: type, *keys: str) -> str:
    for key in keys:
        await pilot.press(key)
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, window), window.__name__)
    await wait_until(pilot, lambda: "Send" not in bottom_row(pilot), "the window's footer")
    return bottom_row(pilot)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_a_window_shows_its_own_keys(apps: AppFactory, size: tuple[int, int]) -> None:
    rows: dict[str, str] = {}

    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        await wait_until(pilot, lambda: "Send" in bottom_row(pilot), "the session's keys")
        screen.query_one(TestResultsTable).focus()
        rows["traceback"] = await opened(pilot, TracebackModal, "enter")
        await pilot.press("escape")
        await wait_until(pilot, lambda: "Send" in bottom_row(pilot), "the session's keys back")
        rows["help"] = await opened(pilot, HelpModal, "f1")
        await pilot.press("escape")
        rows["give up"] = await opened(pilot, ConfirmModal, "f9")
        await pilot.press("n")

    play(apps, scenario, size=size, model=apps.script([WRONG], name="w.jsonl"))
    for window, row in rows.items():
        assert not any(key in row for key in SESSION_KEYS), (window, row)
    assert "Close" in rows["traceback"] and "Close" in rows["help"], rows
    assert "Yes" in rows["give up"] and "No" in rows["give up"], rows
