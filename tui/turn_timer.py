"""The person's time on each turn, as the session screen sees it (recorded with the turn:
sessions/database/human_times.py).

The screen says when a turn first waits for the person (its code and test results are on
screen: phase ``awaiting_feedback``), the composer notes every keystroke that changes its text,
and when the person answers the timer turns both into the times the store records. All
readings come from one injectable clock (``AppServices.clock``, monotonic by default), so the
seconds between two moments never move with the wall clock and tests set every value; UTC
times are that clock's readings placed on the wall clock read once, as the timer was made. No
widgets here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from convtui.core.studies.person_times import typing_seconds
from convtui.sessions.database.human_times import HumanTurnTimes
from convtui.sessions.database.ids import utc_of


class TurnTimer:
    """``clock``: seconds, the app's clock; ``wall``: seconds since the Unix epoch, read once
    to place the clock's readings in UTC."""

    def __init__(self, clock: Callable[[], float], wall: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._epoch = wall() - clock()  # the wall time the clock's reading 0 stands for
        self._shown: dict[int, float] = {}

    def shown(self, idx: int) -> None:
        """Turn ``idx`` waits for the person, its code and results on screen; only the first
        time counts (a turn played again after another window recorded one is the same)."""
        self._shown.setdefault(idx, self._clock())

    def answered(self, idx: int, keystrokes: Sequence[float]) -> HumanTurnTimes:
        """The times of the person's answer to turn ``idx``, sent now; ``keystrokes``: the
        clock's readings at each keystroke of the words sent (none for no words)."""
        sent = self._clock()
        shown = self._shown.get(idx)
        return HumanTurnTimes(
            sent_utc=self._utc(sent),
            shown_utc=None if shown is None else self._utc(shown),
            first_key_utc=self._utc(keystrokes[0]) if keystrokes else None,
            shown_to_sent_s=None if shown is None else sent - shown,
            typing_s=typing_seconds(keystrokes),
            keystrokes=len(keystrokes),
        )

    def _utc(self, reading: float) -> str:
        return utc_of(self._epoch + reading)
