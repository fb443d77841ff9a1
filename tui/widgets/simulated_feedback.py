"""What a simulated user said, shown where a person would have typed it: when a simulator
plays the user (``--user novice|expert``) nobody types, so this takes the composer's place
below the tests instead of a toast over the code."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from convtui.tui.viewmodels import TurnView


class SimulatedFeedback(VerticalScroll):
    """Fed by its screen with ``show_turn``: the turn on screen and the one before it."""

    help = (
        "The simulated user's feedback on a turn's code, as the model receives it with its "
        "next turn. The Feedback tab keeps it with its turn (choose a turn in the timeline)."
    )

    def __init__(self, persona: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self._persona = persona
        self.border_title = f"Feedback · {persona}"
        self.can_focus = True

    def compose(self) -> ComposeResult:
        yield Static("", id="simulated-text", markup=False)

    def show_turn(self, turn: TurnView | None, previous: TurnView | None, *, writing: bool) -> None:
        """The message about ``turn`` (the one on screen), else the one about ``previous``,
        which ``turn`` answers; ``writing`` while the simulator writes about ``turn``."""
        idx = turn.idx if turn is not None else 0
        if turn is not None and turn.verbal_feedback is not None:
            self._show(turn.idx, turn.verbal_feedback)
        elif writing:
            self._wait(f"The {self._persona} is writing about turn {idx}…")
        elif previous is not None and previous.verbal_feedback is not None:
            self._show(previous.idx, previous.verbal_feedback)
        elif turn is not None and turn.saved:
            self._wait(f"No feedback on turn {idx}.")
        else:
            self._wait(f"The {self._persona} speaks once turn {idx}'s tests have run.")

    def _show(self, idx: int, text: str) -> None:
        self.border_title = f"Feedback · {self._persona} on turn {idx}"
        body = text or "(it stayed silent: no feedback on this turn)"
        self.query_one("#simulated-text", Static).update(Text(body))
        self.scroll_home(animate=False)

    def _wait(self, why: str) -> None:
        self.border_title = f"Feedback · {self._persona}"
        self.query_one("#simulated-text", Static).update(Text(why, style="italic"))
