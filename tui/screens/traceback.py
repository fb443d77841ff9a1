"""The full traceback of one test, or what its status means when it left none.

A traceback's lines are never wrapped: its ``^^^`` markers point at columns of the code line
above them, so a line wider than the window scrolls sideways instead (→ ←)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from convtui.tui import render
from convtui.tui.screens.detail import DetailModal
from convtui.tui.viewmodels import TestRow


class TracebackModal(DetailModal):
    DEFAULT_CSS = """
    TracebackModal #traceback-text { width: auto; }
    """
    BINDINGS = [Binding("escape,q,enter", "dismiss", "Close", id="convtui.close-traceback")]

    def __init__(self, row: TestRow, run_detail: str = "") -> None:
        super().__init__()
        self._row = row
        self._run_detail = run_detail

    def compose(self) -> ComposeResult:
        title = f"{render.status_word(self._row.status)} · {self._row.name}"
        with self.frame(title, sideways=True):
            row = self._row
            text = render.traceback_text(row.status, row.traceback, self._run_detail)
            yield Static(render.shown(text, no_wrap=True), id="traceback-text")
