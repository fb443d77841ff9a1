"""Counts in words (core/plural.py): what every CLI and app line that counts goes through."""

from __future__ import annotations

import pytest

from convtui.core.plural import counted, noun


@pytest.mark.parametrize(
    ("n", "singular", "said"),
    [
        (1, "task", "1 task"),
        (0, "task", "0 tasks"),
        (2, "annotator", "2 annotators"),
        (1, "pair of sessions", "1 pair of sessions"),
        (3, "pair of sessions", "3 pairs of sessions"),
    ],
)
def test_one_is_singular_and_every_other_count_plural(n: int, singular: str, said: str) -> None:
    assert counted(n, singular) == said
    assert noun(n, singular) == said.split(" ", 1)[1]
