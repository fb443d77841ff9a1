"""What a simulated user said, shown where a person would have typed it: when a simulator
plays the user (``--user novice|expert``) nobody types, so this takes the composer's place
below the tests instead of a toast over the code.

Under ``--protocol convcodeworld`` the simulated user is asked inside each feedback turn
(about the previous code, or a repair of it) and its words are recorded with that turn
(``TurnView.received``): the pane shows them with the turn that was given them."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from convtui.tui import render
from convtui.tui.viewmodels import TurnView


class SimulatedFeedback(VerticalScroll):
    """Fed by its screen with ``show_turn``: the turn on screen and the one before it."""

    help = (
        "The simulated user's feedback on a turn's code, as the model receives it with its "
        "next turn. The Feedback tab keeps it with its turn (choose a turn in the timeline)."
    )

    def __init__(self, persona: str, *, inside_turn: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        self._persona = persona
        self._inside_turn = inside_turn
        self.border_title = f"Feedback · {persona}"
        self.can_focus = True

    def compose(self) -> ComposeResult:
        yield Static("", id="simulated-text", markup=False)

    def show_turn(self, turn: TurnView | None, previous: TurnView | None, *, writing: bool) -> None:
        """The message about ``turn`` (the one on screen), else the one about ``previous``,
        which ``turn`` answers; ``writing`` while the simulator writes about ``turn``."""
        if self._inside_turn:
            self._show_inside(turn)
            return
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

    def _show_inside(self, turn: TurnView | None) -> None:
        """convcodeworld: the words ``turn``'s own calls were given, once it is saved."""
        idx = turn.idx if turn is not None else 0
        given = turn.received if turn is not None else None
        if given is not None and given.user is not None:
            self._show(idx, given.user, where="inside turn")
        elif idx == 0:
            self._wait(f"Turn 0 asks no user: the {self._persona} speaks inside turn 1.")
        elif turn is not None and turn.saved:
            self._wait(f"The {self._persona} was not asked inside turn {idx}.")
        else:
            self._wait(
                f"The {self._persona} is asked inside turn {idx}; its words show once the "
                "turn is saved."
            )

    def _show(self, idx: int, text: str, *, where: str = "on turn") -> None:
        self.border_title = f"Feedback · {self._persona} {where} {idx}"
        body = text or "(it stayed silent: no feedback on this turn)"
        self.query_one("#simulated-text", Static).update(render.shown(body))
        self.scroll_home(animate=False)

    def _wait(self, why: str) -> None:
        self.border_title = f"Feedback · {self._persona}"
        self.query_one("#simulated-text", Static).update(Text(why, style="italic"))
