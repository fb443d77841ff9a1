"""The person's time on a turn as the session screen measures it (tui/turn_timer.py), on a
clock the test sets: seconds between the clock's readings, UTC times placed on the wall
clock read once."""

from __future__ import annotations

from tui_harness import Clock

from convtui.sessions.database.human_times import HumanTurnTimes
from convtui.tui.turn_timer import TurnTimer

# 2026-05-09T07:00:00Z, as seconds since the epoch.
WALL = 1_778_310_000.0


def test_times_are_the_clocks_readings_placed_on_the_wall_clock() -> None:
    clock = Clock(100.0)  # the wall clock reads WALL when this clock reads 100
    timer = TurnTimer(clock, wall=lambda: WALL)
    clock.now = 110.0
    timer.shown(0)
    clock.now = 111.0
    timer.shown(0)  # shown again (another window's turn played here): the first counts
    clock.now = 140.0

    times = timer.answered(0, [112.0, 113.0, 130.0, 131.5])

    assert times == HumanTurnTimes(
        sent_utc="2026-05-09T07:00:40.000000Z",
        shown_utc="2026-05-09T07:00:10.000000Z",
        first_key_utc="2026-05-09T07:00:12.000000Z",
        shown_to_sent_s=30.0,
        typing_s=2.5,  # 1 s, a 17 s pause left out, 1.5 s
        keystrokes=4,
    )


def test_an_answer_without_words_has_no_keystrokes_and_a_turn_never_shown_no_showing() -> None:
    clock = Clock(0.0)
    timer = TurnTimer(clock, wall=lambda: WALL)
    clock.now = 5.0

    times = timer.answered(3, [])

    assert times == HumanTurnTimes(
        sent_utc="2026-05-09T07:00:05.000000Z", typing_s=0.0, keystrokes=0
    )
    assert times.unknown_before_sent() == HumanTurnTimes(
        "2026-05-09T07:00:05.000000Z", resumed=True
    )
