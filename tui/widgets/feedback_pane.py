"""The compilation and execution feedback exactly as the model will read it next turn under
the session's Ω, and the verbal feedback the turn received."""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from convtui.tui import render
from convtui.tui.viewmodels import TurnView


def feedback_text(turn: TurnView, *, execution_on: bool) -> Text:
    text = Text()
    text.append("Compilation feedback\n", style="bold")
    text.append((turn.compile_feedback or "(not compiled yet)") + "\n\n")
    text.append("Execution feedback\n", style="bold")
    if not execution_on:
        text.append("(off under this Ω: the model sees no test results)\n\n")
    else:
        text.append((turn.execution_feedback or "(none yet)") + "\n\n")
    if turn.saved or turn.verbal_feedback is not None:
        text.append("Verbal feedback", style="bold")
        text.append(f" · {render.source_label(turn.feedback_source, turn.edited)}\n")
        text.append((turn.verbal_feedback or "(none)") + "\n")
        if turn.edited:
            text.append("\nSimulator draft it replaced\n", style="bold")
            text.append((turn.feedback_draft or "") + "\n")
    return text


class FeedbackPane(VerticalScroll):
    help = "What the model will be told about this turn's code under the session's Ω."

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.border_title = "Feedback to the model"

    def compose(self):
        yield Static("", id="feedback-text", markup=False)

    def show(self, turn: TurnView | None, *, execution_on: bool) -> None:
        body = feedback_text(turn, execution_on=execution_on) if turn else Text("")
        self.query_one("#feedback-text", Static).update(body)
