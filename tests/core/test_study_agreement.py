"""Agreement between a study's annotators (core/studies/agreement.py) and their scores
(core/studies/outcomes.py), against values computed by hand and by a small independent
Krippendorff's alpha written out below from its definition (pairable values in a
coincidence sum), never by the package under test."""

from __future__ import annotations

import math
from itertools import permutations

import pytest

from convtui.core.studies.agreement import Alpha, agreement, krippendorff_alpha
from convtui.core.studies.outcomes import Scores, TaskOutcome, live_scores, pooled

NAN = math.nan


def by_definition(matrix: list[list[float]], interval: bool) -> float:
    """Krippendorff's alpha = 1 - D_o / D_e over the pairable values (units with two or
    more): D_o sums δ² over the ordered pairs inside each unit, each unit weighted
    1/(m_u - 1), over n values; D_e sums δ² over every ordered pair of all n values, over
    n(n - 1). δ is 0/1 (nominal) or the difference (interval)."""
    units = [[v for v in column if not math.isnan(v)] for column in zip(*matrix, strict=True)]
    units = [u for u in units if len(u) >= 2]
    values = [v for u in units for v in u]
    n = len(values)

    def delta(a: float, b: float) -> float:
        return (a - b) ** 2 if interval else float(a != b)

    observed = sum(sum(delta(a, b) for a, b in permutations(u, 2)) / (len(u) - 1) for u in units)
    expected = sum(delta(a, b) for a, b in permutations(values, 2)) / (n - 1)
    return 1 - observed / expected


def outcome(task: str, first_pass: int | None, budget: int = 3) -> TaskOutcome:
    """A session that passed first at ``first_pass`` (and stopped), or never."""
    if first_pass is None:
        return TaskOutcome(task, (False,) * budget, budget)
    return TaskOutcome(task, (False,) * first_pass + (True,), budget)


# Three annotators, four tasks, budget 3 (turns 0-2). "t2" is cy's alone: not overlapped.
STUDY = {
    "ana": [outcome("t4", 0), outcome("t5", 0), outcome("t8", None)],
    "ben": [outcome("t5", None)],
    "cy": [outcome("t4", 1), outcome("t2", 2), outcome("t8", None)],
}


def test_alpha_on_solved_and_on_turns_matches_the_hand_computation():
    """Overlapped: t4 (ana 1, cy 1), t5 (ben 0, ana 1), t8 (ana 0, cy 0); n = 6 values.

    Nominal: coincidences o00 = 2, o11 = 2, o01 = o10 = 1, n0 = n1 = 3, so
    alpha = 1 - (n-1)(o01+o10) / (2 n0 n1) = 1 - 5·2/18 = 4/9.

    Turns to solve (pass at turn k: k+1; unsolved: budget+1 = 4): t4 (1, 2), t5 (4, 1),
    t8 (4, 4). D_o = (2·1² + 2·3²)/6 = 20/6; over the values 1, 1, 2, 4, 4, 4 the ordered
    pairs' squared differences sum to 136, D_e = 136/30, alpha = 1 - 600/816 = 9/34."""
    found = agreement(STUDY)
    assert found.tasks == ("t4", "t5", "t8")
    assert (found.pairs, found.agreed) == (3, pytest.approx(2 / 3))
    assert found.unsolved_turns == (4,)
    assert found.solved == Alpha("nominal", pytest.approx(4 / 9))
    assert found.turns == Alpha("interval", pytest.approx(9 / 34))
    solved = [[1, 1, 0], [NAN, 0, NAN], [1, NAN, 0]]  # ana, ben, cy x t4, t5, t8
    turns = [[1, 1, 4], [NAN, 4, NAN], [2, NAN, 4]]
    assert by_definition(solved, interval=False) == pytest.approx(4 / 9)
    assert by_definition(turns, interval=True) == pytest.approx(9 / 34)


