"""The footer of the session screen: Textual's, redrawn whenever the keys change, also while
the app has no focus.

Textual's ``Footer`` ignores binding changes while the app is blurred (a served page that
opened without focus, a terminal in the background), so a phase reached meanwhile kept the
keys of the phase before it: ``esc Cancel`` beside a status line saying "waiting for your
feedback". The person reads the footer before they click or type, so it follows the phase."""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


class KeysFooter(Footer):
    def bindings_changed(self, screen: Screen) -> None:
        # Footer.bindings_changed, less its early return while the app is blurred.
        self._bindings_ready = True
        if self.is_attached and screen is self.screen:
            self.call_after_refresh(self.recompose)
