"""A person who arrives while other people's apps start (``--max-starting``) is told their
place in line on the page that opens their task, and then gets their app. Real Chromium
(headless, via Playwright) on a real `convtui serve`, with the scripted ``mock:`` model; the
people ahead of them speak the app's protocol themselves (support/raw_client.py)."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import pytest
from support.browser import AnnotatorPage, ServedStudy, browser, served_study
from support.raw_client import RawApp
from support.studies import scripted_study

pytestmark = pytest.mark.timeout(300)

AHEAD = ("ben", "cy", "dee")


async def _waiting(served: ServedStudy, count: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while served.log.read_text(errors="replace").count("waiting for other apps") < count:
        assert time.monotonic() < deadline, served.log.read_text(errors="replace")[-3000:]
        await asyncio.sleep(0.05)


async def _place(page: AnnotatorPage, timeout: float = 30) -> str:
    """What the page says of its place in line, once it says something. Read from here: the
    page's policy forbids the eval that Playwright's wait_for_function polls with."""
    deadline = time.monotonic() + timeout
    while not (told := await page.page.text_content("#queue") or ""):
        assert time.monotonic() < deadline, "the page never said its place in line"
        await asyncio.sleep(0.05)
    return told


def test_a_person_in_line_for_a_start_sees_their_place_then_their_app(tmp_path: Path) -> None:
    db = scripted_study(tmp_path, annotators=("ana", *AHEAD))

    async def scenario(served: ServedStudy) -> None:
        async with browser() as chromium:
            page = await AnnotatorPage.open(chromium, served.url)
            crowd = await asyncio.gather(*(RawApp.open(served, f"token-of-{n}") for n in AHEAD))
            try:
                # One start at a time: one of them starts, two wait, and ana's app, asked for
                # now, waits behind whoever still does.
                await _waiting(served, len(AHEAD) - 1)
                assert await page.sign_in("token-of-ana") == 200
                told = await _place(page)
                assert re.search(r"yours is number [1-3] in line\.$", told), told
                await page.wait_for("waiting for your feedback", timeout=60)
                await asyncio.gather(*(app.drawn() for app in crowd))
            finally:
                await asyncio.gather(*(app.close() for app in crowd))

    with served_study(db, tmp_path, extra=["--max-starting", "1"]) as served:
        asyncio.run(scenario(served))
        assert "Traceback" not in served.log.read_text(errors="replace")
