"""One line per turn: number, pass/fail, tests passed, who gave the feedback."""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option


class TurnTimeline(OptionList):
    help = (
        "Every turn of the session. Choose one to view it read-only; **end** returns to the "
        "live turn."
    )
    BINDINGS = [
        Binding("[", "cursor_up", "Previous turn", show=False),
        Binding("]", "cursor_down", "Next turn", show=False),
        Binding("end", "live", "Live turn", show=False),
    ]

    @dataclass
    class TurnSelected(Message):
        idx: int

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.border_title = "Turns"

    def set_turns(self, labels: list[str], highlighted: int | None, max_turns: int) -> None:
        self.clear_options()
        self.add_options(Option(label, id=f"turn-{i}") for i, label in enumerate(labels))
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
