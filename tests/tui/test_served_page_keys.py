"""The served page's footer names keys that reach the app through the page (issue 34, point
12), and they work there: ctrl+g goes on to the next turn. Real Chromium (headless, via
Playwright) on a real `convtui serve`, with the scripted ``mock:`` model.

Headless Chromium has no window or tab keys of its own, so this checks that xterm.js hands
the new keys to the app; that a desktop browser keeps ctrl+n and ctrl+t is checked in a
headed one (test_served_page_headed.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support.browser import ServedStudy, served_study, signed_in
from support.studies import scripted_study

pytestmark = pytest.mark.timeout(300)


def test_the_served_footer_names_keys_that_work_in_the_page(tmp_path: Path) -> None:
    db = scripted_study(tmp_path)

    async def scenario(served: ServedStudy) -> None:
        async with signed_in(served) as page:
            shown = await page.wait_for("waiting for your feedback", "^g Skip", timeout=60)
            footer = shown.splitlines()[-1]
            for taken in ("^n", "^t", "^r", "f5", "^q"):
                assert taken not in footer, footer
            await page.press("Control+g")
            await page.wait_for("turn 1 ·", "waiting for your feedback", timeout=60)

    with served_study(db, tmp_path) as served:
        asyncio.run(scenario(served))
