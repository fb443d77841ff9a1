"""The bookkeeping between the composer and the store (tui/typed_words.py): a write only when
the store would change, and never an older write over a newer one."""

from __future__ import annotations

from convtui.tui.typed_words import Typed, TypedWords


def recorder() -> tuple[TypedWords, list[Typed]]:
    made: list[Typed] = []
    return TypedWords(lambda *typed: made.append(typed)), made


def test_only_words_the_store_lacks_are_written() -> None:
    words, made = recorder()
    words.changed((0, "", None))
    assert words.take() is None  # nothing typed, nothing kept: no write

    words.changed((0, "Sort it", None))
    write = words.take()
    assert write is not None
    words.write(*write)
    words.changed((0, "Sort it", None))
    assert words.take() is None  # the store holds these already

    words.changed((0, "", None))  # the person deleted them: the store must forget them
    write = words.take()
    assert write is not None
    words.write(*write)
    assert made == [(0, "Sort it", None), (0, "", None)]


def test_words_read_back_or_dropped_with_a_turn_are_known_to_the_store() -> None:
    words, _ = recorder()
    words.found((1, "restored", None))
    words.changed((1, "restored", None))
    assert words.take() is None

    words.saved()  # the turn took them
    words.changed((2, "", None))
    assert words.take() is None


def test_after_a_failed_write_the_same_words_are_written_again() -> None:
    words, _ = recorder()
    words.changed((0, "Sort it", None))
    write = words.take()
    assert write is not None
    words.failed()
    words.changed((0, "Sort it", None))
    again = words.take()
    assert again is not None and again[1] == (0, "Sort it", None)


def test_an_older_write_finishing_last_does_not_replace_newer_words() -> None:
    words, made = recorder()
    words.changed((0, "Sort", None))
    older = words.take()
    words.changed((0, "Sort by the mean", None))
    newer = words.take()
    assert older is not None and newer is not None

    words.write(*newer)
    words.write(*older)  # its thread was slower

    assert made == [(0, "Sort by the mean", None)]
