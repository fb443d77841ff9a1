"""The pure text helpers behind the widgets: no app needed."""

from __future__ import annotations

import pytest

from convtui.core.execution.types import ExecResult, TestOutcome
from convtui.core.turns.record import TurnFeedback
from convtui.tui import render
from convtui.tui.viewmodels import TurnView, result_view


def failing() -> ExecResult:
    return ExecResult(
        "fail",
        (
            TestOutcome("test_ok", "pass", 0.01),
            TestOutcome("test_bad", "fail", 0.02, "Traceback ...\n  x\nAssertionError: 1 != 2\n"),
        ),
    )


@pytest.mark.parametrize(
    ("status", "shown"),
    [
        ("pass", "✓ PASS"),
        ("fail", "✗ FAIL"),
        ("timeout", "⏱ TIMEOUT"),
        ("env_error", "⚠ ENV ERROR"),
    ],
)
def test_a_status_is_a_glyph_and_a_word_never_colour_alone(status, shown):
    assert render.status_word(status) == shown


def test_the_timeline_names_the_result_and_who_gave_the_feedback():
    view = result_view(failing())
    saved = TurnView(2, code="x", result=view, feedback_source="human", saved=True)
    assert render.timeline_label(saved) == "T2 ✗ 1/2 · human"
    edited = TurnView(
        3,
        result=view,
        verbal_feedback="b",
        feedback_source="human",
        feedback_draft="a",
        saved=True,
    )
    assert render.timeline_label(edited) == "T3 ✗ 1/2 · edited draft"
    live = TurnView(4)
    assert render.timeline_label(live, live=True, phase="generating") == "T4 … model is writing"
    simulated = TurnView(1, result=view, feedback_source="simulator:novice:m", saved=True)
    assert render.timeline_label(simulated).endswith("· novice simulator")
    # convcodeworld: the expert spoke inside turn 2, about turn 1's code; turn 1 itself
    # records no feedback of its own.
    received = TurnFeedback(user="Sort it.", user_source="simulator:expert:m")
    inside = TurnView(2, result=view, received=received, saved=True)
    assert render.timeline_label(inside) == "T2 ✗ 1/2 · expert simulator"
    silent = TurnView(3, result=view, received=TurnFeedback(), saved=True)
    assert render.timeline_label(silent) == "T3 ✗ 1/2 · no feedback"


def test_a_row_shows_the_last_line_of_its_traceback():
    [ok, bad] = result_view(failing()).rows
    assert ok.first_line == "" and bad.first_line == "AssertionError: 1 != 2"


def test_the_diff_has_gutters_and_says_when_nothing_changed():
    diff = render.code_diff("a = 1\nb = 2\n", "a = 1\nb = 3\n", previous_idx=0, current_idx=1)
    assert "--- turn 0\n+++ turn 1\n" in diff
    assert "-b = 2\n" in diff and "+b = 3\n" in diff
    same = render.code_diff("x\n", "x\n", previous_idx=0, current_idx=1)
    assert same == "(no change from the previous turn)\n"
    no_newline = render.code_diff("a", "b", previous_idx=0, current_idx=1)
    assert no_newline.endswith("+b\n")


@pytest.mark.parametrize(("seconds", "shown"), [(0, "00:00"), (41.9, "00:41"), (3723, "1:02:03")])
def test_elapsed_time(seconds, shown):
    assert render.clock(seconds) == shown
