"""The keys line of a window opened over a screen: its own footer, drawn over the screen's.

A modal screen is drawn over the one below it, footer included, so without a footer of its
own a window showed the session's keys (Send, Skip, Rerun...) that do nothing while it is
open. Mounted on the window, the footer lists the window's keys (Close; Yes and No) and the
app's that still work."""

from __future__ import annotations

from textual.screen import ModalScreen

from convtui.tui.widgets.keys_footer import KeysFooter


class ModalKeys(ModalScreen):
    """A modal screen with a footer of its own keys."""

    def on_mount(self) -> None:
        self.mount(KeysFooter())
