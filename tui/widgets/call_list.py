"""The model calls a turn made, one line each in the order made: the code call, and under
``--protocol convcodeworld`` its repairs, the stale-EF call and the simulator's."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from convtui.core.printable import printable
from convtui.sessions.reading.browse import CallLine
from convtui.tui import render


def calls_text(calls: tuple[CallLine, ...]) -> Text:
    text = Text()
    text.append("Model calls this turn", style="bold")
    text.append(" · position, purpose, kind, tokens in→out, latency\n", style="dim")
    text.append(printable("\n".join(render.call_line(call) for call in calls)))
    return text


class CallList(Static):
    """Fed by its pane with ``show``; hidden while the turn has no recorded call (or the app
    has no store to read them from)."""

    def __init__(self, **kwargs) -> None:
        super().__init__("", markup=False, **kwargs)
        self.calls: tuple[CallLine, ...] = ()
        self.display = False

    def show(self, calls: tuple[CallLine, ...]) -> None:
        self.calls = calls
        self.display = bool(calls)
        self.update(calls_text(calls) if calls else "")
