"""A study's guidelines (core/studies/guidelines.py) in full, as Markdown: before an
annotator's first assignment, and again from the palette ("study: guidelines").

The text is the one stored with the study, never the file it came from. It was written by
whoever set the study up, not by the annotator: its links are not followed (a click does
nothing), Textual's Markdown loads nothing from outside, and control characters are shown,
not obeyed."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Markdown, Static

from convtui.core.printable import printable
from convtui.tui import render
from convtui.tui.screens.detail import DetailModal

FIRST_NOTE = (
    "Please read the study's guidelines before your first assignment. enter (or escape) "
    "starts it; f1 shows them again, below the keys, and so does 'study: guidelines' in "
    "the ctrl+p palette."
)


def guidelines_markdown(text: str) -> Markdown:
    """The guidelines as a Markdown widget that follows no link."""
    return Markdown(printable(text), open_links=False, classes="study-guidelines")


class GuidelinesModal(DetailModal):
    BINDINGS = [Binding("escape,enter,q", "dismiss", "Close", id="convtui.close-guidelines")]
    help = "The study's guidelines for its annotators: what to look for and how to give feedback."

    def __init__(self, study: str, text: str, *, first: bool = False) -> None:
        super().__init__()
        self._study = study
        self._text = text
        self.first = first
        """Shown before the annotator's first assignment, which opens once it is closed."""

    def compose(self) -> ComposeResult:
        scroll = self.frame(f"study {self._study} · guidelines", id="guidelines")
        if self.first:
            scroll.border_subtitle = "enter starts your first assignment"
        with scroll:
            if self.first:
                yield Static(render.shown(FIRST_NOTE, style="bold"), id="guidelines-note")
            yield guidelines_markdown(self._text)
