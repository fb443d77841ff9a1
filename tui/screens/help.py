"""Every key that works here, with what the focused pane is for."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown, Static


def bindings_table(rows: list[tuple[str, str, str]]) -> Table:
    table = Table(box=None, expand=True, show_header=True, header_style="bold")
    table.add_column("key")
    table.add_column("action")
    table.add_column("what it does")
    for key, description, tooltip in rows:
        table.add_row(Text(key), Text(description), Text(tooltip))
    return table


class HelpModal(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpModal {
        align: center middle;
        & > VerticalScroll {
            width: 90%; max-width: 110; height: 90%;
            border: thick $primary; background: $panel; padding: 0 1;
        }
    }
    """
    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close", id="convtui.close-help")]

    def __init__(self, rows: list[tuple[str, str, str]], blurb: str) -> None:
        super().__init__()
        self._rows = rows
        self._blurb = blurb

    def compose(self) -> ComposeResult:
        scroll = VerticalScroll()
        scroll.border_title = "Help"
        scroll.border_subtitle = "escape closes · ctrl+p lists every command"
        with scroll:
            if self._blurb:
                yield Markdown(self._blurb)
            yield Static(bindings_table(self._rows))
