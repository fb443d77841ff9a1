"""What a terminal is sent of outside text: its control characters shown, never obeyed."""

from __future__ import annotations

import pytest

from convtui.core.printable import control_characters, printable

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
