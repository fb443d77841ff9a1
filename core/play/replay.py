"""Static replay (ConvCodeBench): a target model played against a reference session's
recorded turns instead of a live user (docs/design.md#metrics; ConvCodeWorld ``run.py --option
static`` and ``pot.py``).

At turn t >= 1 the target is handed the reference's turn t-1 — its code, its recorded
verdict and the feedback recorded for it — and writes the next code; the target's own earlier
turns are never shown to it. Where the reference's turn t-1 passed, the target's turn t is
that code, with no model call. Turn 0 is the target's own first attempt. No simulator or
person is ever asked: the recorded words are reused verbatim.

This module holds the rules that do not touch a model: when a replayed session ends, and
which recorded words a ConvCodeWorld turn is given. The turn itself is played by
``ReplayTurn`` (replay_turn.py), the policy ``SessionLoop`` (loop.py) picks for every turn
after the first when it is given the reference's turns as ``reference``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from convtui.core.feedback.prompts import feedback_message
from convtui.core.settings.config import SessionConfig, SessionStatus
from convtui.core.turns.record import Turn

REPLAY_NOTE = "static replay: given the reference's turn {turn} and the feedback recorded for it"
CARRIED_NOTE = (
    "static replay: the reference's turn {turn} passed, so its code is this turn's, with no "
    "model call (as ConvCodeBench hands it on)"
)


@dataclass(frozen=True)
class RecordedFeedback:
    """The words a reference's user said inside a ConvCodeWorld turn (None: nothing was
    said, e.g. a novice with nothing to add) and who said them."""

    text: str | None
    source: str


def recorded_user_feedback(reference: Sequence[Turn], idx: int) -> RecordedFeedback:
    """What a ConvCodeWorld replay's turn ``idx`` is told in the user's place.

    ConvCodeWorld's simulator speaks inside the turn it feeds, so the words a turn idx of the
    replay reuses are the ones recorded with the reference's turn idx (``run.py`` reads the
    reference's ITER=idx file). A reference recorded under the convtui protocol speaks at the
    end of a turn instead: its turn idx-1 holds them."""
    received = reference[idx].received if idx < len(reference) else None
    if received is not None:
        return RecordedFeedback(received.user, received.user_source)
    previous = reference[idx - 1]
    return RecordedFeedback(previous.verbal_feedback, previous.feedback_source)


def carried(turn: Turn, reference: Sequence[Turn]) -> bool:
    """Whether ``turn`` of a replay took the reference's passing code (no model call)."""
    return 0 < turn.idx <= len(reference) and reference[turn.idx - 1].passed


def replay_status(turn: Turn, reference: Sequence[Turn], config: SessionConfig) -> SessionStatus:
    """A replayed session's status after ``turn``.

    - ``solved`` once a turn took the reference's passing code (every later turn would take
      it again); under the convtui protocol also when the target's own code passes. Under
      convcodeworld the target plays on after its own pass, as ConvCodeBench does: its static
      Pass@1 is per turn, and the next turn starts from the reference's code again.
    - ``exhausted`` after the last turn of ``config.max_turns``.
    - ``stalled`` when the reference's log ends before the next turn's input, or (convtui)
      when the reference's turn carries no feedback the target could act on, as a live
      session stalls there.
    """
    if turn.passed and (carried(turn, reference) or config.protocol != "convcodeworld"):
        return "solved"
    if turn.idx + 1 >= config.max_turns:
        return "exhausted"
    if turn.idx >= len(reference):
        return "stalled"
    given = reference[turn.idx]
    if given.passed:
        return "running"
    if config.protocol == "convcodeworld":
        wants_words = config.feedback.verbal != "none"
        recorded = turn.idx + 1 < len(reference) and reference[turn.idx + 1].received is not None
        return "stalled" if wants_words and not recorded else "running"
    return "running" if feedback_message(given) else "stalled"
