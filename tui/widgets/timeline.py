"""One line per turn: number, pass/fail, tests passed, who gave the feedback."""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from convtui.tui import render


class TurnTimeline(OptionList):
    help = (
        "Every turn of the session. Choose one to view it read-only; **end** returns to the "
        "live turn."
    )
    BINDING_GROUP_TITLE = "the turn timeline"
    BINDINGS = [
        Binding(
            "[",
            "cursor_up",
            "Previous turn",
            id="convtui.previous-turn",
            show=False,
            tooltip="Highlight the turn before (enter views it)",
        ),
        Binding(
            "]",
            "cursor_down",
            "Next turn",
            id="convtui.next-turn",
            show=False,
            tooltip="Highlight the turn after (enter views it)",
        ),
        Binding(
            "enter",
            "select",
            "View turn",
            id="convtui.view-turn",
            show=False,
            tooltip="View the highlighted turn read-only",
        ),
        Binding(
            "end",
            "live",
            "Live turn",
            id="convtui.timeline-live",
            show=False,
            tooltip="Back to the live turn",
        ),
    ]

    @dataclass
    class TurnSelected(Message):
        idx: int

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.border_title = "Turns"

    def set_turns(self, labels: list[str], highlighted: int | None, max_turns: int) -> None:
        self.clear_options()
        self.add_options(
            Option(render.title(label), id=f"turn-{i}") for i, label in enumerate(labels)
        )
        if highlighted is not None and 0 <= highlighted < len(labels):
            self.highlighted = highlighted
        self.border_subtitle = f"{len(labels)} / {max_turns}"

    def action_live(self) -> None:
        """The last row is the live turn (or the last recorded one): show it."""
        if self.option_count:
            self.highlighted = self.option_count - 1
            self.post_message(self.TurnSelected(self.option_count - 1))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.post_message(self.TurnSelected(event.option_index))
