"""The live or viewed turn's test results: one row per test, the traceback of the chosen row
in a modal (enter)."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable

from convtui.tui import render
from convtui.tui.viewmodels import ResultView, TestRow


class TestResultsTable(DataTable):
    __test__ = False
    help = (
        "One row per test the harness expected, in the order they ran. **enter** opens the "
        "full traceback of the highlighted test."
    )
    BINDING_GROUP_TITLE = "the tests table"
    BINDINGS = [
        Binding(
            "enter",
            "open_traceback",
            "Traceback",
            id="convtui.traceback",
            tooltip="The highlighted test's full traceback",
        ),
    ]

    @dataclass
    class TracebackRequested(Message):
        row: TestRow
        run_detail: str = ""
        """Why the run as a whole went as it did (a test that never ran left no words)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.border_title = "Tests"
        self._rows: tuple[TestRow, ...] = ()
        self._detail = ""

    def on_mount(self) -> None:
        if not self.columns:  # results may have arrived before the table was mounted
            self._add_columns()

    def _add_columns(self, rows: tuple[TestRow, ...] = ()) -> None:
        # Explicit widths: auto-sized columns settle a frame later, so a screen drawn right
        # after new results could show them cut to the header's width.
        name = max([4, *(len(r.name) for r in rows)])
        error = max([23, *(len(r.first_line) for r in rows)])
        self.add_column("status", key="status", width=10)
        self.add_column("test", key="test", width=min(name, 48))
        self.add_column("time", key="time", width=8)
        self.add_column("first line of the error", key="error", width=min(error, 160))

    def show(self, result: ResultView | None, *, note: str = "") -> None:
        # Columns are rebuilt so their widths fit these rows, not the widest turn seen so far.
        self.clear(columns=True)
        self._add_columns(result.rows if result else ())
        self._rows = result.rows if result else ()
        # A test that never ran because the code raised while loading is explained by where
        # it raised, as the execution feedback shows it, not by the bare message.
        self._detail = (result.run_traceback or result.detail) if result else ""
        if result is None:
            self.border_title = "Tests"
            self.border_subtitle = render.title(note)
            return
        for row in result.rows:
            self.add_row(
                Text(render.status_word(row.status)),
                render.shown(row.name),
                Text(render.duration(row.duration_s), justify="right"),
                render.shown(row.first_line, overflow="ellipsis", no_wrap=True),
            )
        self.border_title = f"Tests · {render.status_word(result.status)} · {result.summary}"
        self.border_subtitle = render.title(note or result.detail)

    def action_open_traceback(self) -> None:
        if self._rows and 0 <= self.cursor_row < len(self._rows):
            row = self._rows[self.cursor_row]
            self.post_message(self.TracebackRequested(row, self._detail))
