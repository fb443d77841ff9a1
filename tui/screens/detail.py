"""A modal that shows one thing in full in a bordered scroll: the look and the closing
keys the app's detail views share."""

from __future__ import annotations

from textual.containers import ScrollableContainer, VerticalScroll
from textual.screen import ModalScreen

from convtui.tui import render
from convtui.tui.screens.modal_keys import ModalKeys


class DetailModal(ModalKeys, ModalScreen[None]):
    # Textual matches a type selector against every class of a screen's MRO, so subclasses
    # get this look; each names its own close binding (ids are per view).
    DEFAULT_CSS = """
    DetailModal {
        align: center middle;
        /* By class, not type: the footer (ModalKeys) is a ScrollableContainer too. */
        & > .detail-frame {
            width: 90%; height: 80%;
            border: thick $primary; background: $panel; padding: 0 1;
        }
    }
    """

    @staticmethod
    def frame(title: str, id: str | None = None, *, sideways: bool = False) -> ScrollableContainer:
        """The bordered scroll the details go in, titled, saying how to close it;
        ``sideways``: it scrolls sideways too, for lines that must not wrap."""
        kind = ScrollableContainer if sideways else VerticalScroll
        scroll = kind(id=id, classes="detail-frame")
        scroll.border_title = render.title(title)
        scroll.border_subtitle = (
            "→ ← scroll sideways · escape closes" if sideways else "escape closes"
        )
        return scroll
