"""Leaving the app and moving around it: quitting prints each session opened and the command
that resumes it, to the terminal the app gave back; f3 moves to the turn list, showing it
where it was hidden (Pilot, and ``run_tui`` headless; a scripted model, the real executor and
store)."""

from __future__ import annotations

import os
import shlex
from functools import partialmethod
from pathlib import Path

import pytest
from support.cli import invoke
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import Static
from tui_harness import ASCENDING, WRONG, AppFactory, awaiting_feedback, play, rows, wait_until

import convtui.tui
import convtui.tui.launch
from convtui.tui import run_tui
from convtui.tui.app import ConvTuiApp
from convtui.tui.screens.confirm import ConfirmModal
from convtui.tui.web.lifeline import SERVER_PID
from convtui.tui.widgets.status_line import StatusLine
from convtui.tui.widgets.timeline import TurnTimeline


def opened_by(command: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str | None, Path, str]:
    """Run ``command`` as pasted, through the command line, up to the app it would open:
    the session that app resumes, the database it opened and its model."""
    opened: list[tuple[str | None, Path, str]] = []

    def app_would_run(services, launch) -> int:
        plan = launch.plan
        opened.append((plan and plan.resume_id, services.store.path, services.models.coder.spec))
        return 0

    monkeypatch.setattr(convtui.tui, "run_tui", app_would_run)
    monkeypatch.setattr(convtui.tui.launch, "has_screen", lambda: True)
    argv = shlex.split(command)
    assert argv[:2] == ["convtui", "session"], command
    done = invoke(*argv[1:])
    assert done.returncode == 0, done.stderr
    [what] = opened
    return what


def test_quitting_prints_the_session_and_the_command_that_resumes_it(
    apps: AppFactory, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    status: list[str] = []

    async def quit_while_waiting(pilot: Pilot) -> None:
        await awaiting_feedback(pilot)
        await pilot.press("ctrl+n")
        screen = await awaiting_feedback(pilot, turn=1)
        status.append(str(screen.query_one(StatusLine).render()))
        await pilot.press("ctrl+q")

    # run_tui as the command line calls it, on a headless driver the pilot presses keys in.
    headless = partialmethod(App.run, headless=True, size=(120, 40), auto_pilot=quit_while_waiting)
    monkeypatch.setattr(ConvTuiApp, "run", headless)
    app = apps.app()
    assert run_tui(app.services, app.launch) == 0

    [(session_id, model)] = rows(apps.db, "SELECT id, model FROM sessions")
    out = capsys.readouterr().out.splitlines()
    # Turns counted as the status line counted them when the person quit.
    assert status[0].startswith("turn 1 · 2 of 3 · ")
    assert out[0] == (
        f"Session {session_id} (BigCodeBench/2): turn 1 · 2 of 3, waiting for your feedback."
    )
    verb, command = out[1].split(": ", 1)
    assert verb == "  Continue it"
    assert opened_by(command, monkeypatch) == (session_id, apps.db, model)


async def leave_dialog_text(pilot: Pilot, said: list[str], *, served: bool = False) -> None:
    """Start turn 1 (ctrl+g, a key a browser passes on), quit while it runs, note what the
    dialog asks, and stay. ``served``: quit as the palette's Quit does (a browser keeps
    ctrl+q, so the served app binds no key to quitting)."""
    await awaiting_feedback(pilot)
    await pilot.press("ctrl+g")
    await wait_until(pilot, lambda: pilot.app.screen.phase == "generating", "turn 1")
    if served:
        await pilot.app.run_action("quit")
        await pilot.pause()
    else:
        await pilot.press("ctrl+q")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, ConfirmModal), "the dialog")
    await pilot.pause()  # composed
    said.append(str(pilot.app.screen.query_one(Static).render()))
    await pilot.press("n")


def test_the_leave_dialog_names_a_command_that_resumes_the_session(
    apps: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Quitting while a turn runs asks first, and gives the command that continues the
    session: pasted, it opens that session, in that database, on that model."""
    said: list[str] = []

    async def quit_mid_turn(pilot: Pilot) -> None:
        await leave_dialog_text(pilot, said)

    model = apps.script([WRONG, ASCENDING], delay_s=3.0)
    play(apps, quit_mid_turn, model=model)
    [(session_id,)] = rows(apps.db, "SELECT id FROM sessions")
    question, command = said[0].split("\n")
    assert question.startswith("Leave this session? The running turn is not saved.")
    assert opened_by(command, monkeypatch) == (session_id, apps.db, model)


def test_a_served_apps_leave_dialog_names_no_command_and_no_path(
    apps: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a browser (`convtui serve`) the person has no shell on the host, and the host's
    paths are not theirs to see: signing in again is what continues."""
    monkeypatch.setenv(SERVER_PID, str(os.getpid()))
    said: list[str] = []

    async def quit_mid_turn(pilot: Pilot) -> None:
        await leave_dialog_text(pilot, said, served=True)

    play(apps, quit_mid_turn, model=apps.script([WRONG, ASCENDING], delay_s=3.0))
    assert said[0] == (
        "Leave this session? The running turn is not saved. Signing in again continues the "
        "session where it stopped."
    )


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
    assert said[0] == f"Session {session_id} (BigCodeBench/2): turn 0 · 1 of 3, ended: given up."
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
