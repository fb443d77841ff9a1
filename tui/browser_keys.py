"""Keys a desktop browser keeps for itself: the served app (the same Textual app, in
textual-serve's xterm.js page) never sees them, or sees them after the browser has acted (a
new window, a closed tab, a reload). Bindings the footer shows must work in the page too, so
the served app drops these keys from its bindings (``drop_browser_keys``): a binding left with
none is gone from footer, help and keys there.

Sources, by file a reader can open:

- Chromium: ``BrowserCommandController::IsReservedCommandOrKey`` in
  ``chrome/browser/ui/browser_command_controller.cc`` reserves IDC_NEW_WINDOW,
  IDC_NEW_INCOGNITO_WINDOW, IDC_NEW_TAB, IDC_RESTORE_TAB, IDC_CLOSE_TAB, IDC_CLOSE_WINDOW,
  IDC_SELECT_NEXT_TAB, IDC_SELECT_PREVIOUS_TAB and IDC_EXIT, whose keys are in
  ``chrome/browser/ui/views/accelerator_table.cc`` (ctrl+n, ctrl+shift+n, ctrl+t,
  ctrl+shift+t, ctrl+w, ctrl+f4, ctrl+shift+w, ctrl+tab, ctrl+pagedown, ctrl+shift+tab,
  ctrl+pageup, ctrl+shift+q); F11 (fullscreen) is handled before the page as well.
- Firefox: the ``<key reserved="true">`` entries of ``browser/base/content/browser-sets.inc``
  (new window ctrl+n, new tab ctrl+t, close ctrl+w and ctrl+shift+w, private window
  ctrl+shift+p, undo close ctrl+shift+t and ctrl+shift+n, quit ctrl+q on Linux) and its tab
  switching (ctrl+tab, ctrl+shift+tab, ctrl+pageup, ctrl+pagedown).
- Kept clear as well, though a page may be handed them first: reload (f5, ctrl+r), the
  address bar (ctrl+l, alt+d, f6), developer tools (f12), history (alt+left, alt+right,
  alt+home) and, as a rule, every ctrl+shift key (tab, window and developer-tools keys).

Written from those files. tests/tui/test_served_keys.py checks the footer against this list;
tests/tui/test_served_page_headed.py presses ctrl+n and ctrl+t in a headed Chromium (Xvfb,
keys through X) and sees the browser keep them, and the app's own keys reach it."""

from __future__ import annotations

from textual.binding import BindingsMap

BROWSER_KEYS = frozenset(
    {
        # Chromium's and Firefox's reserved keys.
        "ctrl+n",
        "ctrl+t",
        "ctrl+w",
        "ctrl+f4",
        "ctrl+q",
        "ctrl+tab",
        "ctrl+pageup",
        "ctrl+pagedown",
        "f11",
        # Handed to the page first, but a person expects the browser's meaning.
        "f5",
        "ctrl+r",
        "ctrl+l",
        "alt+d",
        "f6",
        "f12",
        "alt+left",
        "alt+right",
        "alt+home",
    }
)


def browser_takes(key: str) -> bool:
    """Whether a desktop browser keeps ``key`` (Textual's spelling: ``ctrl+n``)."""
    return key in BROWSER_KEYS or key.startswith("ctrl+shift+")


def drop_browser_keys(bindings: BindingsMap) -> None:
    """Remove every key a browser keeps from ``bindings``, one node's own map (Textual copies
    the class's bindings into each node): its other keys still work, and footer and help,
    which read the same map, name only those."""
    for key in list(bindings.key_to_bindings):
        if browser_takes(key):
            del bindings.key_to_bindings[key]
