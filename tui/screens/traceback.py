"""The full traceback of one test."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from convtui.tui import render
from convtui.tui.viewmodels import TestRow


class TracebackModal(ModalScreen[None]):
    DEFAULT_CSS = """
    TracebackModal {
        align: center middle;
        & > VerticalScroll {
            width: 90%; height: 80%;
            border: thick $primary; background: $panel; padding: 0 1;
        }
    }
    """
    BINDINGS = [Binding("escape,q,enter", "dismiss", "Close", id="convtui.close-traceback")]

    def __init__(self, row: TestRow) -> None:
        super().__init__()
        self._row = row

    def compose(self) -> ComposeResult:
        scroll = VerticalScroll()
        scroll.border_title = f"{render.status_word(self._row.status)} · {self._row.name}"
        scroll.border_subtitle = "escape closes"
        with scroll:
            yield Static(Text(self._row.traceback or "(no traceback: the test passed)"))
