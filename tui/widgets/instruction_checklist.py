"""A CodeIF-Bench session's instructions: one row each, in the task's order, saying whether
the shown turn's code follows it (its tests pass), whether it was given, and which one the
composer holds. **enter** shows an instruction's words and tests; **u** puts it in the
composer instead of the offered one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable

from convtui.core.codeif.instructions import Instruction, checked_by
from convtui.tui import render
from convtui.tui.viewmodels import ResultView


@dataclass(frozen=True)
class ChecklistRow:
    """One instruction as the checklist shows it: ``followed`` None when no code was run."""

    instruction: Instruction
    followed: bool | None
    given_in: int | None  # the round (from 1) that first gave it
    tests: tuple[tuple[str, str, str | None], ...]  # (name, code, status in the shown turn)


def checklist_rows(
    order: Sequence[Instruction], result: ResultView | None, given: Sequence[str]
) -> tuple[ChecklistRow, ...]:
    """Each instruction's verdict on ``result`` (the shown turn's), as programs.verdicts
    decides it: followed when every test it names passed."""
    status = {r.name: r.status for r in result.rows} if result else {}
    code = {name: text for i in order for name, text in i.tests}
    rows = []
    for instruction in order:
        names = checked_by(instruction, order[0])
        followed = None if result is None else all(status.get(n) == "pass" for n in names)
        where = given.index(instruction.category) + 1 if instruction.category in given else None
        rows.append(
            ChecklistRow(
                instruction, followed, where, tuple((n, code[n], status.get(n)) for n in names)
            )
        )
    return tuple(rows)


class InstructionChecklist(DataTable):
    help = (
        "Every instruction of the task, in the benchmark's order: ✓ when the shown code "
        "passes its tests, given in which round, → for the one in the composer. **enter** "
        "shows its words and tests; **u** puts it in the composer instead."
    )
    BINDING_GROUP_TITLE = "the instruction checklist"
    BINDINGS = [
        Binding("enter", "details", "Tests", id="convtui.instruction-tests"),
        Binding("u", "use", "Use", id="convtui.use-instruction", tooltip="Send this one next"),
    ]

    @dataclass
    class DetailsRequested(Message):
        row: ChecklistRow

    @dataclass
    class Chosen(Message):
        instruction: Instruction

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.border_title = "Instructions"
        self.rows_shown: tuple[ChecklistRow, ...] = ()

    def on_mount(self) -> None:
        if not self.columns:
            self._add_columns()

    def _add_columns(self) -> None:
        self.add_column("", key="next", width=1)
        self.add_column("now", key="now", width=4)
        self.add_column("given", key="given", width=8)
        self.add_column("instruction", key="category", width=24)
        self.add_column("words", key="words", width=80)

    def show(self, rows: Sequence[ChecklistRow], composing: str | None) -> None:
        """Show ``rows``; ``composing`` is the category whose words the composer holds."""
        cursor = self.cursor_row
        self.clear(columns=True)
        self._add_columns()
        self.rows_shown = tuple(rows)
        for row in rows:
            verdict = "-" if row.followed is None else ("✓" if row.followed else "✗")
            given = f"round {row.given_in}" if row.given_in else ""
            words = " ".join(row.instruction.text.split())
            self.add_row(
                "→" if row.instruction.category == composing else "",
                Text(verdict, style="green" if row.followed else "red"),
                given,
                row.instruction.category,
                render.shown(words, overflow="ellipsis", no_wrap=True),
            )
        if composing is not None and not self.has_focus:
            # Unless the person is moving through the list, the row in view is the one the
            # composer holds: on a short screen the checklist shows a row or two.
            cursor = next(
                (i for i, r in enumerate(rows) if r.instruction.category == composing), cursor
            )
        if rows:
            self.move_cursor(row=min(max(cursor, 0), len(rows) - 1))
        met = sum(1 for r in rows if r.followed)
        self.border_subtitle = f"{met}/{len(rows)} followed" if rows else ""

    def _current(self) -> ChecklistRow | None:
        if self.rows_shown and 0 <= self.cursor_row < len(self.rows_shown):
            return self.rows_shown[self.cursor_row]
        return None

    def action_details(self) -> None:
        row = self._current()
        if row is not None:
            self.post_message(self.DetailsRequested(row))

    def action_use(self) -> None:
        row = self._current()
        if row is not None:
            self.post_message(self.Chosen(row.instruction))
