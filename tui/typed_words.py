"""The composer's unsent words on their way to the store (sessions/database/typed.py), so that a
closed browser tab, a killed server or a crash loses none of them.

The screen reports every change of the composer; once typing pauses it asks for the write to
make, if any, and makes it in a worker thread. No widgets here: this is the bookkeeping that
keeps those writes few and in order.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

# Words are written once typing pauses this long: often enough that a closed tab or a killed
# server loses at most the last moment's keys, rarely enough that a fast typist makes one
# write per pause, not one per key.
KEEP_AFTER_S = 0.4

# The words of one turn: (turn index, text, CodeIF instruction); blank text is no words.
Typed = tuple[int, str, str | None]
# What the store holds is not known (a write failed): the next words are written, whatever.
_UNKNOWN: Typed = (-1, "", None)


class TypedWords:
    """``keep(turn, text, instruction)`` writes to the store (blocking, any thread)."""

    def __init__(self, keep: Callable[[int, str, str | None], object]) -> None:
        self._keep = keep
        self._kept: Typed | None = None  # what the store holds, as far as this side knows
        self._pending: Typed | None = None  # the words as of the last change, until written
        self._lock = threading.Lock()
        self._seq = 0  # numbers each write asked for: only the newest is made

    def found(self, typed: Typed | None) -> None:
        """The store holds ``typed`` (read as the session opened)."""
        self._kept = typed

    def changed(self, typed: Typed) -> None:
        self._pending = typed

    def saved(self) -> None:
        """A turn was recorded: the store dropped its words with it."""
        self._kept = None

    def failed(self) -> None:
        self._kept = _UNKNOWN

    def take(self) -> tuple[int, Typed] | None:
        """The write to make for the pending words, numbered, or None when the store already
        holds them (or holds nothing, and there is nothing to hold)."""
        typed, self._pending = self._pending, None
        if typed is None or typed == self._kept or (not typed[1] and self._kept is None):
            return None
        self._kept = typed if typed[1] else None
        self._seq += 1
        return self._seq, typed

    def write(self, seq: int, typed: Typed) -> None:
        """Make write ``seq`` unless a newer one was asked for meanwhile: writes run in their
        own threads, and an older one finishing last must not replace newer words."""
        with self._lock:
            if seq == self._seq:
                self._keep(*typed)
