"""Text from outside convtui made safe to show on a terminal: a model's reply, a task, a name
from a study file, a session merged from another database.

A terminal obeys the control characters it is sent: ``ESC [2J`` clears the screen, ``ESC ]0;``
retitles the window, ``CR`` returns to the start of the line and lets what follows overwrite
it. rich and Textual drop a few of them (bell, backspace, CR) and pass the rest, ESC and the C1
codes included, straight to the terminal, so a reply could paint "ALL TESTS PASSED" over the
screen while its tests failed. Front ends show such text through :func:`printable`, where it
is drawn; the store keeps exactly what was written.

Some characters a terminal does not draw at all, and some it obeys: the bidirectional
embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069) reorder the text after them,
so ``"ana\\u202egnp.exe"`` prints as ``anaexe.png`` (Trojan Source, CVE-2021-42574); zero-width
spaces and joiners print as nothing, so ``"ana"`` and ``"a\\u200bna"`` look the same.
:func:`visible` shows those as escapes too, for the command line and log lines; names are
refused when they hold any (:func:`invisible_characters`) and compared as they print
(:func:`print_key`)."""

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


# Unicode's format characters (bidi controls, zero-width space, joiners, word joiner, BOM,
# soft hyphen, ...) and the line and paragraph separators: none draws a glyph of its own.
_HIDDEN_CATEGORIES = frozenset({"Cf", "Zl", "Zp"})

# Default_Ignorable_Code_Point that are not format characters (Unicode's
# DerivedCoreProperties.txt): combining grapheme joiner, Hangul fillers, Khmer inherent vowels,
# variation selectors. A renderer draws them as nothing, so in a name they only make a
# look-alike; in prose they are harmless (an emoji's variation selector), so they are shown.
_IGNORABLE_RANGES = (
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0xE0000, 0xE0FFF),
)


def _hidden(ch: str) -> bool:
    return unicodedata.category(ch) in _HIDDEN_CATEGORIES


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def visible(text: str) -> str:
    """``text`` as :func:`printable` shows it, and its format characters and line separators
    shown as escapes instead of obeyed or hidden: ``"ana\\u202egnp"`` becomes
    ``"ana\\\\u202egnp"``. For whatever reaches the host's terminal or a log line."""
    text = printable(text)
    if text.isprintable():  # the usual case, decided in C
        return text
    return "".join(_escape(ch) if _hidden(ch) else ch for ch in text)


def invisible_characters(text: str) -> list[str]:
    """The characters of ``text`` that print as nothing or reorder what follows (format
    characters, line separators, the other default-ignorables), as escapes, each once, in
    order of appearance: a name holding any would print like another name."""
    if text.isascii():  # none of them is ASCII; most names are
        return []
    found = dict.fromkeys(ch for ch in text if _hidden(ch) or _ignorable(ch))
    return [_escape(ch) for ch in found]


def _ignorable(ch: str) -> bool:
    code = ord(ch)
    return any(low <= code <= high for low, high in _IGNORABLE_RANGES)


def print_key(name: str) -> str:
    """What ``name`` looks like on a screen, as a key: two names with the same key print
    alike. Its invisible characters dropped, then Unicode's compatibility normalisation and
    case folding (NFKC_Casefold's steps), so ``Ana``, ``ANA``, ``ａｎａ`` (full width) and
    ``a\\u200bna`` all print like ``ana``. Letters of other scripts that merely look alike
    (Cyrillic ``а``) keep keys of their own."""
    if name.isascii():  # nothing to drop or normalise: a study of 100,000 names is quick
        return name.lower()
    seen = "".join(ch for ch in name if not (_hidden(ch) or _ignorable(ch)))
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", seen).casefold())
