"""A yes/no question; dismisses with the answer."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from convtui.tui.screens.modal_keys import ModalKeys


class ConfirmModal(ModalKeys, ModalScreen[bool]):
    DEFAULT_CSS = """
    ConfirmModal {
        align: center middle;
        & > Vertical {
            width: 64; height: auto; max-width: 90%;
            border: thick $warning; background: $panel; padding: 1 2;
        }
        & #confirm-buttons { height: auto; align-horizontal: right; margin-top: 1; }
        & Button { margin-left: 2; }
    }
    """
    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="convtui.confirm-yes"),
        Binding("n,escape", "answer(False)", "No", id="convtui.confirm-no"),
    ]

    def __init__(self, question: str, yes: str = "Yes", no: str = "No") -> None:
        super().__init__()
        self._question, self._yes, self._no = question, yes, no

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self._question))
            with Horizontal(id="confirm-buttons"):
                yield Button(f"{self._no} (n)", id="no")
                yield Button(f"{self._yes} (y)", id="yes", variant="warning")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
