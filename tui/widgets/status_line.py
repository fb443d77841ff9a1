"""The line above the footer: turn n of N, what is happening, elapsed time, model and Ω.
Background results land here too, since notifications time out."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from convtui.tui import render


class StatusLine(Static):
    phase: reactive[str] = reactive("starting")
    turn: reactive[int] = reactive(0)
    max_turns: reactive[int] = reactive(10)
    elapsed_s: reactive[float] = reactive(0.0)
    note: reactive[str] = reactive("")
    """The latest background result (an error, a re-run's outcome)."""

    def __init__(self, model: str, feedback: str, **kwargs) -> None:
        super().__init__("", markup=False, **kwargs)
        self._model = model
        self._feedback = feedback

    def render(self) -> Text:
        busy = self.phase in ("generating", "executing", "simulating", "saving", "starting")
        parts = [
            f"turn {min(self.turn + 1, self.max_turns)}/{self.max_turns}",
            ("⟳ " if busy else "") + render.PHASES.get(self.phase, self.phase),
            render.clock(self.elapsed_s),
            *([self.note] if self.note else []),
            self._model,
            self._feedback,
        ]
        return Text(" · ".join(parts), no_wrap=True, overflow="ellipsis")
