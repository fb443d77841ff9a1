"""The compilation and execution feedback exactly as the model will read it next turn under
the session's Ω, the verbal feedback the turn received, and the model calls the turn made.

Under ``--protocol convcodeworld`` a feedback turn is given its feedback inside the turn (the
previous code compiled, repaired, reviewed by the simulated user): that comes first, as what
the model was given this turn."""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from convtui.core.printable import printable
from convtui.core.turns.record import TurnFeedback
from convtui.sessions.reading.browse import CallLine
from convtui.tui import render
from convtui.tui.viewmodels import TurnView
from convtui.tui.widgets.call_list import CallList


def received_text(given: TurnFeedback) -> Text:
    """What a turn's own calls were given (``Turn.received``); None in a field: not given."""
    text = Text()
    text.append("What the model was given this turn\n", style="bold underline")
    user = "User feedback"
    if given.user_source != "none":
        user += printable(f" · {render.source_label(given.user_source)}")
    for name, value in (
        ("Compilation feedback", given.compilation),
        ("Execution feedback", given.execution),
        (user, given.user),
    ):
        text.append(f"{name}\n", style="bold")
        shown = "(not given)" if value is None else value.rstrip("\n") or "(empty)"
        text.append(printable(shown) + "\n\n")
    return text


def feedback_text(turn: TurnView, *, execution_on: bool, user_inside_turn: bool = False) -> Text:
    """``user_inside_turn``: the simulated user speaks inside the next turn (convcodeworld),
    so this turn's own verbal feedback is always empty."""
    text = Text()
    if turn.received is not None:
        text.append_text(received_text(turn.received))
        text.append("About this turn's code, for the next turn\n", style="bold underline")
    text.append("Compilation feedback\n", style="bold")
    text.append(printable(turn.compile_feedback or "(not compiled yet)") + "\n\n")
    text.append("Execution feedback\n", style="bold")
    if not execution_on:
        text.append("(off under this Ω: the model sees no test results)\n\n")
    else:
        text.append(printable(turn.execution_feedback or "(none yet)") + "\n\n")
    if user_inside_turn and turn.verbal_feedback is None:
        text.append("Verbal feedback\n", style="bold")
        text.append("(the simulated user is asked inside the next turn, about the code it gets)\n")
    elif turn.saved or turn.verbal_feedback is not None:
        text.append("Verbal feedback", style="bold")
        text.append(printable(f" · {render.source_label(turn.feedback_source, turn.edited)}\n"))
        text.append(printable(turn.verbal_feedback or "(none)") + "\n")
        if turn.edited:
            text.append("\nSimulator draft it replaced\n", style="bold")
            text.append(printable(turn.feedback_draft or "") + "\n")
    return text


class FeedbackPane(VerticalScroll):
    help = (
        "What the model will be told about this turn's code under the session's Ω, and the "
        "model calls the turn made (under convcodeworld, first what the model was given inside "
        "the turn)."
    )

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.border_title = "Feedback to the model"

    def compose(self):
        yield Static("", id="feedback-text", markup=False)
        yield CallList(id="call-list")

    def show(
        self,
        turn: TurnView | None,
        *,
        execution_on: bool,
        calls: tuple[CallLine, ...] = (),
        user_inside_turn: bool = False,
    ) -> None:
        body = Text("")
        if turn is not None:
            body = feedback_text(turn, execution_on=execution_on, user_inside_turn=user_inside_turn)
        self.query_one("#feedback-text", Static).update(body)
        self.query_one(CallList).show(calls if turn is not None else ())
