"""What a terminal is sent of outside text: its control characters shown, never obeyed."""

from __future__ import annotations

import pytest

from convtui.core.printable import (
    control_characters,
    invisible_characters,
    print_key,
    printable,
    visible,
)

PAINTED = "\x1b[2J\x1b[H\x1b[32mALL TESTS PASSED\x1b]0;pwned\x07"


def test_escape_sequences_show_as_control_pictures_and_keep_their_words() -> None:
    assert printable(PAINTED) == "␛[2J␛[H␛[32mALL TESTS PASSED␛]0;pwned␇"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("def f():\n\treturn 1\n", "def f():\n\treturn 1\n"),  # code keeps its lines and tabs
        ("a = 1\r\nb = 2\r\n", "a = 1\nb = 2\n"),  # a CRLF line ending is a line ending
        ("FAILED\rPASSED", "FAILED␍PASSED"),  # a lone CR hides nothing behind it
        ("ok\x08\x08KO", "ok␈␈KO"),
        ("\x00\x7f", "␀␡"),
        ("\x9b31mred", "\\x9b31mred"),  # C1's CSI has no picture: shown as Python writes it
        ("\x85", "\\x85"),
        ("[bold]list[int][/bold] ✓ ünïcode", "[bold]list[int][/bold] ✓ ünïcode"),
    ],
)
def test_printable(text: str, shown: str) -> None:
    assert printable(text) == shown


def test_every_c0_c1_and_del_code_but_newline_and_tab_is_replaced() -> None:
    codes = [*range(0x20), 0x7F, *range(0x80, 0xA0)]
    for code in codes:
        if chr(code) in "\t\n":
            continue
        assert chr(code) not in printable(f"a{chr(code)}b"), hex(code)


def test_control_characters_of_a_name_include_newline_and_tab() -> None:
    assert control_characters("ana") == []
    assert control_characters("an\x1ba\x1b\nb\tc") == ["␛", "\\n", "\\t"]
    assert control_characters("x\x9by") == ["\\x9b"]


# Issue 48, point 6: what a terminal obeys or draws as nothing, shown as escapes.
@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("ana\u202egnp.exe", "ana\\u202egnp.exe"),  # would print as "anaexe.png"
        ("\u2066x\u2069 \u200e\u200f\u061c", "\\u2066x\\u2069 \\u200e\\u200f\\u061c"),
        ("a\u200bn\u200c\u200da\u2060\ufeff", "a\\u200bn\\u200c\\u200da\\u2060\\ufeff"),
        ("line\u2028next", "line\\u2028next"),
        ("\x1b[2J\u202e", "␛[2J\\u202e"),  # control characters as printable shows them
        ("def f():\n\treturn 'ünïcode ✓'\n", "def f():\n\treturn 'ünïcode ✓'\n"),
        ("⚠\ufe0f", "⚠\ufe0f"),  # an emoji's variation selector is drawn with it
    ],
)
def test_visible(text: str, shown: str) -> None:
    assert visible(text) == shown


def test_invisible_characters_of_a_name_include_the_default_ignorables() -> None:
    assert invisible_characters("ana") == invisible_characters("Zoë Ōta") == []
    assert invisible_characters("a\u200bn\u202ea\u200b") == ["\\u200b", "\\u202e"]
    assert invisible_characters("\u3164ana\ufe0f") == ["\\u3164", "\\ufe0f"]  # Hangul filler


def test_names_that_print_alike_share_a_key_and_others_do_not() -> None:
    alike = ["ana", "Ana", "ANA", "ａｎａ", "a\u200bna", "\ufeffana"]
    assert {print_key(name) for name in alike} == {"ana"}
    assert print_key("Straße") == print_key("STRASSE")
    assert len({print_key(name) for name in ("ana", "anna", "аna", "ana b")}) == 4  # а: Cyrillic
