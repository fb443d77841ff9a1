"""The line above the footer: which turn, what is happening, elapsed time and Ω (the header
above names the model, whole, whatever its length).
Background results land here too, since notifications time out.

Turns are numbered from 0 everywhere (turn 0 is the first attempt, docs/design.md#vocabulary),
as the timeline's ``T0`` and the code pane's ``turn 0`` are; the status line adds how far into
the budget that turn is: ``turn 2 · 3 of 10``. Once the session has ended it names the last
turn played and how it ended, never a turn that will not come. On a narrow terminal it takes
a second line rather than cut Ω or a note (PartsLine)."""

from __future__ import annotations

from textual.reactive import reactive

from convtui.tui import render
from convtui.tui.widgets.parts_line import PartsLine


class StatusLine(PartsLine):
    # Each may change how many lines the status takes: a change lays the screen out again.
    phase: reactive[str] = reactive("starting", layout=True)
    turn: reactive[int | None] = reactive(0, layout=True)
    """The live turn (or the one about to start), the last one played once the session
    ended, or None when it ended before any turn was recorded."""
    max_turns: reactive[int] = reactive(10, layout=True)
    elapsed_s: reactive[float] = reactive(0.0)
    note: reactive[str] = reactive("", layout=True)
    """The latest background result (an error, a re-run's outcome, a cancel on its way).
    It speaks of the phase it was written in, so a change of phase clears it: "cancelling
    the turn…" must not outlive the cancel, nor an error the retry that followed it."""

    def __init__(self, feedback: str, *, rounds: bool = False, **kwargs) -> None:
        """``feedback`` is what the session gives the model (the Ω label, or what a CodeIF
        session is); ``rounds``: count CodeIF-Bench rounds (from 1) instead of turns."""
        super().__init__(**kwargs)
        self._feedback = feedback
        self._rounds = rounds

    def watch_elapsed_s(self, old: float, new: float) -> None:
        # Every second: laid out again only when the clock grows a digit (00:59 -> 1:00:00).
        if len(render.clock(old)) != len(render.clock(new)):
            self.refresh(layout=True)

    def watch_phase(self, old: str, new: str) -> None:
        if old != new:
            self.note = ""

    def parts(self) -> list[str]:
        busy = self.phase in ("generating", "executing", "simulating", "saving", "starting")
        return [
            (render.round_position if self._rounds else render.turn_position)(
                self.turn, self.max_turns
            ),
            ("⟳ " if busy else "") + render.PHASES.get(self.phase, self.phase),
            render.clock(self.elapsed_s),
            *([self.note] if self.note else []),
            self._feedback,
        ]
