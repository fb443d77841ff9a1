"""How much text a person can put into the app: the composer's feedback and the one-line
fields (the command palette's query, the task search). Past a bound, text is refused or cut,
and the person is told so; nothing is dropped without a word. Served, an app is one process
per annotator on a shared host, and what they paste is held in its memory: unbounded, pastes
into the composer grew one app by hundreds of MB in seconds (issue 48)."""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.app import App
from textual.widgets import Input

# A person's feedback for a turn is a few sentences, a long one a few kilobytes: 32 KiB of
# text is more than anyone writes for a turn, and small beside what an app holds anyway.
MAX_FEEDBACK_CHARS = 32 * 1024
# A search or a palette query is a few words; a line longer than this finds nothing more.
MAX_FIELD_CHARS = 256
# While text keeps coming past a bound (a key held down, pastes one after another), the
# notice is shown again at most this often: one toast per key would bury the screen.
NOTICE_EVERY_S = 3.0


def fitted(insert: str, length: int, removed: int, limit: int) -> str:
    """What of ``insert`` fits when it replaces ``removed`` of a text of ``length``
    characters under ``limit``. A text already past the limit (a long draft put in by the
    app) may be edited, but not made longer."""
    room = max(limit, length) - (length - removed)
    return insert if len(insert) <= room else insert[: max(room, 0)]


class Notice:
    """The "limited to" notice, shown at most every ``NOTICE_EVERY_S``."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._last: float | None = None

    def show(self, app: App, text: str) -> None:
        now = self.clock()
        if self._last is not None and now - self._last < NOTICE_EVERY_S:
            return
        self._last = now
        app.notify(text, title="Text limit", severity="warning", markup=False)


def feedback_notice(cut: bool) -> str:
    kib = MAX_FEEDBACK_CHARS // 1024
    if cut:
        return f"Feedback holds at most {kib} KiB of text: the rest of the paste was left out."
    return f"Feedback holds at most {kib} KiB of text: nothing more was added."


def bound_field(field: Input, limit: int = MAX_FIELD_CHARS) -> None:
    """Hold ``field`` (one of Textual's own, such as the command palette's) to ``limit``
    characters: an edit past it is refused, saying so, where Textual only rings the bell
    (which a served page does not show)."""
    notice = Notice()
    field.max_length = limit

    def restricted() -> None:
        notice.show(field.app, f"This field holds at most {limit} characters.")

    # The instance's own: Textual calls ``self.restricted()`` when an edit is refused.
    field.restricted = restricted  # type: ignore[method-assign]
