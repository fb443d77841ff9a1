"""The task picker: what `convtui session` opens first when no `--task` was given.

A search box over the catalog (by id, words of the prompt, or library; the syntax lives in
:mod:`convtui.core.catalog.search`), a table of the matches, and the highlighted task's prompt.
The screen dismisses with the chosen task id, or None when the user backs out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static
from textual.widgets.data_table import ColumnKey

from convtui.core.catalog.search import TaskIndex
from convtui.core.catalog.tasks import Task
from convtui.tui import render
from convtui.tui.text_bounds import bound_field

#: Rows shown at once: enough to scroll through, few enough to refill on every keystroke.
ROW_LIMIT = 200
_ID_WIDTH = len("BigCodeBench/1139")
_LIBS_WIDTH = 22
_MIN_PROMPT_WIDTH = 20
# Cell padding (1 each side of 3 columns), the table's border and its scrollbar.
_TABLE_CHROME = 3 * 2 + 2 + 2


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def _first_line(prompt: str) -> str:
    return next((line.strip() for line in prompt.splitlines() if line.strip()), "")


class TaskPickerScreen(Screen[str | None]):
    """Choose one task by typing: dismisses with its id, or None on escape."""

    DEFAULT_CSS = """
    TaskPickerScreen {
        #picker-title {
            height: 1;
            padding: 0 1;
            background: $panel;
            color: $text;
            text-style: bold;
        }
        #task-results {
            height: 1fr;
            border: round $border-blurred;
            border-title-color: $text-muted;
            &:focus {
                border: round $border;
                border-title-color: $text;
            }
        }
        #task-preview {
            height: 35%;
            min-height: 5;
            padding: 0 1;
            border: round $border-blurred;
            border-title-color: $text-muted;
            &:focus {
                border: round $border;
                border-title-color: $text;
            }
        }
        #task-prompt {
            width: 1fr;
        }
    }
    """

    AUTO_FOCUS = "#task-search"

    BINDINGS: ClassVar[list[BindingType]] = [
        # Priority, so enter picks from the search box and the table alike.
        Binding(
            "enter",
            "pick",
            "Open",
            priority=True,
            id="convtui.pick",
            tooltip="Open a session on the highlighted task",
        ),
        Binding(
            "escape",
            "cancel_pick",
            "Cancel",
            id="convtui.cancel-pick",
            tooltip="Close the picker without choosing a task",
        ),
        Binding("down", "focus_results", "Results", show=False),
    ]

    def __init__(
        self,
        tasks: TaskIndex | Iterable[Task],
        query: str = "",
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        """``tasks``: a prebuilt :class:`TaskIndex` (building one takes ~40 ms for 1,190
        tasks, so an app keeps it) or the tasks themselves. ``query`` pre-fills the search."""
        super().__init__(name=name, id=id, classes=classes)
        self.index = tasks if isinstance(tasks, TaskIndex) else TaskIndex(tasks)
        self._query = query
        self._rows: list[Task] = []
        self._prompt_column = ColumnKey("prompt")

    def compose(self) -> ComposeResult:
        yield Static(
            Content(f"convtui · choose a task ({len(self.index)} loaded)"), id="picker-title"
        )
        yield Input(
            self._query,
            placeholder="search: id, words of the prompt, or a library (lib:pandas)",
            id="task-search",
        )
        yield DataTable(id="task-results", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="task-preview"):
            yield Static(id="task-prompt")
        yield Footer()

    def on_mount(self) -> None:
        search = self.query_one("#task-search", Input)
        search.border_title = Content("search")
        bound_field(search)
        table = self.query_one("#task-results", DataTable)
        table.add_column("id", width=_ID_WIDTH, key="id")
        table.add_column("libraries", width=_LIBS_WIDTH, key="libs")
        self._prompt_column = table.add_column("prompt", width=self._prompt_width(), key="prompt")
        self._show(self._query)

    @property
    def shown(self) -> list[Task]:
        """The tasks in the table, top to bottom."""
        return list(self._rows)

    def _prompt_width(self) -> int:
        width = self.size.width or 80
        return max(width - _ID_WIDTH - _LIBS_WIDTH - _TABLE_CHROME, _MIN_PROMPT_WIDTH)

    def _show(self, query: str) -> None:
        """Search and refill the table, on the event loop: searching the whole catalog takes
        about a millisecond and refilling 200 rows under 10 ms, inside the ~20 ms a keystroke
        may take (tests/core/test_task_search.py bounds the search)."""
        matches = self.index.search(query, limit=None)
        self._rows = matches[:ROW_LIMIT]
        self._fill_table()
        table = self.query_one("#task-results", DataTable)
        count = f"{len(matches)} of {len(self.index)} tasks"
        if len(matches) > ROW_LIMIT:
            count += f" · first {ROW_LIMIT} shown"
        table.border_title = Content(count)
        self._preview(self._rows[0] if self._rows else None)

    def _fill_table(self) -> None:
        table = self.query_one("#task-results", DataTable)
        width = table.columns[self._prompt_column].width
        table.clear()
        table.add_rows(
            (
                render.shown(task.id),
                render.shown(_clip(", ".join(task.libs), _LIBS_WIDTH)),
                render.shown(_clip(_first_line(task.prompt), width)),
            )
            for task in self._rows
        )

    def _preview(self, task: Task | None) -> None:
        preview = self.query_one("#task-preview", VerticalScroll)
        prompt = self.query_one("#task-prompt", Static)
        if task is None:
            preview.border_title = Content("prompt")
            prompt.update(Text("no task matches", style="italic"))
        else:
            preview.border_title = render.title(f"prompt · {task.id}")
            # Text, never markup: prompts are full of `[`…`]`.
            prompt.update(render.shown(task.prompt))
        preview.scroll_home(animate=False)

    def _highlighted(self) -> Task | None:
        if not self._rows:
            return None
        row = self.query_one("#task-results", DataTable).cursor_row
        return self._rows[min(max(row, 0), len(self._rows) - 1)]

    @on(Input.Changed, "#task-search")
    def _search_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._show(event.value)

    @on(DataTable.RowHighlighted, "#task-results")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        # The table's current cursor, not the event's row: a message from before the last
        # refill may name a row that now holds another task.
        self._preview(self._highlighted())

    @on(DataTable.RowSelected, "#task-results")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        # A click on the highlighted row; enter is the screen's own binding.
        event.stop()
        self.action_pick()

    def on_resize(self) -> None:
        table = self.query_one("#task-results", DataTable)
        width = self._prompt_width()
        if table.columns[self._prompt_column].width != width:
            row = table.cursor_row
            table.columns[self._prompt_column].width = width
            self._fill_table()
            table.move_cursor(row=row)

    def action_pick(self) -> None:
        """Dismiss with the highlighted task's id; with no match, say so and stay."""
        task = self._highlighted()
        if task is None:
            self.notify("no task matches", severity="warning", markup=False)
            return
        self.dismiss(task.id)

    def action_cancel_pick(self) -> None:
        """Dismiss without a task."""
        self.dismiss(None)

    def action_focus_results(self) -> None:
        """Down from the search box moves into the results."""
        self.query_one("#task-results", DataTable).focus()