@pytest.mark.parametrize("level", ["nominal", "interval"])
def test_the_package_agrees_with_the_definition_with_missing_values(level):
    matrix = (
        (1.0, 2.0, 3.0, 3.0, 2.0, 1.0, 4.0, 1.0, 2.0, NAN, NAN, NAN),
        (1.0, 2.0, 3.0, 3.0, 2.0, 2.0, 4.0, 1.0, 2.0, 5.0, NAN, 3.0),
        (NAN, 3.0, 3.0, 3.0, 2.0, 3.0, 4.0, 2.0, 2.0, 5.0, 1.0, NAN),
        (1.0, 2.0, 3.0, 3.0, 2.0, 4.0, 4.0, 1.0, 2.0, 5.0, 1.0, NAN),
    )
    got = krippendorff_alpha(matrix, level)
    expected = by_definition([list(r) for r in matrix], interval=level == "interval")
    assert got.value == pytest.approx(expected) and not got.reason


def test_alpha_is_undefined_in_words_without_overlap_or_without_variation():
    alone = agreement({"ana": [outcome("t1", 0)], "ben": [outcome("t2", None)]})
    assert (alone.tasks, alone.pairs, alone.agreed) == ((), 0, None)
    for alpha in (alone.solved, alone.turns):
        assert alpha.value is None and "no task was finished by two" in alpha.reason
    same = agreement({"ana": [outcome("t1", 1)], "ben": [outcome("t1", 1)]})
    assert same.pairs == 1 and same.agreed == 1.0
    assert same.solved.value is None and "same solved (1)" in same.solved.reason
    assert same.turns.value is None and "same turns to solve (2)" in same.turns.reason
    assert agreement({}).solved.value is None
    # One annotator with variation across tasks still has nobody to agree with.
    single = agreement({"ana": [outcome("t1", 0), outcome("t2", None)]})
    assert single.solved.value is None and single.pairs == 0


def test_turns_to_solve_counts_from_one_and_unsolved_is_one_past_the_budget():
    assert [outcome("t", k).turns_to_solve for k in (0, 1, 2)] == [1, 2, 3]
    assert outcome("t", None).turns_to_solve == 4
    # A pass past the budget (a longer session than the study allowed) is not a solve.
    late = TaskOutcome("t", (False, False, False, True), 3)
    assert (late.solved, late.turns_to_solve) == (False, 4)
    assert TaskOutcome("t", (), 3).turns_to_solve == 4  # given up before its first turn


def test_scores_are_live_mrr_and_recall_and_pool_by_size():
    """ana: passes at 0, 0, never: MRR (1+1+0)/3, Recall 2/3; cy: at 1, 2, never:
    MRR (1/2 + 1/3)/3 = 5/18, Recall 2/3; ben: never. All seven: MRR (2 + 5/6)/7, Recall 4/7."""
    scores = {name: live_scores(mine) for name, mine in STUDY.items()}
    assert scores["ana"] == Scores(3, pytest.approx(2 / 3), pytest.approx(2 / 3))
    assert scores["cy"] == Scores(3, pytest.approx(5 / 18), pytest.approx(2 / 3))
    assert scores["ben"] == Scores(1, 0.0, 0.0)
    everyone = pooled(list(scores.values()))
    assert everyone == Scores(7, pytest.approx((2 + 5 / 6) / 7), pytest.approx(4 / 7))
    whole = live_scores([o for mine in STUDY.values() for o in mine])
    assert whole == Scores(7, pytest.approx(everyone.mrr), pytest.approx(everyone.recall))
    assert live_scores([]) is None and pooled([None]) is None
    assert Scores(3, 2 / 3, 5 / 18).to_json() == {"tasks": 3, "mrr": 66.7, "recall": 27.8}


def test_a_missing_krippendorff_package_is_a_reason_not_a_crash(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "krippendorff", None)
    found = krippendorff_alpha(((1.0, 0.0), (1.0, 1.0)), "nominal")
    assert found.value is None and 'pip install "convtui[study]"' in found.reason
