"""The full traceback of one test."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from convtui.tui import render
from convtui.tui.screens.detail import DetailModal
from convtui.tui.viewmodels import TestRow


class TracebackModal(DetailModal):
    BINDINGS = [Binding("escape,q,enter", "dismiss", "Close", id="convtui.close-traceback")]

    def __init__(self, row: TestRow) -> None:
        super().__init__()
        self._row = row

    def compose(self) -> ComposeResult:
        title = f"{render.status_word(self._row.status)} · {self._row.name}"
        with self.frame(title):
            yield Static(Text(self._row.traceback or "(no traceback: the test passed)"))
