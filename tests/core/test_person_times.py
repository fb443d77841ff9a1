"""A person's time per turn (core/studies/person_times.py): typing time from keystrokes, a long
pause counted as thinking, and an annotator's medians over the turns whose times are known."""

from __future__ import annotations

import pytest

from convtui.core.studies.person_times import PAUSE_S, TimeSummary, summarize, typing_seconds


def test_typing_time_is_the_sum_of_the_gaps_between_keystrokes() -> None:
    assert typing_seconds([10.0, 10.5, 11.25, 12.0]) == 2.0


def test_a_pause_longer_than_the_threshold_is_thinking_not_typing() -> None:
    # 1 s, then 17 s of thinking, then 0.5 s: 1.5 s typed.
    assert typing_seconds([0.0, 1.0, 18.0, 18.5]) == 1.5
    # A gap of exactly the threshold is still typing.
    assert typing_seconds([0.0, PAUSE_S]) == PAUSE_S


@pytest.mark.parametrize("keys", [[], [3.0]])
def test_no_keystroke_or_one_types_for_no_time(keys: list[float]) -> None:
    assert typing_seconds(keys) == 0.0


def test_an_annotators_medians_are_over_the_turns_whose_times_are_known() -> None:
    summary = summarize([(30.0, 2.0), (10.0, 0.0), (None, None), (50.0, 8.0), (20.0, 4.0)])

    assert summary == TimeSummary(
        turns=5, measured=4, median_shown_to_sent_s=25.0, median_typing_s=3.0
    )
    assert summary.to_json() == {
        "turns": 5,
        "measured": 4,
        "median_shown_to_sent_s": 25.0,
        "median_typing_s": 3.0,
    }


def test_no_known_times_give_no_median() -> None:
    assert summarize([(None, None)]) == TimeSummary(1, 0, None, None)
    assert summarize([]) == TimeSummary(0, 0, None, None)
