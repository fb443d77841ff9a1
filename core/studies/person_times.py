"""A person's time per turn: how typing time is counted from keystrokes, and how a study
report sums up an annotator's times. Pure functions; the app takes the keystrokes
(tui/turn_timer.py), the store keeps the times (sessions/database/human_times.py)."""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

# A gap between two keystrokes longer than this is a pause, counted as thinking, not typing.
# Keystroke-logging studies of writing commonly take 2 s as the pause threshold; a person
# writing feedback on code glances at the code or a traceback mid-sentence, which takes
# longer than a glance at one's own text, so we take 5 s: a gap that long is reading or
# deciding (which ``shown_to_sent_s`` covers), not the rhythm of typing.
PAUSE_S = 5.0


def typing_seconds(keystrokes: Sequence[float], pause_s: float = PAUSE_S) -> float:
    """Seconds spent typing: the sum of the intervals between consecutive ``keystrokes``
    (times in seconds, in order), leaving out every gap longer than ``pause_s``. One
    keystroke, or none, types for 0 s."""
    return sum(
        later - earlier
        for earlier, later in itertools.pairwise(keystrokes)
        if later - earlier <= pause_s
    )


@dataclass(frozen=True)
class TimeSummary:
    """One annotator's times per turn: ``turns`` they answered with times recorded,
    ``measured`` of them whose times are known (a turn shown before its session was reopened
    is not), and the medians over the measured ones (None when there are none)."""

    turns: int
    measured: int
    median_shown_to_sent_s: float | None
    median_typing_s: float | None

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def summarize(times: Iterable[tuple[float | None, float | None]]) -> TimeSummary:
    """The summary of turns given as ``(shown_to_sent_s, typing_s)``, None where unknown; a
    turn is measured when both are known."""
    given = list(times)
    known = [(shown, typing) for shown, typing in given if shown is not None and typing is not None]
    return TimeSummary(
        len(given),
        len(known),
        statistics.median(s for s, _ in known) if known else None,
        statistics.median(t for _, t in known) if known else None,
    )
