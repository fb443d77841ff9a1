"""Text from outside convtui made safe to show on a terminal: a model's reply, a task, a name
from a study file, a session merged from another database.

A terminal obeys the control characters it is sent: ``ESC [2J`` clears the screen, ``ESC ]0;``
retitles the window, ``CR`` returns to the start of the line and lets what follows overwrite
it. rich and Textual drop a few of them (bell, backspace, CR) and pass the rest, ESC and the C1
codes included, straight to the terminal, so a reply could paint "ALL TESTS PASSED" over the
screen while its tests failed. Front ends show such text through :func:`printable`, where it
is drawn; the store keeps exactly what was written."""

from __future__ import annotations

import unicodedata

# Unicode's control pictures (U+2400 block) for the C0 codes and DEL: one cell each, so a
# shown control keeps its place in the line (␛ for ESC, ␍ for CR, ␇ for BEL). The C1 codes
# (0x80-0x9F, CSI 0x9B among them) have no picture: they show as Python writes them.
_SHOWN = {
    **{code: chr(0x2400 + code) for code in range(0x20) if chr(code) not in "\t\n"},
    0x7F: "\u2421",
    **{code: f"\\x{code:02x}" for code in range(0x80, 0xA0)},
}


def printable(text: str) -> str:
    """``text`` with every control character but newline and tab shown instead of obeyed:
    ``"\\x1b[2J"`` becomes ``"␛[2J"``. Code keeps its tabs and lines; a CRLF line ending is a
    line ending, while a CR on its own shows as ``␍`` so it hides nothing behind it."""
    return text.replace("\r\n", "\n").translate(_SHOWN)


def control_characters(text: str) -> list[str]:
    """The control characters in ``text`` (newline and tab included: a name is one line), as
    :func:`printable` shows them, each once, in order of appearance."""
    found = dict.fromkeys(ch for ch in text if unicodedata.category(ch) == "Cc")
    return [_SHOWN.get(ord(ch), repr(ch)[1:-1]) for ch in found]
