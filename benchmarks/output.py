"""Printing for the headless commands: rich text on the terminal, one JSON object for
scripts, and ``warning: …`` lines on stderr. Whatever they print shows the control characters
of recorded text (a reply, a task, a name) instead of letting the terminal obey them, and its
bidirectional overrides and zero-width characters as escapes (core/printable.py, visible)."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, TextIO

from rich.console import Console, ConsoleOptions, ConsoleRenderable, RenderHook, RenderResult
from rich.text import Text

from convtui.core.printable import visible

# The width of output that is not a terminal (a pipe, a file) when COLUMNS does not say:
# rich's own default, 80, folded the report's tables into a pipe; whatever reads a pipe
# (less -S, a file, a script) can take long lines.
PIPE_WIDTH = 200


def width_for(stream: TextIO) -> int | None:
    """The width to render ``stream``'s output at: None where rich measures it right (a
    terminal, or COLUMNS set), else :data:`PIPE_WIDTH`."""
    if os.environ.get("COLUMNS", "").strip().isdigit():
        return None
    try:
        if stream.isatty():
            return None
    except (AttributeError, ValueError):  # a replaced or closed stream: not a terminal
        pass
    return PIPE_WIDTH


class _Shown:
    """A renderable drawn as rich lays it out, its text shown through ``visible``; rich's
    own control segments (cursor moves of a progress bar) pass as they are."""

    def __init__(self, renderable: ConsoleRenderable) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for segment in console.render(self.renderable, options):
            yield segment if segment.control else segment._replace(text=visible(segment.text))


class _ShowControls(RenderHook):
    """Every table, panel and line a command prints, whatever view built it and from
    whatever text: rich passes ESC and the C1 codes through to the terminal, even when
    colour is off, and the terminal obeys a bidirectional override. After layout, so a
    control shown as ``␛`` widens its line by a cell and an override shown as ``\\u202e`` by
    six (a table holding one is out of line)."""

    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        return [_Shown(renderable) for renderable in renderables]


def console(stderr: bool = False) -> Console:
    """The rich console every headless command prints through (stderr's for progress and
    warnings): a terminal's width, COLUMNS, or a wide one when the output is not a terminal."""
    screen = Console(
        stderr=stderr, highlight=False, width=width_for(sys.stderr if stderr else sys.stdout)
    )
    screen.push_render_hook(_ShowControls())
    return screen


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")


def warning_line(text: str) -> Text:
    return Text.assemble(("warning: ", "bold yellow"), text)


def warn(text: str) -> None:
    """One ``warning: …`` line on stderr, unwrapped."""
    console(stderr=True).print(warning_line(text), soft_wrap=True)


def print_table(screen: Console, table: Any) -> None:
    """``table``, then its caption as lines from the left edge: rich centres a caption and
    keeps it within the table's width, so a narrow table's notes (one Ω, one model) stood as
    a thin centred block of broken lines."""
    caption = getattr(table, "caption", None)
    if not caption:
        screen.print(table)
        return
    table.caption = None
    screen.print(table)
    # A caption string is markup, as rich reads a table's (brackets come escaped).
    screen.print(caption, soft_wrap=True, highlight=False)
