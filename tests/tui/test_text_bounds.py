"""How much text a person can put into the composer (tui/text_bounds.py): what fits of an
edit, and the composer keeping to it under Pilot, saying so. The served side, pastes through a
real `convtui serve`, is test_served_app_bounds.py."""

from __future__ import annotations

import asyncio

from textual import events
from textual.app import App, ComposeResult

from convtui.tui.text_bounds import MAX_FEEDBACK_CHARS, fitted
from convtui.tui.widgets.composer import FeedbackComposer


def test_an_edit_keeps_what_fits_and_a_long_text_may_shrink_but_not_grow() -> None:
    assert fitted("abc", length=5, removed=0, limit=10) == "abc"
    assert fitted("abcdef", length=5, removed=0, limit=10) == "abcde"
    assert fitted("abcdef", length=5, removed=2, limit=10) == "abcdef"  # over a selection
    assert fitted("x", length=10, removed=0, limit=10) == ""
    assert fitted("xy", length=12, removed=1, limit=10) == "x"  # a long draft stays as long
    assert fitted("", length=12, removed=3, limit=10) == ""


class ComposerApp(App[None]):
    def compose(self) -> ComposeResult:
        yield FeedbackComposer()


def test_the_composer_cuts_a_paste_refuses_keys_past_its_bound_and_says_so() -> None:
    asyncio.run(_cut_refused_and_said())


async def _cut_refused_and_said() -> None:
    app = ComposerApp()
    async with app.run_test() as pilot:
        composer = app.query_one(FeedbackComposer)
        composer.focus()
        composer.post_message(events.Paste("fix it " * 6000))  # 42,000 characters
        await pilot.pause()
        assert len(composer.text) == MAX_FEEDBACK_CHARS
        notices = [n.message for n in app._notifications]
        assert notices and "32 KiB" in notices[0] and "left out" in notices[0]
        await pilot.press("a")
        assert len(composer.text) == MAX_FEEDBACK_CHARS
        await pilot.press("backspace")
        assert len(composer.text) == MAX_FEEDBACK_CHARS - 1
        assert len(composer.keystrokes) == 2  # the paste and the deletion changed the text
        # A draft the app puts in may be longer; it can be edited down, never up.
        composer.offer_draft("d" * (MAX_FEEDBACK_CHARS + 10), "simulator:novice", replace=True)
        await pilot.press("a", "backspace", "backspace")
        assert len(composer.text) == MAX_FEEDBACK_CHARS + 8
