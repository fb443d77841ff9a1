"""Only what works now is offered (issue 34, point 5): mid-session the palette does not list
"session: next task" and "session: pick task" (they do nothing until the session has ended,
been cancelled or failed), and the footer does not show f10 and f4 while the help or a
traceback window is open (there they do nothing either). Once the session has ended both are
offered again, by key and in the palette.

Pilot on the scripted ``mock:`` model (the ``scripted`` fixture); the palette's hits are read
from the palette as a person sees it, opened over the session."""

from __future__ import annotations

import pytest
from scripted import RIGHT, ScriptedApps, ended, run, screen_of
from textual.pilot import Pilot
from tui_harness import (
    WRONG,
    awaiting_feedback,
    close_palette,
    palette_search,
    screen_text,
    wait_until,
)

from convtui.tui.screens.help import HelpModal
from convtui.tui.screens.traceback import TracebackModal
from convtui.tui.widgets.results_table import TestResultsTable

pytestmark = pytest.mark.slow

TASK_COMMANDS = {"session: next task", "session: pick task"}


async def palette_titles(pilot: Pilot, typed: str, settled: str) -> set[str]:
    """The palette's hits for ``typed``, once the search has found ``settled``."""
    titles = await palette_search(pilot, typed)
    await wait_until(pilot, lambda: settled in titles(), "the hits", 30)
    await pilot.pause(0.3)
    found = set(titles())
    await close_palette(pilot)
    return found


def footer(pilot: Pilot) -> str:
    return screen_text(pilot.app)[-1]


async def footer_under(pilot: Pilot, modal: type, open_it) -> str:
    await open_it()
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, modal), modal.__name__)
    # The footer under the window redraws when the session's keys change (a phase, a pane's
    # focus): as they would while the window is open.
    pilot.app.screen_stack[-2].refresh_bindings()
    await pilot.pause()
    await pilot.pause()
    shown = footer(pilot)
    await pilot.press("escape")
    await wait_until(pilot, lambda: not isinstance(pilot.app.screen, modal), "it to close")
    return shown


def test_mid_session_the_palette_offers_no_task_switch(scripted: ScriptedApps) -> None:
    seen: dict[str, set[str]] = {}

    async def scenario(pilot: Pilot) -> None:
        await awaiting_feedback(pilot)
        seen["mid"] = await palette_titles(pilot, "session", "session: give up")

    run(scripted.app([WRONG]), scenario)
    assert not TASK_COMMANDS & seen["mid"], seen["mid"]
    assert "session: give up" in seen["mid"]


def test_help_and_traceback_windows_show_no_task_keys(scripted: ScriptedApps) -> None:
    seen: dict[str, str] = {}

    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)

        async def open_help() -> None:
            await pilot.press("f1")

        async def open_traceback() -> None:
            screen.query_one(TestResultsTable).focus()
            await pilot.press("enter")

        seen["help"] = await footer_under(pilot, HelpModal, open_help)
        seen["traceback"] = await footer_under(pilot, TracebackModal, open_traceback)
        # Ended: the same keys are offered on the session screen itself.
        await pilot.press("f9")
        await wait_until(pilot, lambda: pilot.app.screen is not screen, "the question")
        await pilot.press("y")
        await ended(pilot, "abandoned")
        await pilot.pause()
        seen["ended"] = footer(pilot)
        seen["ended help"] = await footer_under(pilot, HelpModal, open_help)

    run(scripted.app([WRONG]), scenario)
    for where in ("help", "traceback", "ended help"):
        assert "f10" not in seen[where] and "f4" not in seen[where], (where, seen[where])
    assert "f10 Next task" in seen["ended"] and "f4 Pick task" in seen["ended"], seen["ended"]


def test_once_the_session_ended_the_palette_offers_the_next_task(scripted: ScriptedApps) -> None:
    seen: dict[str, set[str]] = {}

    async def scenario(pilot: Pilot) -> None:
        await ended(pilot, "solved")
        seen["ended"] = await palette_titles(pilot, "task", "session: next task")
        assert screen_of(pilot).phase == "solved"

    run(scripted.app([RIGHT]), scenario)
    assert seen["ended"] >= TASK_COMMANDS, seen["ended"]
