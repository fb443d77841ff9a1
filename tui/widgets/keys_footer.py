"""The footer of the session screen: Textual's, redrawn whenever the keys it shows change, also
while the app has no focus, and only then.

Textual's ``Footer`` ignores binding changes while the app is blurred (a served page that
opened without focus, a terminal in the background), so a phase reached meanwhile kept the
keys of the phase before it: ``esc Cancel`` beside a status line saying "waiting for your
feedback". The person reads the footer before they click or type, so it follows the phase.

It also rebuilds its keys (a widget each) on every focus change, though moving between panes
mostly leaves the keys shown as they were: about a third of the app's CPU time in a run of
every key (tests/tui/test_every_binding.py), and on a served host every annotator's app pays
it. This one compares what it would show with what it shows and rebuilds only on a
difference."""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


class KeysFooter(Footer):
    _shown: object = None

    def bindings_changed(self, screen: Screen) -> None:
        # Footer.bindings_changed, less its early return while the app is blurred.
        self._bindings_ready = True
        if self.is_attached and screen is self.screen:
            self.call_after_refresh(self._recompose_if_changed)

    def _keys(self) -> object:
        """What ``Footer.compose`` draws from: each shown binding, whether it is enabled, its
        tooltip; and the palette's key, shown or not."""
        active = self.screen.active_bindings
        shown = tuple(
            (binding.key, binding.action, binding.description, binding.group, enabled, tooltip)
            for _node, binding, enabled, tooltip in active.values()
            if binding.show
        )
        palette = active.get(self.app.COMMAND_PALETTE_BINDING)
        palette_key = None if palette is None else palette[1:]
        return shown, palette_key, self.show_command_palette, self.compact

    async def _recompose_if_changed(self) -> None:
        if not self.is_attached:
            return
        keys = self._keys()
        if keys != self._shown:
            self._shown = keys
            await self.recompose()
