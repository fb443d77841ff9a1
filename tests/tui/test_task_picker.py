"""The task picker screen, driven through Textual's Pilot over the real catalog.

Each test pushes the picker from a bare app and records what it dismisses with. No
pytest-asyncio here: each test runs its coroutine with ``asyncio.run``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from support.data import DATA as DATA_DIR
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Static

from convtui.core.catalog.loaders import load_catalog
from convtui.core.catalog.search import TaskIndex
from convtui.tui.screens.task_picker import ROW_LIMIT, TaskPickerScreen

REPO_ROOT = Path(__file__).resolve().parents[2]

UNSET = "<not dismissed>"


@pytest.fixture(scope="module")
def index() -> TaskIndex:
    return TaskIndex(load_catalog("all", DATA_DIR))


class PickerApp(App[None]):
    """Opens the picker at start and keeps what it was dismissed with."""

    def __init__(self, index: TaskIndex) -> None:
        super().__init__()
        self.index = index
        self.picked: str | None = UNSET
        self.notices: list[str] = []

    def on_mount(self) -> None:
        self.push_screen(TaskPickerScreen(self.index), self._picked)

    def _picked(self, task_id: str | None) -> None:
        self.picked = task_id

    def notify(self, message: str, **kwargs: object) -> None:  # type: ignore[override]
        self.notices.append(message)
        super().notify(message, **kwargs)  # type: ignore[arg-type]


Scenario = Callable[[PickerApp, Pilot], Awaitable[None]]


def drive(index: TaskIndex, scenario: Scenario, size: tuple[int, int] = (100, 30)) -> PickerApp:
    """Run ``scenario`` against a fresh app at ``size``; return the app for assertions."""

    async def main() -> PickerApp:
        app = PickerApp(index)
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await scenario(app, pilot)
            await pilot.pause()
        return app

    return asyncio.run(main())


async def type_text(pilot: Pilot, text: str) -> None:
    await pilot.press(*("space" if ch == " " else ch for ch in text))
    await pilot.pause()


def table_of(app: PickerApp) -> DataTable:
    return app.screen.query_one("#task-results", DataTable)


def row_ids(table: DataTable) -> list[str]:
    return [table.get_row_at(n)[0].plain for n in range(table.row_count)]


def test_opens_on_every_task_with_the_search_box_focused(index: TaskIndex) -> None:
    async def scenario(app: PickerApp, pilot: Pilot) -> None:
        assert isinstance(app.screen, TaskPickerScreen)
        assert isinstance(app.focused, Input)
        table = table_of(app)
        assert table.row_count == ROW_LIMIT
        assert table.border_title == f"1264 of 1264 tasks · first {ROW_LIMIT} shown"
        assert row_ids(table)[:2] == ["BigCodeBench/0", "BigCodeBench/1"]

    assert drive(index, scenario).picked == UNSET


def test_typing_narrows_the_table_and_the_count_and_enter_opens_the_top_task(
    index: TaskIndex,
) -> None:
    expected = [t.id for t in index.search("pandas csv", limit=None)]
    assert 0 < len(expected) < ROW_LIMIT

    async def scenario(app: PickerApp, pilot: Pilot) -> None:
        await type_text(pilot, "pandas csv")
        table = table_of(app)
        assert row_ids(table) == expected
        assert table.border_title == f"{len(expected)} of 1264 tasks"
        await pilot.press("enter")

    assert drive(index, scenario).picked == expected[0]


def test_a_number_then_enter_opens_that_task(index: TaskIndex) -> None:
    async def scenario(app: PickerApp, pilot: Pilot) -> None:
        await type_text(pilot, "123")
        assert row_ids(table_of(app)) == ["BigCodeBench/123"]
        await pilot.press("enter")

    assert drive(index, scenario).picked == "BigCodeBench/123"


def test_escape_closes_without_a_task(index: TaskIndex) -> None:
    async def scenario(app: PickerApp, pilot: Pilot) -> None:
        await type_text(pilot, "csv")
        await pilot.press("escape")

    app = drive(index, scenario)
    assert app.picked is None


def test_no_match_shows_no_rows_and_enter_stays_open_with_a_notice(index: TaskIndex) -> None:
    async def scenario(app: PickerApp, pilot: Pilot) -> None:
        await type_text(pilot, "zzqxj")
        table = table_of(app)
        assert table.row_count == 0
        assert table.border_title == "0 of 1264 tasks"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, TaskPickerScreen)

    app = drive(index, scenario)
    assert app.picked == UNSET
    assert app.notices == ["no task matches"]


def test_down_moves_from_the_search_box_into_the_results(index: TaskIndex) -> None:
    expected = [t.id for t in index.search("csv", limit=None)]

    async def scenario(app: PickerApp, pilot: Pilot) -> None:
        await type_text(pilot, "csv")
        await pilot.press("down")
        assert app.focused is table_of(app)
        await pilot.press("down")
        preview = app.screen.query_one("#task-preview")
        assert preview.border_title == f"prompt · {expected[1]}"
        await pilot.press("enter")

    assert drive(index, scenario).picked == expected[1]


def test_prompts_with_brackets_show_literally(index: TaskIndex) -> None:
    prompt = index.search("13")[0].prompt
    assert "[str]" in prompt  # what console markup would swallow as a style tag

    async def scenario(app: PickerApp, pilot: Pilot) -> None:
        await type_text(pilot, "13")
        shown = app.screen.query_one("#task-prompt", Static)
        assert str(shown.visual) == prompt

    drive(index, scenario)


def test_bindings_have_ids_and_tooltips_and_show_in_the_footer(index: TaskIndex) -> None:
    async def scenario(app: PickerApp, pilot: Pilot) -> None:
        shown = {
            active.binding.id: active
            for active in app.screen.active_bindings.values()
            if active.binding.show
        }
        assert {"convtui.pick", "convtui.cancel-pick"} <= shown.keys()
        assert all(shown[i].binding.tooltip for i in ("convtui.pick", "convtui.cancel-pick"))

    drive(index, scenario)


def test_works_at_80_by_24(index: TaskIndex) -> None:
    async def scenario(app: PickerApp, pilot: Pilot) -> None:
        table = table_of(app)
        # Every column fits: no sideways scrolling to read a row.
        assert table.virtual_size.width <= table.scrollable_content_region.width
        assert table.scrollable_content_region.height >= 5, "room for a few rows"
        preview = app.screen.query_one("#task-preview")
        assert preview.scrollable_content_region.height >= 3
        await type_text(pilot, "lib:pandas csv")
        assert table.row_count > 0
        await pilot.press("enter")

    app = drive(index, scenario, size=(80, 24))
    assert app.picked == index.search("lib:pandas csv")[0].id


def test_a_narrower_terminal_narrows_the_prompt_column_and_keeps_the_cursor(
    index: TaskIndex,
) -> None:
    async def scenario(app: PickerApp, pilot: Pilot) -> None:
        table = table_of(app)
        await pilot.press("down", "down", "down")
        wide = table.virtual_size.width
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert table.virtual_size.width < wide
        assert table.virtual_size.width <= table.scrollable_content_region.width
        assert table.cursor_row == 2
        await pilot.press("enter")

    assert drive(index, scenario, size=(140, 30)).picked == "BigCodeBench/2"
