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
from tui_harness import AppFactory, config_for, from_palette, wait_until

from convtui.tui import make_app
from convtui.tui.app import Launch
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


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_the_palettes_screenshot_is_saved_where_there_is_no_downloads_folder(
    apps: AppFactory, monkeypatch: pytest.MonkeyPatch, tmp_path, size: tuple[int, int]
) -> None:
    """Textual writes to ~/Downloads, which a server account lacks: the command said only
    "Failed to save screenshot". It now lands in the folder the app was started in."""
    monkeypatch.delenv(SERVER_PID, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no Downloads there
    monkeypatch.delenv("XDG_DOWNLOAD_DIR", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    started_in = tmp_path / "here"
    started_in.mkdir()
    monkeypatch.chdir(started_in)

    async def main() -> None:
        app = make_app(apps.services(), Launch(apps.catalog, config_for(model=apps.model)))
        async with app.run_test(size=size) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, TaskPickerScreen), "picker")
            await from_palette(pilot, "screenshot", SCREENSHOT)
            said = lambda: [n.message for n in app._notifications]  # noqa: E731
            await wait_until(pilot, lambda: any("screenshot" in m for m in said()), "a notice")
            assert not any("Failed" in m for m in said()), said()
            (saved,) = started_in.glob("*.svg")
            assert str(saved) in " ".join(said()) and "<svg" in saved.read_text()

    asyncio.run(main())
