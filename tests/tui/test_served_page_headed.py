"""The served app's keys in a headed desktop Chromium, typed as a person types them (issue
34, point 12): the browser keeps ctrl+n and ctrl+t (a new window, a new tab) and the page
never sees them, which is why the served app does not bind them; the keys it binds instead
(ctrl+g skip, ctrl+o fold) reach the page and the app acts on them.

Real parts: Xvfb, Debian's chromium (headed), xdotool pressing keys through the X server, a
real `convtui serve`, the scripted ``mock:`` model. Headless Chromium, or keys sent through
the DevTools protocol, would hand every key to the page and prove nothing here."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from support.browser import AnnotatorPage, ServedStudy, served_study
from support.headed import Display, headed_chromium, virtual_display
from support.studies import scripted_study

pytestmark = pytest.mark.timeout(300)


async def _until(holds: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not holds():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout} s")
        await asyncio.sleep(0.1)


def test_a_headed_browser_keeps_its_keys_and_hands_on_the_ones_the_app_binds(
    tmp_path: Path,
) -> None:
    db = scripted_study(tmp_path)

    async def scenario(served: ServedStudy, display: Display) -> None:
        async with headed_chromium(display, tmp_path / "profile") as context:
            page = context.pages[0] if context.pages else await context.new_page()
            annotator = AnnotatorPage(page)
            await page.goto(served.url)
            assert await annotator.sign_in("token-of-ana") == 200
            await annotator.wait_for("waiting for your feedback", "^g Skip", timeout=90)
            await annotator.focus()
            # The page's own window, focused again by its id once a key's window or tab
            # closes: the closed window can still be listed while X takes it down.
            window = display.focus_browser()

            async def seen() -> list[str]:
                return await page.evaluate("() => window.__convtui.names")

            for taken, opens in (("ctrl+n", "a new window"), ("ctrl+t", "a new tab")):
                display.press(taken)
                await _until(lambda: len(context.pages) == 2, f"{taken} opening {opens}")
                for extra in context.pages[1:]:
                    await extra.close()
                display.focus_browser(window)
                assert taken not in await seen(), f"{taken} reached the page"

            display.press("ctrl+o")
            await asyncio.sleep(1)
            assert "ctrl+o" in await seen() and len(context.pages) == 1
            display.press("ctrl+g")
            await annotator.wait_for("turn 1 ·", "waiting for your feedback", timeout=60)
            assert "ctrl+g" in await seen() and len(context.pages) == 1

    with virtual_display() as display, served_study(db, tmp_path) as served:
        asyncio.run(scenario(served, display))
