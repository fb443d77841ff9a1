"""The full traceback of one test, or what its status means when it left none.

A traceback's lines are never wrapped: its ``^^^`` markers point at columns of the code line
above them, so a line wider than the window scrolls sideways instead (→ ←). The sentences
around it (what a missing traceback means, why the run stopped) wrap to the window, and a
test's name too long for the title is shown whole above them."""

from __future__ import annotations

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from convtui.tui import render
from convtui.tui.screens.detail import DetailModal
from convtui.tui.viewmodels import TestRow

# Cells of a frame's width its title cannot use: the corners and a space either side.
TITLE_MARGIN = 4


class TracebackModal(DetailModal):
    DEFAULT_CSS = """
    TracebackModal {
        .traceback-part { width: 100%; margin-bottom: 1; }
        .traceback-part.-code { width: auto; }
        .traceback-part:last-child { margin-bottom: 0; }
        #traceback-name { display: none; }
        #traceback-name.-shown { display: block; }
    }
    """
    BINDINGS = [Binding("escape,q,enter", "dismiss", "Close", id="convtui.close-traceback")]

    def __init__(self, row: TestRow, run_detail: str = "") -> None:
        super().__init__()
        self._row = row
        self._run_detail = run_detail
        self._title = f"{render.status_word(row.status)} · {row.name}"

    def compose(self) -> ComposeResult:
        row = self._row
        with self.frame(self._title, sideways=True):
            # A repository test's id can be wider than the title: then it is read here.
            yield Static(render.shown(row.name), id="traceback-name", classes="traceback-part")
            for text, wraps in render.traceback_parts(row.status, row.traceback, self._run_detail):
                part = Static(render.shown(text, no_wrap=not wraps), classes="traceback-part")
                part.set_class(not wraps, "-code")
                yield part

    def on_resize(self, event: events.Resize) -> None:
        # After the layout, once the frame has the width this size gives it.
        self.call_after_refresh(self._fit_name)

    def _fit_name(self) -> None:
        width = self.query_one(".detail-frame").size.width
        cut = cell_len(self._title) > width - TITLE_MARGIN
        self.query_one("#traceback-name").set_class(cut, "-shown")
