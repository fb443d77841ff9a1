"""The status line's note speaks of the phase it was written in and goes with it: a cancel on
its way, an error, a re-run's outcome never describe a later phase (Pilot; a scripted model,
the real executor and store)."""

from __future__ import annotations

from textual.pilot import Pilot
from tui_harness import WRONG, AppFactory, awaiting_feedback, phase_is, play, wait_until

from convtui.tui.widgets.status_line import StatusLine

# Slow enough to cancel while it streams, quick enough for the retried turn to end.
DELAY_S = 3.0


def status(pilot: Pilot) -> str:
    return str(pilot.app.screen.query_one(StatusLine).render())


def test_cancelling_leaves_the_status_line_once_the_turn_is_cancelled_and_retried(
    apps: AppFactory,
) -> None:
    model = apps.script([WRONG], delay_s=DELAY_S, name="slow.jsonl")
    seen: dict[str, str] = {}

    async def scenario(pilot: Pilot) -> None:
        await wait_until(pilot, phase_is(pilot, "generating"), "the reply to stream")
        await pilot.press("escape")
        await wait_until(pilot, phase_is(pilot, "cancelled"), "the cancel")
        seen["cancelled"] = status(pilot)
        await pilot.press("f5")
        await awaiting_feedback(pilot)
        seen["retried"] = status(pilot)
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: "re-run: " in status(pilot), "the re-run")
        await pilot.press("ctrl+n")
        await awaiting_feedback(pilot, turn=1)
        seen["next turn"] = status(pilot)

    play(apps, scenario, model=model)
    assert "turn cancelled" in seen["cancelled"]
    assert "cancelling the turn" not in seen["cancelled"]
    assert "waiting for your feedback" in seen["retried"]
    assert "cancelling the turn" not in seen["retried"], seen["retried"]
    # A re-run's outcome is turn 0's: turn 1 does not show it.
    assert "re-run:" not in seen["next turn"], seen["next turn"]
