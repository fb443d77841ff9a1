"""Where the person writes the feedback for the next turn."""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable

from textual.reactive import reactive
from textual.widgets import TextArea
from textual.widgets.text_area import EditResult, Location

from convtui.core.printable import printable
from convtui.tui.text_bounds import MAX_FEEDBACK_CHARS, Notice, feedback_notice, fitted


class FeedbackComposer(TextArea):
    """``ready`` is true while a turn waits for feedback; otherwise the composer is marked
    ``-blocked`` (the person may still type ahead). The screen sends its text on ctrl+j."""

    help = (
        "Write what the model should change, as the user would. **ctrl+j** (or alt+enter) "
        "sends it and starts the next turn; **ctrl+g** continues without verbal feedback. "
        "In assist mode the simulator's draft appears here first: edit or replace it. What "
        "you type is kept as you type: if the app closes before you send it, it is back here "
        "when the session is opened again."
    )

    ready: reactive[bool] = reactive(False)
    """A turn is waiting for this feedback."""

    idle_note: reactive[str] = reactive("waiting for the turn")
    """Why no feedback is taken now (shown while not ``ready``)."""

    draft_label: reactive[str] = reactive("")
    """``simulator:<kind>`` while the text is an unedited simulator draft."""

    def __init__(self, **kwargs) -> None:
        super().__init__(soft_wrap=True, show_line_numbers=False, **kwargs)
        self._draft: str | None = None
        # Words put back from the store (typed before the app closed, never sent).
        self._restored: str | None = None
        self.border_title = "Your feedback"
        self.clock: Callable[[], float] = time.monotonic
        """What ``keystrokes`` are read from (the screen sets the app's clock)."""
        # Unboxed: a key held down for an hour is 8 bytes a key, not a float object each.
        self._keystrokes = array("d")
        self._limit_notice = Notice()

    def on_mount(self) -> None:
        # Served, every blink is a frame through the server to the page: with a study's tens
        # of apps, more wake-ups than the typing itself. The cursor stays, steady.
        if self.app.is_web:
            self.cursor_blink = False

    def watch_ready(self, ready: bool) -> None:
        self.set_class(not ready, "-blocked")
        self._retitle()

    def watch_draft_label(self, _label: str) -> None:
        self._retitle()

    def watch_idle_note(self, _note: str) -> None:
        self._retitle()

    def offer_draft(self, draft: str | None, label: str, *, replace: bool = False) -> None:
        """Put a draft in (a simulator's, or a CodeIF-Bench instruction), unless the person
        already typed something; ``replace``: the person asked for this one, it goes in.
        The draft's control characters are shown (``␛``); sent unchanged, it is sent as
        written (tui/human.py)."""
        self._draft = None if draft is None else printable(draft)
        if self._draft and (replace or not self.text.strip()):
            self.load_text(self._draft)
            self.move_cursor(self.document.end)
        self.draft_label = label if draft else ""

    def restore(self, text: str) -> None:
        """Put back words the person typed and did not send before the app closed; they win
        over any draft offered later (``offer_draft`` never replaces typed words)."""
        self._restored = printable(text)
        self.load_text(self._restored)
        self.move_cursor(self.document.end)

    @property
    def restored(self) -> bool:
        """The text is the words put back by ``restore``, unchanged since."""
        return self._restored is not None and self.text == self._restored

    @property
    def typed(self) -> bool:
        """The text holds the person's own words, which the screen keeps in the store as they
        are typed. An unedited draft does not count: resuming the session brings it back from
        the call journal."""
        return bool(self.text.strip()) and self.text != self._draft

    @property
    def keystrokes(self) -> tuple[float, ...]:
        """When each keystroke that changed the text came (typing, deleting, pasting), on
        ``clock``, since the words were last sent: the person's typing of these words. A
        draft or restored words put in are no keystrokes."""
        return tuple(self._keystrokes)

    def forget_keystrokes(self) -> None:
        """The words they typed were sent: the next keystrokes are for the next words."""
        del self._keystrokes[:]

    def sent(self) -> None:
        self._draft = None
        self._restored = None
        self.draft_label = ""
        self.load_text("")
        self.forget_keystrokes()

    # TextArea makes every edit from the keyboard (keys, paste, cut) through these two, and
    # none made by the program (``load_text``, ``insert``): the keystrokes are noted there,
    # and what is typed or pasted is held to MAX_FEEDBACK_CHARS (private methods of
    # Textual's TextArea, which the project pins exactly).
    def _replace_via_keyboard(
        self, insert: str, start: Location, end: Location
    ) -> EditResult | None:
        removed = len(self.get_text_range(start, end))
        kept = fitted(insert, len(self.text), removed, MAX_FEEDBACK_CHARS)
        if kept != insert:
            self._limit_notice.show(self.app, feedback_notice(cut=bool(kept)))
            if not kept:
                return None
        return self._keyed(super()._replace_via_keyboard(kept, start, end))

    def _delete_via_keyboard(self, start: Location, end: Location) -> EditResult | None:
        return self._keyed(super()._delete_via_keyboard(start, end))

    def _keyed(self, result: EditResult | None) -> EditResult | None:
        if result is not None:
            self._keystrokes.append(self.clock())
        return result

    def on_text_area_changed(self, _event: TextArea.Changed) -> None:
        self._retitle()

    def _retitle(self) -> None:
        if self.restored:
            # Said until the words are sent or changed: the person may not remember them.
            restored = "restored: not sent yet"
            self.border_subtitle = restored if self.ready else f"{restored} · {self.idle_note}"
        elif self._draft is not None and self.draft_label:
            edited = self.text != self._draft
            self.border_subtitle = (
                "edited draft (sent as human)" if edited else f"draft by {self.draft_label}"
            )
        else:
            self.border_subtitle = "" if self.ready else self.idle_note
