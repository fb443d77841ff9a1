"""An annotator's assignments in a study, in their order: each task, how far it got, and the
status of the session that answers it."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from convtui.core.printable import printable
from convtui.sessions.studies.study_rows import AssignmentRow
from convtui.tui import render
from convtui.tui.screens.detail import DetailModal

_STATE_STYLE = {"done": "green", "started": "bold", "pending": "dim", "reassigned": "yellow"}


def assignments_table(rows: Sequence[AssignmentRow]) -> Table:
    table = Table(header_style="bold", expand=False, box=None, padding=(0, 2, 0, 0))
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("task", no_wrap=True)
    table.add_column("state", no_wrap=True)
    table.add_column("session", no_wrap=True)
    for n, row in enumerate(rows, 1):
        state = Text(row.state, style=_STATE_STYLE.get(row.state, ""))
        if row.reassigned_to:
            state.append(printable(f" to {row.reassigned_to}"))
        session = f"{row.session_status} · {row.session_id}" if row.session_id else "not started"
        table.add_row(str(n), render.shown(row.task_id), state, render.shown(session))
    return table


class AssignmentsModal(DetailModal):
    BINDINGS = [Binding("escape,q,f4", "dismiss", "Close", id="convtui.close-assignments")]

    def __init__(self, title: str, rows: Sequence[AssignmentRow], note: str = "") -> None:
        super().__init__()
        self._title = title
        self._rows = list(rows)
        self._note = note

    def compose(self) -> ComposeResult:
        done = sum(row.state == "done" for row in self._rows)
        held = sum(row.state != "reassigned" for row in self._rows)
        with self.frame(f"{self._title} · {done}/{held} done", id="assignments"):
            if self._note:
                yield Static(render.shown(self._note, style="bold"), id="assignments-note")
            yield Static(assignments_table(self._rows), id="assignments-table")
