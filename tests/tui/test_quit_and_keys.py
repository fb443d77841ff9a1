"""Leaving the app and moving around it: quitting prints each session opened and the command
that resumes it, to the terminal the app gave back; f3 moves to the turn list, showing it
where it was hidden (Pilot, and ``run_tui`` headless; a scripted model, the real executor and
store)."""

from __future__ import annotations

from functools import partialmethod

import pytest
from textual.app import App
from textual.pilot import Pilot
from tui_harness import AppFactory, awaiting_feedback, play, rows

from convtui.tui import run_tui
from convtui.tui.app import ConvTuiApp
from convtui.tui.widgets.timeline import TurnTimeline


def test_quitting_prints_the_session_and_the_command_that_resumes_it(
    apps: AppFactory, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    async def quit_while_waiting(pilot: Pilot) -> None:
        await awaiting_feedback(pilot)
        await pilot.press("ctrl+n")
        await awaiting_feedback(pilot, turn=1)
        await pilot.press("ctrl+q")

    # run_tui as the command line calls it, on a headless driver the pilot presses keys in.
    headless = partialmethod(App.run, headless=True, size=(120, 40), auto_pilot=quit_while_waiting)
    monkeypatch.setattr(ConvTuiApp, "run", headless)
    app = apps.app()
    assert run_tui(app.services, app.launch) == 0

    [(session_id, model)] = rows(apps.db, "SELECT id, model FROM sessions")
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"Session {session_id} (BigCodeBench/2): 1 turn recorded, waiting for your feedback.",
        f"  Continue it: convtui session --resume {session_id} --db {apps.db} --model {model}",
    ]


def test_a_session_that_ended_is_named_with_how_it_ended(apps: AppFactory) -> None:
    async def give_up(pilot: Pilot) -> None:
        await awaiting_feedback(pilot)
        await pilot.press("f9")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        while getattr(pilot.app.screen, "phase", "") != "abandoned":
            await pilot.pause(0.05)

    app = play(apps, give_up)
    [(session_id,)] = rows(apps.db, "SELECT id FROM sessions")
    said = app.farewell()
    assert said[0] == f"Session {session_id} (BigCodeBench/2): 1 turn recorded, ended: given up."
    assert said[1].startswith(f"  Open it read-only: convtui session --resume {session_id} ")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_f3_moves_to_the_turn_list_and_shows_it_where_hidden(apps: AppFactory, size) -> None:
    seen: dict[str, object] = {}

    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        timeline = screen.query_one(TurnTimeline)
        seen["shown before"] = timeline.region.width > 0
        await pilot.press("f3")
        await pilot.pause()
        seen["focused"] = pilot.app.focused is timeline
        seen["shown after"] = timeline.region.width > 0

    play(apps, scenario, size=size)
    assert seen["shown before"] is (size[0] >= 100)  # below 100 columns it starts hidden
    assert seen["focused"] and seen["shown after"]
