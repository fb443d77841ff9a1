"""The line above the footer: which turn, what is happening, elapsed time, model and Ω.
Background results land here too, since notifications time out.

Turns are numbered from 0 everywhere (turn 0 is the first attempt, docs/design.md#vocabulary),
as the timeline's ``T0`` and the code pane's ``turn 0`` are; the status line adds how far into
the budget that turn is: ``turn 2 · 3 of 10``. Once the session has ended it names the last
turn played and how it ended, never a turn that will not come."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from convtui.tui import render


class StatusLine(Static):
    phase: reactive[str] = reactive("starting")
    turn: reactive[int | None] = reactive(0)
    """The live turn (or the one about to start), the last one played once the session
    ended, or None when it ended before any turn was recorded."""
    max_turns: reactive[int] = reactive(10)
    elapsed_s: reactive[float] = reactive(0.0)
    note: reactive[str] = reactive("")
    """The latest background result (an error, a re-run's outcome, a cancel on its way).
    It speaks of the phase it was written in, so a change of phase clears it: "cancelling
    the turn…" must not outlive the cancel, nor an error the retry that followed it."""

    def __init__(self, model: str, feedback: str, *, rounds: bool = False, **kwargs) -> None:
        """``feedback`` is what the session gives the model (the Ω label, or what a CodeIF
        session is); ``rounds``: count CodeIF-Bench rounds (from 1) instead of turns."""
        super().__init__("", markup=False, **kwargs)
        self._model = model
        self._feedback = feedback
        self._rounds = rounds

    def watch_phase(self, old: str, new: str) -> None:
        if old != new:
            self.note = ""

    def render(self) -> Text:
        busy = self.phase in ("generating", "executing", "simulating", "saving", "starting")
        parts = [
            (render.round_position if self._rounds else render.turn_position)(
                self.turn, self.max_turns
            ),
            ("⟳ " if busy else "") + render.PHASES.get(self.phase, self.phase),
            render.clock(self.elapsed_s),
            *([self.note] if self.note else []),
            self._model,
            self._feedback,
        ]
        return render.shown(" · ".join(parts), no_wrap=True, overflow="ellipsis")
