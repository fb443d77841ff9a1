"""The palette's "resume" offers the sessions a person could go back to, not the one open in
front of them: resuming that would only leave it and open it again. Pilot on the scripted
``mock:`` model at 80x24 and 120x40, the hits read as the palette lists them."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot
from tui_harness import (
    AppFactory,
    awaiting_feedback,
    close_palette,
    palette_search,
    play,
    record_one_human_turn,
    wait_until,
)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_resume_lists_the_other_open_sessions_but_not_this_one(
    apps: AppFactory, size: tuple[int, int]
) -> None:
    earlier = record_one_human_turn(apps, "Use statistics.mean.")
    seen: dict[str, object] = {}

    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        seen["open"] = screen.controller.session_id
        titles = await palette_search(pilot, "resume")
        await wait_until(pilot, lambda: any(earlier in t for t in titles()), "the earlier one")
        await pilot.pause(0.2)  # every hit of the search is listed by now
        seen["titles"] = titles()
        await close_palette(pilot)

    play(apps, scenario, size=size)
    titles = seen["titles"]
    assert isinstance(titles, list) and seen["open"] not in (None, earlier)
    assert [t for t in titles if t.startswith("resume: ")] == [t for t in titles if earlier in t], (
        titles
    )
    assert not any(str(seen["open"]) in t for t in titles), titles
