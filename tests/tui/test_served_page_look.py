"""How the served page's own cards look once textual.js has loaded: that script adds its own
``h1`` rule (white on black) to the page, which the cards' title must not take (issue 34).
Real Chromium (headless, via Playwright) on a real `convtui serve`, with the scripted
``mock:`` model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from support.browser import ServedStudy, served_study, signed_in
from support.studies import study_spec, write_study

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
