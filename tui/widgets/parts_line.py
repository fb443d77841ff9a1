"""A line of parts joined by `` · `` (the session's header, the status line) that takes a
second line, broken between parts, when the terminal is too narrow for one: what it says is
never cut at the edge."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.geometry import Size
from textual.widgets import Static

from convtui.tui import render


class PartsLine(Static):
    def __init__(self, parts: Sequence[str] = (), **kwargs) -> None:
        super().__init__("", markup=False, **kwargs)
        self._parts = tuple(parts)

    def parts(self) -> Sequence[str]:
        """What the line says, in order of importance to a reader."""
        return self._parts

    def set_parts(self, parts: Sequence[str]) -> None:
        self._parts = tuple(parts)
        self.refresh(layout=True)

    def _text(self, width: int) -> Text:
        return render.shown(render.parts_lines(self.parts(), max(width, 1)))

    def render(self) -> Text:
        return self._text(self.content_size.width)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._text(width).wrap(self.app.console, max(width, 1)))
