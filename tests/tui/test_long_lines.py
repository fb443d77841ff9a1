"""Every character of a long line can be read (issue 34, point 1): the Code, Diff and Reply
tabs scroll sideways, and w wraps them instead; a traceback scrolls sideways and never wraps,
so its ``^^^`` markers stay under what they point at.

Scripted: turn 0's reply is BigCodeBench/2 code with one line far wider than the pane (it
fails a test, so the session waits for feedback). Read from the screen as drawn, so a line
cut at the pane's edge fails the check whatever the widgets hold."""

from __future__ import annotations

import pytest
from scripted import ScriptedApps, run, screen_of
from textual import events
from textual.containers import ScrollableContainer
from textual.pilot import Pilot
from textual.widgets import TabbedContent
from tui_harness import HEADER, awaiting_feedback, fenced, screen_text, wait_until

from convtui.tui.screens.help import HelpModal
from convtui.tui.screens.traceback import TracebackModal
from convtui.tui.viewmodels import TestRow
from convtui.tui.widgets.code_pane import CodePane

pytestmark = pytest.mark.slow

TAIL = "and-this-is-where-the-line-ends"
LONG_LINE = (
    "    return {key: [random.randint(0, 10) for _ in range(len(LETTERS))] for key in LETTERS"
    " if key}  # every letter is a key with a list of random integers, " + TAIL
)
START = "return {key: [random.randint"
LONG = fenced(HEADER + "def task_func(LETTERS):\n" + LONG_LINE + "\n")
SIZES = [(80, 24), (120, 40)]


def shown(pilot: Pilot, words: str) -> bool:
    return any(words in row for row in screen_text(pilot.app))


async def press_quickly(pilot: Pilot, key: str, times: int) -> None:
    """``key`` pressed ``times`` times: each the key event ``Pilot.press`` posts, then the
    screen's refresh that a key's scroll waits for (what makes the next key scroll from where
    this one left it), without Pilot's two waits for an idle process (40 ms a key at least);
    Pilot's pause after the last."""
    for _ in range(times):
        event = events.Key(key, None)
        event.set_sender(pilot.app)
        pilot.app.post_message(event)
        await pilot._wait_for_screen()
        pilot.app.screen._on_timer_update()
        await pilot._wait_for_screen()
    await pilot.pause()


async def scroll_right_until(pilot: Pilot, words: str, presses: int = 300) -> bool:
    """Press ↓ until the long line's start is drawn (a short screen shows few rows), then →
    (the focused pane scrolls sideways) until ``words`` is drawn."""
    for _ in range(20):
        if shown(pilot, START):
            break
        await pilot.press("down")
    for _ in range(0, presses, 5):
        if shown(pilot, words):
            return True
        await press_quickly(pilot, "right", 5)
    await pilot.pause()
    return shown(pilot, words)


async def on_tab(pilot: Pilot, tab: str) -> ScrollableContainer:
    screen = screen_of(pilot)
    screen.query_one("#code-tabs", TabbedContent).active = f"{tab}-tab"
    scroll = screen.query_one(f"#{tab}-scroll", ScrollableContainer)
    scroll.focus()
    scroll.scroll_home(animate=False)
    await pilot.pause()
    return scroll


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("tab", ["code", "reply"])
def test_the_end_of_a_long_line_is_reached_by_scrolling_sideways(
    scripted: ScriptedApps, tab: str, size: tuple[int, int]
) -> None:
    async def scenario(pilot: Pilot) -> None:
        await awaiting_feedback(pilot)
        await on_tab(pilot, tab)
        assert not shown(pilot, TAIL), "the line fits the pane: the test shows nothing"
        assert await scroll_right_until(pilot, TAIL), f"the {tab} tab cuts the line"

    run(scripted.app([LONG]), scenario, size=size)


@pytest.mark.parametrize("tab", ["code", "reply"])
def test_w_wraps_long_lines_and_the_footer_and_help_say_so(
    scripted: ScriptedApps, tab: str
) -> None:
    async def scenario(pilot: Pilot) -> None:
        await awaiting_feedback(pilot)
        await on_tab(pilot, tab)
        assert not shown(pilot, TAIL)
        await wait_until(pilot, lambda: "w Wrap" in screen_text(pilot.app)[-1], "footer", 60)
        await pilot.press("w", "end")  # wrapped, the line's end is rows further down
        await wait_until(pilot, lambda: shown(pilot, TAIL), "the wrapped line's end", 60)
        assert screen_of(pilot).query_one(CodePane).has_class("-wrap")
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, HelpModal), "help", 60)
        # The help window has a footer of its own now: "Wrap" must come from its rows,
        # read page by page down the window.
        help_rows = []
        for _ in range(6):
            await pilot.pause()
            help_rows += screen_text(pilot.app)
            await pilot.press("pagedown")
        assert any("Wrap" in row for row in help_rows), "\n".join(help_rows)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("w")  # back to one row per line, scrolled sideways
        await wait_until(pilot, lambda: not shown(pilot, TAIL), "lines unwrapped", 60)

    run(scripted.app([LONG]), scenario, size=(100, 30))


# A traceback as Python 3.11+ writes it: the caret line marks part of the code line above.
TARGET = "LETTERS.items()"
CODE_LINE = (
    "    return {key: [random.randint(0, 10) for _ in range(len(LETTERS))] "
    "for key, value in " + TARGET + " if value}  # " + TAIL
)
CARETS = " " * CODE_LINE.index(TARGET) + "^" * len(TARGET)
TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/tmp/run/test_module.py", line 9, in test_case_1\n'
    "    result = task_func(LETTERS)\n"
    '  File "/tmp/run/candidate.py", line 5, in task_func\n'
    f"{CODE_LINE}\n{CARETS}\n"
    "AttributeError: 'list' object has no attribute 'items'\n"
)


@pytest.mark.parametrize("size", SIZES)
def test_a_tracebacks_carets_stay_under_the_code_they_point_at(
    scripted: ScriptedApps, size: tuple[int, int]
) -> None:
    row = TestRow("test_case_1", "error", 0.01, TRACEBACK)

    async def scenario(pilot: Pilot) -> None:
        await awaiting_feedback(pilot)
        pilot.app.push_screen(TracebackModal(row))
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, TracebackModal), "modal")
        await pilot.pause()
        assert not shown(pilot, TAIL)
        assert await scroll_right_until(pilot, TAIL), "the traceback cuts its code line"
        # Scrolled until the line's end shows, its target shows too (they are close), and
        # the carets are in the target's columns, on the row below.
        drawn = screen_text(pilot.app)
        [code_row] = [i for i, text in enumerate(drawn) if TAIL in text]
        column = drawn[code_row].find(TARGET)
        assert column >= 0, drawn[code_row]
        carets = drawn[code_row + 1][column : column + len(TARGET)]
        assert carets == "^" * len(TARGET), (drawn[code_row], drawn[code_row + 1])

    run(scripted.app([LONG]), scenario, size=size)
