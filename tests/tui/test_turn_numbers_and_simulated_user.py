"""One turn numbering on every part of the screen (turn 0 is the first attempt), an ended
session that waits for no further turn, and a simulated user's message shown where feedback
is shown, readable at 80x24 and never over the code.

Scripted: the replies and the simulated user's words come from a ``mock:`` script
(core/models/mock.py), so nothing here depends on what a model writes; the tests really run
in the sandbox and every turn is stored in SQLite in tmp_path."""

from __future__ import annotations

import pytest
from scripted import (
    RIGHT,
    SLOW_S,
    WRONG,
    ended,
    given_up_after_two_turns,
    run,
    screen_of,
    text_of,
)
from textual.pilot import Pilot
from tui_harness import awaiting_feedback as awaiting
from tui_harness import notices, rows, wait_until

from convtui.tui import render
from convtui.tui.widgets.code_pane import CodePane
from convtui.tui.widgets.composer import FeedbackComposer
from convtui.tui.widgets.simulated_feedback import SimulatedFeedback
from convtui.tui.widgets.timeline import TurnTimeline

SAID = (
    "The function returns an empty dict. Build a dict with a list of random integers for "
    "each letter, then sort it by the [bold]mean[/bold] of each list, highest first."
)


def timeline_labels(pilot: Pilot) -> list[str]:
    return [str(o.prompt) for o in screen_of(pilot).query_one(TurnTimeline).options]


# --- pure helpers -----------------------------------------------------------------------------


def test_the_status_line_counts_turns_from_zero_like_the_timeline():
    assert render.turn_position(0, 10) == "turn 0 · 1 of 10"
    assert render.turn_position(9, 10) == "turn 9 · 10 of 10"
    assert render.turn_position(None, 10) == "no turn played · 0 of 10"


def test_the_composer_says_why_it_takes_no_feedback():
    assert render.composer_note("generating") == "waiting for the turn"
    assert render.composer_note("cancelled") == render.PHASES["cancelled"]
    assert render.composer_note("abandoned").startswith("session ended: given up")
    assert render.composer_note("solved").startswith("session ended: solved")


# --- on screen ------------------------------------------------------------------------------


def test_status_line_timeline_and_code_pane_name_the_first_turn_turn_0(scripted):
    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting(pilot, 0)
        assert text_of(pilot, "#status-line").startswith("turn 0 · 1 of 10 · ")
        assert timeline_labels(pilot)[0].startswith("T0 ")
        assert screen.query_one(CodePane).border_title == "Code · turn 0"
        await pilot.press("ctrl+n")
        screen = await awaiting(pilot, 1)
        assert text_of(pilot, "#status-line").startswith("turn 1 · 2 of 10 · ")
        assert [label[:2] for label in timeline_labels(pilot)] == ["T0", "T1"]
        assert screen.query_one(CodePane).border_title == "Code · turn 1"

    run(scripted.app([WRONG]), scenario)


def test_giving_up_after_two_turns_names_the_last_turn_and_waits_for_none(scripted):
    async def scenario(pilot: Pilot) -> None:
        screen = await given_up_after_two_turns(pilot)
        status = text_of(pilot, "#status-line")
        assert status.startswith("turn 1 · 2 of 10 · given up"), status
        assert [label[:2] for label in timeline_labels(pilot)] == ["T0", "T1"]
        composer = screen.query_one(FeedbackComposer)
        assert composer.border_subtitle.startswith("session ended: given up")
        assert "waiting" not in composer.border_subtitle
        assert composer.read_only and not composer.ready

    run(scripted.app([WRONG]), scenario)
    assert rows(scripted.db, "SELECT status, turns_done FROM sessions") == [("abandoned", 2)]


def test_a_session_solved_on_its_first_turn_says_so_and_no_turn_1_appears(scripted):
    async def scenario(pilot: Pilot) -> None:
        screen = await ended(pilot, "solved")
        assert text_of(pilot, "#status-line").startswith("turn 0 · 1 of 10 · solved")
        assert len(timeline_labels(pilot)) == 1
        subtitle = screen.query_one(FeedbackComposer).border_subtitle
        assert subtitle.startswith("session ended: solved")

    run(scripted.app([RIGHT]), scenario)


@pytest.mark.parametrize("size", [(80, 24), (120, 35)], ids=["80x24", "120x35"])
def test_a_simulated_users_message_is_shown_below_the_tests_not_over_the_code(scripted, size):
    async def scenario(pilot: Pilot) -> None:
        screen = await ended(pilot, "exhausted")
        pane = screen.query_one(SimulatedFeedback)
        # The last turn got no feedback: the pane shows the message the model answered.
        await wait_until(pilot, lambda: "on turn 0" in str(pane.border_title), "the message")
        shown = str(pane.query_one("#simulated-text").render())
        assert shown == SAID  # literally: the brackets are text, not markup
        # On screen, whole lines, below the tests and clear of code and tests.
        region = pane.region
        assert region.height >= 4 and region.bottom <= size[1] - 2
        for other in ("#code-pane", "#test-table"):
            assert not region.overlaps(screen.query_one(other).region), other
        inner = region.width - 4  # border and padding
        needed = sum(-(-len(line) // inner) for line in SAID.splitlines())
        visible = region.height - 2
        assert visible >= min(needed, 4), (visible, needed)
        assert not notices(pilot)  # no toast over the code
        # The Feedback tab of turn 0 has it too, with who said it.
        screen.viewed = 0
        screen.query_one("#code-tabs").active = "feedback-tab"
        await pilot.pause()
        feedback = str(screen.query_one("#feedback-text").render())
        assert SAID in feedback and "novice simulator" in feedback
        assert "on turn 0" in str(pane.border_title)

    app = scripted.app([WRONG], (SAID,), user="novice", turns=2)
    run(app, scenario, size=size)
    turns = rows(scripted.db, "SELECT idx, verbal_feedback FROM turns ORDER BY idx")
    assert turns == [(0, SAID), (1, None)]


def test_while_the_simulated_user_writes_the_pane_says_so(scripted):
    async def scenario(pilot: Pilot) -> None:
        await wait_until(pilot, lambda: getattr(pilot.app.screen, "phase", "") == "simulating", "")
        pane = screen_of(pilot).query_one(SimulatedFeedback)
        await pilot.pause()
        shown = str(pane.query_one("#simulated-text").render())
        assert shown == "The novice simulator is writing about turn 0…"
        assert text_of(pilot, "#status-line").startswith("turn 0 · 1 of 2 · ⟳ simulator is")

    app = scripted.app([WRONG], (SAID,), simulate_delay_s=SLOW_S, user="novice", turns=2)
    run(app, scenario)


def test_a_reply_message_that_arrives_after_the_simulator_started_does_not_step_back(scripted):
    """A cached execution lets the loop reach the simulator before the reply's message has
    crossed to the screen (the simulator's callbacks post directly): the late message must
    not turn "simulating" back into "executing"."""
    from convtui.tui import messages as msg

    async def scenario(pilot: Pilot) -> None:
        await wait_until(pilot, lambda: getattr(pilot.app.screen, "phase", "") == "simulating", "")
        screen = screen_of(pilot)
        screen.post_message(msg.ReplyReady(0, "late reply", "late code"))
        await pilot.pause()
        assert screen.phase == "simulating"
        assert screen.live is not None and screen.live.code == "late code"

    app = scripted.app([WRONG], (SAID,), simulate_delay_s=SLOW_S, user="novice", turns=2)
    run(app, scenario)
