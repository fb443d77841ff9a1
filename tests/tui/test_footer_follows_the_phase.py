"""The footer shows what the keys do now (issue 34, point 2): the phase moved on while the app
had no focus (a served page not focused yet, a terminal in the background), and once focus
returns the footer is the one of the phase the status line names, not of the phase it last
drew (``esc Cancel`` while the status line said "waiting for your feedback"), and so it is
before focus returns: the footer is read before the click.

Textual's footer ignores binding changes while the app is blurred (tui/widgets/keys_footer.py).
Pilot on the scripted ``mock:`` model, its reply streaming in over two seconds so that the
busy phase is seen first."""

from __future__ import annotations

import pytest
from textual import events
from textual.pilot import Pilot
from tui_harness import (
    WRONG,
    AppFactory,
    awaiting_feedback,
    phase_is,
    play,
    screen_text,
    wait_until,
)

from convtui.tui.widgets.keys_footer import KeysFooter

pytestmark = pytest.mark.slow


def footer(pilot: Pilot) -> str:
    return screen_text(pilot.app)[-1]


def status_line(pilot: Pilot) -> str:
    return screen_text(pilot.app)[-2]


def test_the_footer_shows_the_keys_of_the_phase_reached_while_the_app_has_no_focus(
    apps: AppFactory,
) -> None:
    seen: dict[str, str] = {}
    model = apps.script([WRONG], delay_s=2.0, name="two-seconds.jsonl")

    async def scenario(pilot: Pilot) -> None:
        await wait_until(pilot, phase_is(pilot, "generating"), "the reply to stream")
        # The footer is recomposed after the next refresh, which a loaded machine may not
        # have drawn yet: wait for it (a footer that never follows still fails here).
        await wait_until(pilot, lambda: "Cancel" in footer(pilot), "the busy footer", 30)
        seen["busy"] = footer(pilot)
        # Nothing focused and the app blurred: a served page that opened without focus (or
        # a terminal left for another window before a pane was chosen).
        pilot.app.screen.set_focus(None)
        pilot.app.post_message(events.AppBlur())
        await pilot.pause()
        await awaiting_feedback(pilot)
        await wait_until(pilot, lambda: "Send" in footer(pilot), "the footer, blurred", 30)
        seen["blurred"] = footer(pilot)
        pilot.app.post_message(events.AppFocus())  # and the person comes back
        await pilot.pause()
        await pilot.pause()
        seen["status"] = status_line(pilot)
        seen["now"] = footer(pilot)

    play(apps, scenario, model=model)
    assert "Cancel" in seen["busy"], seen["busy"]
    assert "waiting for your feedback" in seen["status"]
    for shown in (seen["blurred"], seen["now"]):
        assert "Send" in shown and "Skip" in shown, shown
        assert "Cancel" not in shown, shown


def test_the_footer_keeps_its_keys_when_a_change_of_bindings_leaves_them_as_they_were(
    apps: AppFactory,
) -> None:
    """Moving between panes mostly leaves the keys shown as they were; the footer is rebuilt
    (a widget per key) only when what it shows differs, and is when it does."""
    got: dict[str, object] = {}

    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        await wait_until(pilot, lambda: "Send" in footer(pilot), "the footer", 60)
        footer_widget = screen.query_one(KeysFooter)
        before = list(footer_widget.children)
        screen.query_one("#task-pane").focus()  # a pane without keys of its own
        for _ in range(4):
            await pilot.pause()
        got["same"] = list(footer_widget.children) == before
        screen.query_one("#code-tabs Tabs").focus()  # the code pane's own keys join
        await wait_until(pilot, lambda: "w Wrap" in footer(pilot), "the code pane's keys", 60)
        got["rebuilt"] = not set(footer_widget.children) & set(before)

    play(apps, scenario)
    assert got == {"same": True, "rebuilt": True}
