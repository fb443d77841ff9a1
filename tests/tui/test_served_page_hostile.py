"""What a person's page does when the text or the study turns against it, in a real browser
(Debian's chromium, headless, via Playwright) on a real `convtui serve`: a model reply that
tries to paint the screen and retitle the tab is shown, not obeyed, and a link in it is not
followed on a click (xterm.js made every URL clickable and opened it in a new window); the
page runs under a
policy that allows no inline script, and breaks none of it; a token replaced while the app is
open ends the app within seconds and the page says why. The scripted ``mock:`` model writes
the reply, so nothing depends on what a model writes."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.browser import AnnotatorPage, ServedStudy, served_study, signed_in
from support.raw_client import app_pids
from support.studies import scripted_study

pytestmark = pytest.mark.timeout(300)

PAINT = "\x1b[2J\x1b[H\x1b[42mALL TESTS PASSED\x1b]0;pwned\x07"
URL = "https://example.com/convtui-link"
HOSTILE_CODE = f"```python\n# see {URL}\ndef task_func(*args, **kwargs):\n    return '{PAINT}'\n```"


async def click_text(page: AnnotatorPage, text: str) -> None:
    """Point at ``text`` on the terminal, then click it, as a person does."""
    rows = (await page.text()).splitlines()
    row = next(n for n, line in enumerate(rows) if text in line)
    column = rows[row].index(text) + len(text) // 2
    box = await page.page.locator(".xterm-screen").bounding_box()
    assert box is not None
    columns, lines = await page.page.evaluate("() => window.__convtui.size")
    x = box["x"] + (column + 0.5) * box["width"] / columns
    y = box["y"] + (row + 0.5) * box["height"] / lines
    await page.page.mouse.move(x, y)
    await asyncio.sleep(0.3)  # xterm.js finds the link under the pointer as it rests there
    await page.page.mouse.click(x, y)


def test_the_page_shows_hostile_text_obeys_no_inline_script_and_says_why_it_closed(
    tmp_path: Path,
) -> None:
    db = scripted_study(tmp_path, HOSTILE_CODE)

    async def scenario(served: ServedStudy) -> None:
        async with signed_in(served) as page:
            title = await page.page.title()
            await page.wait_for("waiting for your feedback", timeout=60)
            # The Code tab shows the reply's escapes as characters.
            await page.page.focus(".xterm-helper-textarea")
            shown = await page.wait_for("␛[2J␛[H␛[42mALL TESTS PASSED")
            received = b"".join(data for _at, data in page.frames)
            assert PAINT.encode() not in received and b"\x1b]0;pwned" not in received
            assert await page.page.title() == title == "pilot · ana · convtui"
            assert "pwned" in shown
            # A click on the link in the reply opens nothing and goes nowhere.
            where = page.page.url
            opened: list[str] = []
            asked: list[str] = []
            page.page.context.on("page", lambda popup: opened.append(popup.url))
            page.page.on("dialog", lambda dialog: asked.append(dialog.message))
            await click_text(page, URL)
            await asyncio.sleep(1.5)  # a window opens within milliseconds of the click
            assert opened == [] and asked == [] and page.page.url == where
            assert len(page.page.context.pages) == 1
            assert not [r for r in page.requests if "example.com" in r]
            assert not await page.page.locator("body.-closed").count()  # the app goes on
            # No script of ours was refused by the page's policy (none is inline).
            assert not [m for m in page.console if "Content Security Policy" in m]
            # The organiser replaces her token: the app ends within seconds, saying why.
            changed = time.monotonic()
            argv = [sys.executable, "-m", "convtui", "study", "token", "ana", "--db", str(db)]
            await asyncio.to_thread(subprocess.run, argv, check=True, capture_output=True)
            await page.page.wait_for_selector("body.-closed", timeout=10_000)
            assert time.monotonic() - changed < 8
            why = await page.page.text_content("#why")
            assert why is not None and "token was replaced or withdrawn" in why
            assert await page.page.is_visible("#why")
            deadline = time.monotonic() + 10
            while app_pids(served) and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            assert app_pids(served) == []

    with served_study(db, tmp_path) as served:
        asyncio.run(scenario(served))
