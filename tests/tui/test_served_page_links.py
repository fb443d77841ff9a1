"""A link in the model's text is not followed from the served page (issue 48, point 6): xterm.js
makes every URL on the terminal clickable, and a click opened it in a new window. Real
Chromium (headless, via Playwright) on a real `convtui serve`, the scripted ``mock:`` model
answering code with a URL in a comment; the URL's cells are found on the screen read back from
the bytes the page's terminal received (support/browser.py), and clicked."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support.browser import AnnotatorPage, ServedStudy, served_study, signed_in
from support.studies import scripted_study

pytestmark = pytest.mark.timeout(300)

URL = "https://example.com/convtui-link"
LINKED = f"```python\n# see {URL}\ndef task_func(*args, **kwargs):\n    return None\n```"


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


def test_a_click_on_a_link_in_the_models_code_opens_nothing(tmp_path: Path) -> None:
    db = scripted_study(tmp_path, reply=LINKED)

    async def scenario(served: ServedStudy) -> None:
        async with signed_in(served) as page:
            await page.wait_for("waiting for your feedback", URL, timeout=90)
            where = page.page.url
            opened: list[str] = []
            asked: list[str] = []
            page.page.context.on("page", lambda popup: opened.append(popup.url))
            page.page.on("dialog", lambda dialog: asked.append(dialog.message))
            await click_text(page, URL)
            await asyncio.sleep(1.5)  # a window opens within milliseconds of the click
            assert opened == [] and asked == []
            assert page.page.url == where
            assert len(page.page.context.pages) == 1
            assert not [r for r in page.requests if "example.com" in r]
            assert not await page.page.locator("body.-closed").count()  # the app goes on

    with served_study(db, tmp_path) as served:
        asyncio.run(scenario(served))
