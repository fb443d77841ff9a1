"""One CodeIF-Bench instruction in full: its words and each of its tests, with how the shown
turn's code did on it."""

from __future__ import annotations

from rich.syntax import Syntax
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from convtui.core.printable import printable
from convtui.tui import render
from convtui.tui.screens.detail import DetailModal
from convtui.tui.widgets.instruction_checklist import ChecklistRow


class InstructionModal(DetailModal):
    BINDINGS = [Binding("escape,q,enter", "dismiss", "Close", id="convtui.close-instruction")]

    def __init__(self, row: ChecklistRow) -> None:
        super().__init__()
        self._row = row

    def compose(self) -> ComposeResult:
        row = self._row
        verdict = {None: "not run", True: "followed", False: "not followed"}[row.followed]
        with self.frame(f"{row.instruction.category} · {verdict}", id="instruction-details"):
            yield Static(render.shown(row.instruction.text.strip()), id="instruction-words")
            for name, code, status in row.tests:
                word = render.status_word(status) if status else "not run"
                yield Static(render.shown(f"\n{word} · {name}", style="bold"))
                yield Static(Syntax(printable(code.strip()), "python", word_wrap=True))
