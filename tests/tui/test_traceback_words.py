"""The traceback view says what is true of a test that left no traceback: one that never ran
(the code did not compile) did not pass; each status has its own words (Pilot on a scripted
model whose code does not compile, the real executor; and the words for every status)."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot
from textual.widgets import Static
from tui_harness import BROKEN, HEADER, AppFactory, awaiting_feedback, fenced, play, wait_until

from convtui.core.execution.types import TestStatus
from convtui.tui import render
from convtui.tui.screens.traceback import TracebackModal
from convtui.tui.widgets.results_table import TestResultsTable


def traceback_shown(apps: AppFactory, reply: str, name: str) -> dict[str, str]:
    """The text and title of the traceback view that enter opens on the results table's
    first row, after a turn whose model replied ``reply`` (scripted in the file ``name``)."""
    model = apps.script([reply], name=name)
    shown: dict[str, str] = {}

    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        screen.query_one(TestResultsTable).focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, TracebackModal), "it")
        modal = pilot.app.screen
        parts = modal.query(".traceback-part").exclude("#traceback-name").results(Static)
        shown["text"] = "\n\n".join(str(part.render()) for part in parts)
        shown["title"] = str(modal.query_one(".detail-frame").border_title)

    play(apps, scenario, model=model)
    return shown


def test_enter_on_a_test_that_never_ran_says_so_and_why(apps: AppFactory) -> None:
    shown = traceback_shown(apps, BROKEN, "broken.jsonl")
    assert "NOT RUN" in shown["title"]
    assert "passed" not in shown["text"], shown["text"]
    assert "never ran" in shown["text"]
    assert "does not compile: SyntaxError" in shown["text"]


def test_enter_on_a_test_the_load_error_stopped_shows_where_the_code_raised(
    apps: AppFactory,
) -> None:
    # Compiles, then raises at module level (a Python 2 idiom) before any test runs.
    loads_badly = fenced(
        HEADER + "for k, v in iteritems({}):\n    pass\ndef task_func(LETTERS):\n    return {}\n"
    )
    shown = traceback_shown(apps, loads_badly, "load-error.jsonl")
    assert "never ran" in shown["text"]
    assert "    for k, v in iteritems({}):" in shown["text"], shown["text"]
    assert "NameError: name 'iteritems' is not defined" in shown["text"], shown["text"]


@pytest.mark.parametrize(
    ("status", "says"),
    [
        ("pass", "passed"),
        ("fail", "failed"),
        ("error", "error"),
        ("timeout", "time limit"),
        ("skipped", "skipped"),
        ("missing", "never reported"),
        ("not_run", "never ran"),
    ],
)
def test_each_status_has_words_of_its_own(status: TestStatus, says: str) -> None:
    text = render.traceback_text(status, "", "the code does not compile")
    assert says in text
    if status != "pass":
        assert "passed" not in text
        assert text.endswith("The run: the code does not compile")
    else:  # a passing test is not explained by how the run went
        assert "compile" not in text


def test_a_traceback_is_shown_as_it_is() -> None:
    assert render.traceback_text("fail", "AssertionError: 1 != 2\n") == "AssertionError: 1 != 2"
