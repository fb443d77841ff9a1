"""A turn the store refused because another window on the same session (a second browser
tab, the terminal app beside the served one) recorded it first, and what the person is told
about it. What the store holds wins; the person's words for the refused turn are never
dropped without a word: they wait in the composer for the turn the store now waits for, or,
once the session has ended there, they are shown so they can be copied."""

from __future__ import annotations

from dataclasses import dataclass

from convtui.core.settings.config import SessionStatus
from convtui.tui import render


@dataclass(frozen=True)
class Refusal:
    idx: int
    """The turn this window played and the store had already recorded."""
    words: str
    """What the person sent with it ("" when they sent no words, or a simulator spoke)."""
    kept_for: int | None
    """The turn whose unsent words now hold them (sessions/database/typed.py); None when not
    kept."""
    ended: SessionStatus | None
    """How the session ended in the store, when it has; None while it goes on."""
    status: SessionStatus = "running"
    """The session's status the refused turn would have set: the person may have accepted
    the code or given up with it, which was not done either."""


def _turn(idx: int, rounds: bool) -> str:
    # CodeIF-Bench counts rounds from 1, as its checklist does; turns count from 0 (T0).
    return f"round {idx + 1}" if rounds else f"turn {idx}"


_CHOSE = {
    "accepted": "You had accepted the code as solved; the session was not closed by it.",
    "abandoned": "You had given up on the task; the session was not closed by it.",
}


def notice(refusal: Refusal, *, rounds: bool = False) -> str:
    """The full story, for a notification: which turn, who recorded it, what became of the
    person's words (quoted when they could not be kept, so they can be copied)."""
    turn = _turn(refusal.idx, rounds)
    lines = [
        f"{turn.capitalize()} was already recorded by another window of yours on this "
        "session (another tab, or the app in a terminal). Its record is kept, and this "
        "window now shows the session as recorded."
    ]
    if refusal.status in _CHOSE:
        lines.append(_CHOSE[refusal.status])
    if refusal.kept_for is not None:
        lines.append(
            f"Your words were not sent: they are back in the composer for "
            f"{_turn(refusal.kept_for, rounds)}, marked “restored: not sent yet”."
        )
    elif refusal.words:
        why = (
            f"the session has ended there ({render.PHASES.get(refusal.ended, refusal.ended)})"
            if refusal.ended is not None
            else "they could not be kept for the next turn"
        )
        lines.append(
            f"Your words were not sent, and {why}. Here they are to copy (they stay in the "
            f"composer too):\n\n{refusal.words}"
        )
    else:
        lines.append("You had sent no words with it, so none are lost.")
    return "\n\n".join(lines)


def note(refusal: Refusal, *, rounds: bool = False) -> str:
    """One line for the status line."""
    turn = _turn(refusal.idx, rounds)
    if refusal.kept_for is not None:
        return f"{turn} was recorded in another window; your words wait in the composer"
    if refusal.words:
        return f"{turn} was recorded in another window; your words are in the composer to copy"
    return f"{turn} was recorded in another window"
