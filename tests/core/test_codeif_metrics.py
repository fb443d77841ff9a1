"""CodeIF-Bench's IA, CA, IFR and IFE on hand-made round matrices (every number worked out
by hand in the comments), a static conversation with a Functionality Extension round and a
dynamic one with feedback rounds and a dropped instruction."""

from __future__ import annotations

import pytest

from convtui.core.codeif.metrics import Round, ia_by_category, per_round, round_scores

IO, EH, FE, AC = (
    "Input-Output Conditions",
    "Exception Handling",
    "Functionality Extension",
    ("Annotation Coverage"),
)

# Static: round i gives instruction i; the model's own answers, no feedback.
STATIC = [
    Round(1, "instruction", "Base", {"Base": True}),
    Round(2, "instruction", IO, {"Base": True, IO: False}),
    Round(3, "instruction", FE, {"Base": False, IO: True, FE: True}),
    Round(4, "instruction", AC, {"Base": True, IO: False, FE: True, AC: True}),
]


def test_static_rounds_score_as_the_paper_defines() -> None:
    s = round_scores(STATIC)
    assert [x.ia for x in s] == [1.0, 0.0, 1.0, 1.0]
    # CA leaves Functionality Extension out: round 3 has Base no, IO yes -> 1/2; round 4
    # Base yes, IO no, AC yes -> 2/3.
    assert [x.ca for x in s] == pytest.approx([1.0, 0.5, 0.5, 2 / 3])
    # IFR: round 2 keeps Base (0/1); round 3 loses Base of {Base} (1/1); round 4 had IO and FE
    # followed and loses IO (1/2).
    assert [x.ifr for x in s] == pytest.approx([0.0, 0.0, 1.0, 0.5])


# Dynamic: round 2 gives IO and fails, round 3 is its feedback round and fails too: IO is
# dropped; round 4 gives EH (followed), round 5 gives FE and fails, round 6 its feedback round
# passes.
DYNAMIC = [
    Round(1, "instruction", "Base", {"Base": True}),
    Round(2, "instruction", IO, {"Base": True, IO: False}),
    Round(3, "feedback", IO, {"Base": False, IO: False}),
    Round(4, "instruction", EH, {"Base": True, IO: False, EH: True}, frozenset({IO})),
    Round(5, "instruction", FE, {"Base": True, IO: False, EH: True, FE: False}, frozenset({IO})),
    Round(6, "feedback", FE, {"Base": True, IO: False, EH: False, FE: True}, frozenset({IO})),
]


def test_dynamic_rounds_count_the_dropped_instruction_and_every_round_played() -> None:
    s = round_scores(DYNAMIC)
    assert [x.ia for x in s] == [1.0, 0.0, 0.0, 1.0, 0.0, 1.0]
    # CA: IO stays counted after it is dropped (it was given); FE never counts.
    assert [x.ca for x in s] == pytest.approx([1.0, 0.5, 0.0, 2 / 3, 2 / 3, 1 / 3])
    # IFE: instructions followed (FE out) per round played: 1/1, 1/2, 0/3, 2/4, 2/5, 1/6.
    assert [x.ife for x in s] == pytest.approx([1.0, 0.5, 0.0, 0.5, 0.4, 1 / 6])
    # IFR: round 3 forgets Base (1/1); round 6 had Base and EH, forgets EH (1/2).
    assert [x.ifr for x in s] == pytest.approx([0.0, 0.0, 1.0, 0.0, 0.0, 0.5])


def test_averages_are_over_the_tasks_that_reached_a_round() -> None:
    rows = per_round([STATIC, DYNAMIC])
    assert [r.tasks for r in rows] == [2, 2, 2, 2, 1, 1]
    assert rows[1].ia == pytest.approx(0.0)
    assert rows[2].ia == pytest.approx(0.5)  # static FE followed, dynamic feedback round not
    assert rows[3].ca == pytest.approx((2 / 3 + 2 / 3) / 2)
    assert rows[5].ife == pytest.approx(1 / 6)


def test_ia_by_category_counts_instruction_rounds_only() -> None:
    found = ia_by_category([STATIC, DYNAMIC])
    assert found[IO] == (2, 0.0)  # the dynamic feedback round for IO is not counted
    assert found[FE] == (2, 0.5)  # static followed, dynamic's instruction round not
    assert found["Base"] == (2, 1.0)


def test_a_round_without_a_verdict_for_its_own_instruction_is_refused() -> None:
    with pytest.raises(ValueError, match="no verdict"):
        Round(1, "instruction", IO, {"Base": True})
