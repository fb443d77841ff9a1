"""An app that `convtui serve` started for a browser offers no command that cannot work there:
Textual's "Screenshot" writes an SVG file where the app runs, which is the study's host, and
the server passes no file on to the page. In a terminal the command stays. Theme, keys help
and quit are offered either way."""

from __future__ import annotations

import asyncio
import os

import pytest
from textual.command import CommandInput, CommandList, CommandPalette
from textual.pilot import Pilot
from tui_harness import AppFactory, config_for, wait_until

from convtui.tui.app import Launch, make_app
from convtui.tui.screens.task_picker import TaskPickerScreen
from convtui.tui.web.lifeline import SERVER_PID

SCREENSHOT = "Screenshot"


def titles(pilot: Pilot) -> list[str]:
    hits = pilot.app.screen.query_one(CommandList)
    return [
        hits.get_option_at_index(i).hit.text  # type: ignore[attr-defined]
        for i in range(hits.option_count)
        if hits.get_option_at_index(i).id != CommandPalette._NO_MATCHES
    ]


def no_matches(pilot: Pilot) -> bool:
    hits = pilot.app.screen.query_one(CommandList)
    return hits.option_count == 1 and hits.get_option_at_index(0).id == CommandPalette._NO_MATCHES


async def search(pilot: Pilot, typed: str) -> None:
    await pilot.press("ctrl+p")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, CommandPalette), "the palette")
    # As if typed: the input's change starts the search.
    pilot.app.screen.query_one(CommandInput).value = typed


@pytest.mark.parametrize("served", [True, False], ids=["served", "terminal"])
def test_the_palette_offers_a_screenshot_only_where_the_file_reaches_the_person(
    apps: AppFactory, monkeypatch: pytest.MonkeyPatch, served: bool
) -> None:
    if served:
        monkeypatch.setenv(SERVER_PID, str(os.getpid()))
    else:
        monkeypatch.delenv(SERVER_PID, raising=False)

    async def main() -> None:
        app = make_app(apps.services(), Launch(apps.catalog, config_for(model=apps.model)))
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, TaskPickerScreen), "picker")
            await search(pilot, "screenshot")
            if served:
                await wait_until(pilot, lambda: no_matches(pilot), "the search to find nothing")
            else:
                await wait_until(pilot, lambda: SCREENSHOT in titles(pilot), "the screenshot")
            pilot.app.screen.query_one(CommandInput).value = ""  # every command, unsearched
            offered = {"Theme", "Keys", "Quit"} | (set() if served else {SCREENSHOT})
            await wait_until(pilot, lambda: offered <= set(titles(pilot)), f"{offered}")
            assert (SCREENSHOT in titles(pilot)) is not served

    asyncio.run(main())
