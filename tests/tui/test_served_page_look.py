"""How the served page's own cards look once textual.js has loaded: that script adds its own
``h1`` rule (white on black) to the page, which the cards' title must not take (issue 34).
Real Chromium (headless, via Playwright) on a real `convtui serve`, with the scripted
``mock:`` model."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from support.browser import AnnotatorPage, ServedStudy, browser, served_study, signed_in
from support.studies import scripted_study, study_spec, write_study

pytestmark = pytest.mark.timeout(300)

TITLES = """[...document.querySelectorAll('.card')].map(card => {
  const title = getComputedStyle(card.querySelector('h1'));
  return [title.backgroundColor, title.color, getComputedStyle(card).color];
})"""


def test_the_study_name_on_the_app_pages_cards_has_the_cards_colours(tmp_path: Path) -> None:
    (tmp_path / "replies.jsonl").write_text(json.dumps({"purpose": "generate", "text": "x"}))
    db = tmp_path / "study.db"
    write_study(db, study_spec(model="mock:replies.jsonl", turns=2))
    seen: list[list[str]] = []

    async def scenario(served: ServedStudy) -> None:
        async with signed_in(served) as page:
            # textual.js has run: its rule is in the page, ours must win over it.
            rules = await page.page.evaluate(
                "[...document.querySelectorAll('style')].map(s => s.textContent).join(' ')"
            )
            assert "h1{" in rules.replace(" ", "")
            seen.extend(await page.page.evaluate(TITLES))

    with served_study(db, tmp_path) as served:
        asyncio.run(scenario(served))
    assert len(seen) == 2  # the "opening" card and the "closed" one
    for background, colour, card_colour in seen:
        assert background == "rgba(0, 0, 0, 0)"
        assert colour == card_colour


BOXES = """['#reopen', 'form[action=sign-out] button'].map(selector => {
  const box = document.querySelector(selector).getBoundingClientRect();
  return [box.x, box.y, box.width, box.height];
})"""


def test_the_closed_cards_sign_out_link_sits_on_the_line_of_its_button(tmp_path: Path) -> None:
    """The card a tab shows once the study is opened in another: the sign-out form was a
    column as wide as the card, so the link stood under the button's edge, mid-card."""
    db = scripted_study(tmp_path)
    boxes: list[list[float]] = []

    async def scenario(served: ServedStudy) -> None:
        async with browser() as chromium:
            first = await AnnotatorPage.open(chromium, served.url)
            assert await first.sign_in("token-of-ana") == 200
            await first.wait_for("waiting for your feedback", timeout=60)
            second = await AnnotatorPage.open(chromium, served.url)
            assert await second.sign_in("token-of-ana") == 200
            deadline = time.monotonic() + 30
            # Told why first, then the card shown once the socket has closed.
            while not (
                "another tab" in (await first.page.text_content("#why") or "")
                and await first.page.is_visible("#reopen")
            ):
                assert time.monotonic() < deadline, "the first tab never showed the card"
                await asyncio.sleep(0.1)
            boxes.extend(await first.page.evaluate(BOXES))

    with served_study(db, tmp_path) as served:
        asyncio.run(scenario(served))
    (x, y, width, height), (link_x, link_y, link_width, link_height) = boxes
    assert abs((y + height / 2) - (link_y + link_height / 2)) <= 1, boxes  # one line
    assert x + width + 8 <= link_x <= x + width + 40, boxes  # just right of the button
    assert link_width < width, boxes  # as wide as its words, not the card
