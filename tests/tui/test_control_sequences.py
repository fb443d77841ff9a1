"""Text is shown, never obeyed, in the app (and so in the page that serves it): the control
characters of a model's reply, its code, a simulator's draft, a task's prompt, a test's name
or a study's names come out as ``␛``… where they are drawn, so nothing can clear the screen,
move the cursor, recolour or retitle it (issue 29, point 5). The store keeps what was written.

The session test plays a scripted model (``mock:``) and runs the task's tests in the real
sandbox; the others draw one widget or modal over values."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import TabbedContent
from tui_harness import (
    HEADER,
    TASK,
    AppFactory,
    awaiting_feedback,
    config_for,
    fenced,
    rows,
    wait_until,
)

from convtui.sessions.studies.study_rows import AssignmentRow
from convtui.tui import make_app
from convtui.tui.app import Launch
from convtui.tui.controller import SessionPlan
from convtui.tui.screens.assignments import AssignmentsModal
from convtui.tui.screens.traceback import TracebackModal
from convtui.tui.viewmodels import ResultView, TestRow
from convtui.tui.widgets.composer import FeedbackComposer
from convtui.tui.widgets.results_table import TestResultsTable

# What a reply paints over a screen: clear it, home the cursor, green words, a window title.
PAINT = "\x1b[2J\x1b[H\x1b[32mALL TESTS PASSED\x1b]0;pwned\x07"
SHOWN = "␛[2J␛[H␛[32mALL"
# BigCodeBench/2's code that fails test_case_5, with the paint in a comment: it compiles.
CODE = HEADER + f"def task_func(LETTERS):\n    # {PAINT}\n    return {{}}\n"
REPLY = f"Done.{PAINT}\x9b2J\r\n" + fenced(CODE)
DRAFT = f"Every letter should be a key.{PAINT}"


def drawn(pilot: Pilot) -> str:
    """The screen as drawn: it may hold ``␛`` but no control character of the text."""
    screen = pilot.app.export_screenshot()
    for code in ("\x1b", "\x9b", "\x07"):
        assert code not in screen, f"{code!r} drawn on {pilot.app.screen}"
    return screen


def test_a_reply_that_paints_the_screen_is_shown_escaped_in_every_pane(apps: AppFactory):
    """Scripted: turn 0 replies REPLY (its code fails a test), the assisting simulator drafts
    DRAFT, turn 1 adds a painted line to the code; the task's prompt carries the paint too."""
    model = apps.script([REPLY, fenced(CODE + f"# again{PAINT}\n")], [DRAFT], name="paint.jsonl")
    services = apps.services(model)
    config = config_for(model=model)
    task = apps.catalog.get(TASK)
    task = replace(task, prompt=task.prompt + PAINT)
    plan = SessionPlan(task, config, "assist:novice")
    app = make_app(services, Launch(apps.catalog, config, "assist:novice", plan))
    seen: dict[str, str] = {}

    async def look(pilot: Pilot, tab: str) -> str:
        pilot.app.screen.query_one("#code-tabs", TabbedContent).active = tab
        await pilot.pause()
        return drawn(pilot)

    async def main() -> None:
        async with app.run_test(size=(140, 50), notifications=True) as pilot:
            screen = await awaiting_feedback(pilot)
            seen["code"] = await look(pilot, "code-tab")
            seen["reply"] = await look(pilot, "reply-tab")
            composer = screen.query_one(FeedbackComposer)
            assert composer.text == DRAFT.replace("\x1b", "␛").replace("\x07", "␇")
            assert "draft by simulator:novice" in composer.border_subtitle
            # Sent as shown, unchanged: it is the simulator's draft as written.
            await pilot.press("ctrl+j")
            await awaiting_feedback(pilot, turn=1)
            seen["diff"] = await look(pilot, "diff-tab")
            screen.viewed = 0
            seen["feedback"] = await look(pilot, "feedback-tab")
            # Every toast passes the app's notify: errors quote names and replies.
            pilot.app.notify(f"unknown annotator ana{PAINT}", markup=False)
            await wait_until(pilot, lambda: bool(pilot.app.screen.query("Toast")), "the toast")
            toast = str(pilot.app.screen.query_one("Toast").render())
            assert f"ana{SHOWN}" in toast
            drawn(pilot)

    asyncio.run(main())
    assert f"#&#160;{SHOWN}" in seen["code"]  # the code, under the task's painted prompt
    assert "Done.␛[2J" in seen["reply"] and "\\x9b2J" in seen["reply"]
    assert "␍" not in seen["reply"]  # its CRLF is a line ending
    assert f"+#&#160;again{SHOWN}" in seen["diff"]
    assert "key.␛[2J" in seen["feedback"]  # the verbal feedback turn 0 was given
    [(reply_kept, code_kept, verbal, source)] = rows(
        apps.db, "SELECT reply, code, verbal_feedback, feedback_source FROM turn_texts"
    )
    assert reply_kept == REPLY and PAINT in code_kept  # the store keeps what was written
    assert verbal == DRAFT and source.startswith("simulator:novice")


class Shows(App):
    """One widget over values, as its screen would feed it."""

    def __init__(self, result: ResultView) -> None:
        super().__init__()
        self.result = result

    def compose(self) -> ComposeResult:
        yield TestResultsTable(id="tests")

    def on_mount(self) -> None:
        self.query_one(TestResultsTable).show(self.result)


def test_test_names_tracebacks_and_study_names_are_shown_escaped():
    row = TestRow(f"test_{PAINT}", "fail", 0.01, f"Traceback\nAssertionError: {PAINT}\n")
    result = ResultView("fail", 0, 1, f"the run: {PAINT}", (row,), 0.01)
    held = AssignmentRow(f"BigCodeBench/2{PAINT}", "ana", 0, None, None, f"ben{PAINT}")

    async def main() -> None:
        app = Shows(result)
        async with app.run_test(size=(140, 30)) as pilot:
            await pilot.pause()
            assert f"test_{SHOWN}" in drawn(pilot)
            app.push_screen(TracebackModal(row, f"stopped: {PAINT}"))
            await pilot.pause()
            assert f"AssertionError:&#160;{SHOWN}" in drawn(pilot)
            app.pop_screen()
            app.push_screen(AssignmentsModal(f"study pilot{PAINT} · ana's assignments", [held]))
            await pilot.pause()
            shown = drawn(pilot)
            assert f"pilot{SHOWN}" in shown and f"ben{SHOWN}" in shown

    asyncio.run(main())
