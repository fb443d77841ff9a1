"""A person's time on each turn they answer, measured by the app on the clock the test sets
(AppServices.clock) and recorded with the turn (table ``human_turn_times``): from the turn's
code and results shown to the feedback sent, and the typing, a long pause left out. Human and
assisted sessions have them, a simulator's none, and a session reopened after a turn was shown
records only what it knows of that turn. Scripted model (the ``apps`` fixture's: turn 0 fails
a test), real sandbox, real SQLite store in tmp_path."""

from __future__ import annotations

from datetime import datetime

import pytest
from textual.pilot import Pilot
from tui_harness import (
    NOVICE_SAYS,
    AppFactory,
    Clock,
    awaiting_feedback,
    phase_is,
    play,
    rows,
    wait_until,
)

pytestmark = pytest.mark.slow

TIMES = (
    "SELECT turn_idx, shown_utc, first_key_utc, sent_utc, shown_to_sent_s, typing_s, "
    "keystrokes, resumed FROM human_turn_times ORDER BY turn_idx"
)


def seconds(later: str | None, earlier: str | None) -> float:
    assert later is not None and earlier is not None
    return (datetime.fromisoformat(later) - datetime.fromisoformat(earlier)).total_seconds()


async def keys_at(pilot: Pilot, clock: Clock, *pressed: tuple[float, str]) -> None:
    """Press each key when the clock reads its time."""
    for now, key in pressed:
        clock.now = now
        await pilot.press(key)


def test_a_persons_turns_record_the_clocks_times_and_leave_out_a_long_pause(
    apps: AppFactory,
) -> None:
    """Turn 0: shown at 10, keys at 12, 13, (17 s of thinking) 30, 31, sent at 40. Turn 1:
    keys at 41 and 42, then ctrl+g goes on without words at 50: the words and their keys wait
    for turn 2, where one more key at 51 and the sending at 60 end them."""
    clock = Clock(10.0)

    async def scenario(pilot: Pilot) -> None:
        await awaiting_feedback(pilot)
        await keys_at(pilot, clock, (12.0, "a"), (13.0, "b"), (30.0, "c"), (31.0, "d"))
        await keys_at(pilot, clock, (40.0, "ctrl+j"))
        await awaiting_feedback(pilot, turn=1)
        await keys_at(pilot, clock, (41.0, "x"), (42.0, "y"), (50.0, "ctrl+g"))
        await awaiting_feedback(pilot, turn=2)
        await keys_at(pilot, clock, (51.0, "z"), (60.0, "ctrl+j"))
        await awaiting_feedback(pilot, turn=3)

    play(apps, scenario, clock=clock, turns=5)

    said = rows(apps.db, "SELECT idx, verbal_feedback FROM turns ORDER BY idx")
    assert said[:3] == [(0, "abcd"), (1, None), (2, "xyz")]
    first, second, third = rows(apps.db, TIMES)
    assert first[0] == 0 and first[4:] == (30.0, 2.0, 4, 0)
    assert seconds(first[3], first[1]) == 30.0 and seconds(first[2], first[1]) == 2.0
    # Shown at 40, sent at 50; the keys typed meanwhile went with the words of turn 2.
    assert second[0] == 1 and second[2] is None and second[4:] == (10.0, 0.0, 0, 0)
    # 1 s from x to y, the 9 s to z a pause; the first key came before the turn was shown.
    assert third[0] == 2 and third[4:] == (10.0, 1.0, 3, 0)
    assert seconds(third[2], third[1]) == -9.0


def test_an_assisted_turn_counts_the_persons_keys_not_the_draft(apps: AppFactory) -> None:
    clock = Clock(10.0)

    async def scenario(pilot: Pilot) -> None:
        await awaiting_feedback(pilot)  # the novice's draft is in the composer
        await keys_at(pilot, clock, (15.0, "x"), (16.0, "backspace"), (17.0, "y"))
        await keys_at(pilot, clock, (20.0, "ctrl+j"))
        await awaiting_feedback(pilot, turn=1)

    play(apps, scenario, clock=clock, user="assist:novice")

    [(draft, said, source)] = rows(
        apps.db, "SELECT feedback_draft, verbal_feedback, feedback_source FROM turns"
    )
    assert (draft, said, source) == (NOVICE_SAYS, NOVICE_SAYS + "y", "human")
    [times] = rows(apps.db, TIMES)
    assert times[0] == 0 and times[4:] == (10.0, 2.0, 3, 0)


def test_a_simulated_users_turns_have_no_times(apps: AppFactory) -> None:
    async def scenario(pilot: Pilot) -> None:
        await wait_until(pilot, phase_is(pilot, "exhausted", "solved"), "the session to end")

    play(apps, scenario, clock=Clock(0.0), user="novice")

    assert rows(apps.db, "SELECT count(*) FROM turns") == [(3,)]
    assert rows(apps.db, TIMES) == []


def test_a_turn_shown_before_the_app_closed_records_only_its_sending(apps: AppFactory) -> None:
    """The person typed at turn 0 and the app closed; reopened, they send the words kept:
    when the turn was first shown and how long they typed before are unknown, so only the
    sending is recorded. Turn 1, shown after reopening, is measured in full."""
    seen: dict[str, str] = {}

    async def first_visit(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        seen["session"] = str(screen.controller.session_id)
        await pilot.press("a", "b")
        await wait_until(
            pilot, lambda: rows(apps.db, "SELECT text FROM typed_feedback") == [("ab",)], "kept"
        )
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: pilot.app.return_code is not None, "the app to exit")

    clock = Clock(100.0)

    async def reopened(pilot: Pilot) -> None:
        await awaiting_feedback(pilot)
        await keys_at(pilot, clock, (105.0, "c"), (110.0, "ctrl+j"))
        await awaiting_feedback(pilot, turn=1)
        await keys_at(pilot, clock, (111.0, "d"), (112.0, "e"), (120.0, "ctrl+j"))
        # Turn 2 is the last of three: nobody is asked about it.
        await wait_until(pilot, phase_is(pilot, "exhausted"), "the session to end")

    play(apps, first_visit, clock=Clock(0.0))
    play(apps, reopened, clock=clock, resume=seen["session"])

    assert rows(apps.db, "SELECT verbal_feedback FROM turns ORDER BY idx")[:2] == [
        ("abc",),
        ("de",),
    ]
    before, after = rows(apps.db, TIMES)
    assert before[0] == 0 and before[3] is not None
    assert (before[1], before[2], *before[4:]) == (None, None, None, None, None, 1)
    assert after[0] == 1 and after[4:] == (10.0, 1.0, 2, 0)
