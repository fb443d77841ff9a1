"""The served app's footer shows only keys a desktop browser passes on to the page (issue 34,
point 12): ctrl+n (Skip) and ctrl+t (fold the task) open a window and a tab in Chromium and
Firefox and never reach the page, so the footer's keys there are checked against the list of
keys browsers keep (tui/browser_keys.py, which names its sources) in every phase and with
every pane focused, and the keys it shows are pressed and do what they say.

The app runs as `convtui serve` starts it (its server's pid in the environment), driven by
Pilot on the scripted ``mock:`` model. A headed browser is not available here (no display,
no Xvfb), so the list stands in for a real desktop Chromium and Firefox."""

from __future__ import annotations

import os

import pytest
from scripted import SLOW, SLOW_S, ScriptedApps, ended, run, screen_of, streaming
from textual.pilot import Pilot
from tui_harness import WRONG, awaiting_feedback, rows, screen_text, wait_until

from convtui.tui.browser_keys import BROWSER_KEYS, browser_takes
from convtui.tui.launch import SERVER_PID
from convtui.tui.screens.help import HelpModal
from convtui.tui.study_app import how_to_leave
from convtui.tui.widgets.task_pane import TaskPane

pytestmark = pytest.mark.slow

FOCUS = (None, "#feedback-composer", "#task-pane", "#code-tabs Tabs", "#test-table", "#timeline")


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SERVER_PID, str(os.getpid()))


def footer_keys(pilot: Pilot) -> dict[str, str]:
    """What the footer shows, with each pane focused in turn: the key it displays (the
    first of the binding's keys after the keymap) for each description."""
    screen = screen_of(pilot)
    shown: dict[str, str] = {}
    for target in FOCUS:
        widget = None if target is None else screen.query_one(target)
        if widget is not None and not (widget.focusable and widget.display):
            continue
        screen.set_focus(widget)
        by_action: dict[str, str] = {}
        for key, active in screen.active_bindings.items():
            if active.binding.show and active.enabled:
                by_action.setdefault(f"{active.binding.action}", key)
                shown.setdefault(active.binding.description, by_action[active.binding.action])
    return shown


def no_browser_key(shown: dict[str, str], where: str) -> None:
    taken = {what: key for what, key in shown.items() if browser_takes(key)}
    assert not taken, f"{where}: the footer shows keys a browser keeps: {taken}"


def test_the_list_names_the_keys_the_issue_found_taken() -> None:
    for key in ("ctrl+n", "ctrl+t", "ctrl+w", "ctrl+tab", "ctrl+q", "f11"):
        assert key in BROWSER_KEYS
    assert browser_takes("ctrl+shift+t") and not browser_takes("ctrl+g")


@pytest.mark.usefixtures("served")
def test_a_served_footer_waiting_for_feedback_shows_keys_that_reach_the_page(
    scripted: ScriptedApps,
) -> None:
    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        shown = footer_keys(pilot)
        no_browser_key(shown, "waiting for feedback")
        assert shown["Skip"] == "ctrl+g" and shown["Rerun"] == "ctrl+s", shown
        assert "Quit" not in shown  # ctrl+q quits Firefox: the palette's Quit remains
        screen.set_focus(None)
        # The footer redraws after the focus change: wait for it rather than read it at once
        # (under load one pause was not always enough).
        await wait_until(pilot, lambda: "Skip" in screen_text(pilot.app)[-1], "the footer")
        footer = screen_text(pilot.app)[-1]
        assert "^g Skip" in footer and "^n" not in footer and "^q" not in footer, footer
        # Help lists no key the browser keeps either (the terminal's second keys are gone).
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, HelpModal), "help")
        keys = {key for row in pilot.app.screen.rows for key in row.keys.split(" / ")}
        assert not keys & {"^n", "^t", "^r", "f5", "^q"}, keys
        await pilot.press("escape")
        await wait_until(pilot, lambda: pilot.app.screen is screen, "help to close")
        # The keys shown work: ctrl+o folds the task, ctrl+g goes on without words.
        await pilot.press("ctrl+o")
        assert screen.query_one(TaskPane).has_class("-collapsed")
        await pilot.press("ctrl+g")
        await awaiting_feedback(pilot, 1)
        assert rows(scripted.db, "SELECT verbal_feedback FROM turns WHERE idx = 0") == [(None,)]

    run(scripted.app([WRONG]), scenario)


@pytest.mark.usefixtures("served")
def test_a_served_footer_after_a_cancel_and_at_the_end_shows_keys_that_reach_the_page(
    scripted: ScriptedApps,
) -> None:
    async def scenario(pilot: Pilot) -> None:
        await streaming(pilot)
        no_browser_key(footer_keys(pilot), "streaming")
        await pilot.press("escape")
        screen = await ended(pilot, "cancelled")
        shown = footer_keys(pilot)
        no_browser_key(shown, "cancelled")
        assert shown["Retry turn"] == "ctrl+s", shown
        screen.set_focus(None)
        await pilot.press("ctrl+s")  # runs the turn again
        await streaming(pilot)
        await pilot.press("escape")
        await ended(pilot, "cancelled")
        await pilot.press("f9")
        await wait_until(pilot, lambda: pilot.app.screen is not screen, "the question")
        await pilot.press("y")
        await ended(pilot, "abandoned")
        no_browser_key(footer_keys(pilot), "ended")

    run(scripted.app([SLOW], delay_s=SLOW_S), scenario)


def test_the_study_says_how_to_leave_where_it_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    assert how_to_leave() == "ctrl+q leaves."
    monkeypatch.setenv(SERVER_PID, str(os.getpid()))
    assert "ctrl+q" not in how_to_leave() and "Quit" in how_to_leave()


def test_the_terminal_keeps_the_old_keys_too(scripted: ScriptedApps) -> None:
    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        assert footer_keys(pilot)["Quit"] == "ctrl+q"
        await pilot.press("ctrl+t")
        assert screen.query_one(TaskPane).has_class("-collapsed")
        await pilot.press("ctrl+n")
        await awaiting_feedback(pilot, 1)

    run(scripted.app([WRONG]), scenario)
