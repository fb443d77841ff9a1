"""Metric definitions pinned by hand-computed cases (docs/design.md#metrics).

Every expected value below is derived by hand from ConvCodeWorld's ``print_results.py`` rules
(``get_mrr``, ``get_recall``, ``pass_at_1``, ``print_per_turn_results``), written out in the
comment beside it. Vectors have 11 turns: turn 0 plus the 10 published feedback turns."""

import pytest

from convtui.core.metrics import scores as metrics

T, F = True, False
TURNS = 11


def passes_from(turn: int) -> list[bool]:
    """Passes at ``turn`` and every later turn (a pass carried forward), fails before it."""
    return [t >= turn for t in range(TURNS)]


NEVER = [F] * TURNS

# The six target tasks, as ConvCodeWorld would record them (a pass is carried forward, since
# its loop hands passing code back unchanged):
A = passes_from(0)  # passes at turn 0
B = NEVER  # never passes
C = passes_from(2)  # first passes at turn 2
D = [F, T] + [F] * 9  # passes at turn 1, fails from turn 2 on (e.g. a flaky test)
E = [F] * 10 + [T]  # passes only at turn 10, the last
G = passes_from(9)  # first passes at turn 9
TARGETS = [A, B, C, D, E, G]

# The reference model's own live runs for the same six tasks (static replay):
REFERENCES = [
    NEVER,  # A: never
    [F] * 10 + [T],  # B: only at turn 10, which no target turn is ever handed
    passes_from(1),  # C: at turn 1, before the target's own pass at turn 2
    passes_from(0),  # D: at turn 0
    NEVER,  # E: never
    passes_from(9),  # G: at turn 9, after the target's own pass at turn 9 is seen
]


def test_the_cases_have_eleven_turns():
    assert {len(p) for p in [*TARGETS, *REFERENCES]} == {TURNS}


# --- live ---------------------------------------------------------------------------------------


def test_live_mrr_scores_the_first_passing_turn():
    # first passing turns 0, none, 2, 1, 10, 9 -> 1/1, 0, 1/3, 1/2, 1/11, 1/10
    expected = (1 + 0 + 1 / 3 + 1 / 2 + 1 / 11 + 1 / 10) / 6
    assert metrics.live_mrr(TARGETS) == pytest.approx(expected)


def test_live_recall_is_the_share_with_any_pass():
    # every task but B passes somewhere: 5/6
    assert metrics.live_recall(TARGETS) == pytest.approx(5 / 6)


def test_live_pass_at_turn_is_per_turn_or_turn_zero():
    # row t counts a task when its turn t passed or its turn 0 passed:
    #   t=0:    A                 -> 1/6
    #   t=1:    A, D              -> 2/6
    #   t=2..8: A, C (D failed)   -> 2/6
    #   t=9:    A, C, G           -> 3/6
    #   t=10:   A, C, E, G        -> 4/6
    expected = [1 / 6, 2 / 6] + [2 / 6] * 7 + [3 / 6, 4 / 6]
    assert metrics.live_pass_at_turn(TARGETS) == expected


def test_cumulative_pass_at_turn_counts_any_pass_so_far():
    # row t counts a task that passed at any turn <= t (the convtui protocol):
    #   t=0: A -> 1/6; t=1: A, D -> 2/6; t=2..8: A, C, D -> 3/6; t=9: + G -> 4/6;
    #   t=10: + E -> 5/6
    expected = [1 / 6, 2 / 6] + [3 / 6] * 7 + [4 / 6, 5 / 6]
    curve = metrics.cumulative_pass_at_turn(TARGETS)
    assert curve == expected
    assert curve == sorted(curve)


def test_live_exclude_init_solved_drops_tasks_that_passed_at_turn_zero():
    # A leaves: MRR = (0 + 1/3 + 1/2 + 1/11 + 1/10)/5, Recall = 4/5
    assert metrics.live_mrr(TARGETS, exclude_init_solved=True) == pytest.approx(
        (0 + 1 / 3 + 1 / 2 + 1 / 11 + 1 / 10) / 5
    )
    assert metrics.live_recall(TARGETS, exclude_init_solved=True) == pytest.approx(4 / 5)


# --- static -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "reference", "with_init", "without_init", "recall"),
    [
        # A: reference never. From t=0 the target's own turn 0 passes -> 1/1. From t=1:
        # reference turn 0 failed, target turn 1 passed -> 1/2. Recall scans from 0 -> 1.
        (A, REFERENCES[0], 1.0, 1 / 2, 1.0),
        # B: reference passes only at turn 10; t runs to 10 and looks at reference turns
        # t-1 <= 9 only, the target never passes -> 0, recall 0.
        (B, REFERENCES[1], 0.0, 0.0, 0.0),
        # C: t=2: reference turn 1 passed -> 1/2, checked before the target's own turn-2 pass
        # (which alone would give 1/3).
        (C, REFERENCES[2], 1 / 2, 1 / 2, 1.0),
        # D: reference turn 0 passed -> 1 whatever the target did.
        (D, REFERENCES[3], 1.0, 1.0, 1.0),
        # E: reference never; target turn 10 -> 1/11.
        (E, REFERENCES[4], 1 / 11, 1 / 11, 1.0),
        # G: t=9: reference turn 8 failed, target turn 9 passed -> 1/10 (the reference's own
        # pass at turn 9 would only be seen at t=10).
        (G, REFERENCES[5], 1 / 10, 1 / 10, 1.0),
    ],
    ids=list("ABCDEG"),
)
def test_static_task_scores(target, reference, with_init, without_init, recall):
    assert metrics.static_task_mrr(target, reference, compensate_init=True) == pytest.approx(
        with_init
    )
    assert metrics.static_task_mrr(target, reference, compensate_init=False) == pytest.approx(
        without_init
    )
    assert metrics.static_task_recall(target, reference) == recall


def test_static_mrr_with_compensate_init():
    # per task (above): A 1, B 0, C 1/2, D 1, E 1/11, G 1/10
    expected = (1 + 0 + 1 / 2 + 1 + 1 / 11 + 1 / 10) / 6
    assert metrics.static_mrr(TARGETS, REFERENCES, compensate_init=True) == pytest.approx(expected)


def test_static_mrr_without_compensate_init():
    # only A changes: its scan starts at t=1 -> 1/2
    expected = (1 / 2 + 0 + 1 / 2 + 1 + 1 / 11 + 1 / 10) / 6
    assert metrics.static_mrr(TARGETS, REFERENCES, compensate_init=False) == pytest.approx(expected)


def test_static_recall_counts_every_task_but_b():
    # A, C, D, E, G score 1, B 0 -> 5/6 (the reference's recall has no compensate_init)
    assert metrics.static_recall(TARGETS, REFERENCES) == pytest.approx(5 / 6)


def test_static_pass_at_turn_rows_one_to_ten():
    # rows t = 1..10 count target turn t passed or reference turn 0 passed (D every row):
    #   t=1:    A, D           -> 2/6 (C has not passed yet)
    #   t=2..8: A, C, D        -> 3/6
    #   t=9:    A, C, D, G     -> 4/6
    #   t=10:   A, C, D, E, G  -> 5/6
    # compensate_init plays no part in this table.
    expected = [2 / 6] + [3 / 6] * 7 + [4 / 6, 5 / 6]
    assert metrics.static_pass_at_turn(TARGETS, REFERENCES) == expected


def test_static_exclude_init_solved_drops_tasks_whose_target_passed_at_turn_zero():
    # A leaves: MRR = (0 + 1/2 + 1 + 1/11 + 1/10)/5, Recall = 4/5
    assert metrics.static_mrr(
        TARGETS, REFERENCES, compensate_init=True, exclude_init_solved=True
    ) == pytest.approx((0 + 1 / 2 + 1 + 1 / 11 + 1 / 10) / 5)
    assert metrics.static_recall(TARGETS, REFERENCES, exclude_init_solved=True) == pytest.approx(
        4 / 5
    )


def test_static_without_compensate_init_never_looks_at_the_targets_turn_zero():
    # The target passed only at turn 0 (then broke it); the reference never passed.
    target, reference = [T, F, F], [F, F, F]
    # compensate_init: t=0 target passed -> 1
    assert metrics.static_task_mrr(target, reference, compensate_init=True) == 1.0
    # without: t=1 and t=2 find no pass on either side -> 0
    assert metrics.static_task_mrr(target, reference, compensate_init=False) == 0.0
    # recall always scans from t=0 -> 1
    assert metrics.static_task_recall(target, reference) == 1.0
    # the per-turn table starts at turn 1: rows t=1, t=2 are both 0
    assert metrics.static_pass_at_turn([target], [reference]) == [0.0, 0.0]


def test_static_reference_success_at_turn_k_gives_one_over_k_plus_one():
    # reference passes first at turn k=3, the target never: seen at t=4 -> 1/4
    reference = [F, F, F, T, T, T]
    assert metrics.static_task_mrr([F] * 6, reference, compensate_init=False) == 1 / 4


def test_static_pass_at_turn_is_not_cumulative():
    # target passes at turn 1 and fails from turn 2; reference never: rows 1, 0, 0
    assert metrics.static_pass_at_turn([[F, T, F, F]], [[F] * 4]) == [1.0, 0.0, 0.0]


def test_static_needs_target_and_reference_of_one_length():
    with pytest.raises(ValueError):
        metrics.static_task_mrr([F, F], [F, F, F], compensate_init=True)
    with pytest.raises(ValueError):
        metrics.static_mrr([[F, F]], [], compensate_init=True)


# --- carrying verdicts forward ------------------------------------------------------------------


def test_carry_forward_repeats_a_pass_on_turns_that_never_ran():
    # a convtui session stops at its pass; ConvCodeWorld re-runs the unchanged code
    assert metrics.carry_forward([F, F, T], 5) == [F, F, T, T, T]


def test_carry_forward_fails_the_turns_of_a_session_cut_short():
    assert metrics.carry_forward([F, F], 5) == [F] * 5
    assert metrics.carry_forward([], 3) == [F] * 3
    # only the last recorded verdict is carried: a pass that was later broken is not
    assert metrics.carry_forward([T, F], 4) == [T, F, F, F]


def test_carry_forward_keeps_a_complete_session_and_refuses_a_longer_one():
    assert metrics.carry_forward(D, TURNS) == D
    with pytest.raises(ValueError):
        metrics.carry_forward([F] * 4, 3)


def test_first_pass():
    assert [metrics.first_pass(p) for p in TARGETS] == [0, None, 2, 1, 10, 9]


# --- shapes -------------------------------------------------------------------------------------


def test_tasks_must_share_one_number_of_turns():
    with pytest.raises(ValueError):
        metrics.live_pass_at_turn([[T], [T, F]])
    with pytest.raises(ValueError):
        metrics.live_mrr([[T], [T, F]])


def test_no_tasks_give_zero_and_no_rows():
    assert metrics.live_mrr([]) == 0.0
    assert metrics.live_recall([]) == 0.0
    assert metrics.live_pass_at_turn([]) == []
    assert metrics.cumulative_pass_at_turn([]) == []
    assert metrics.static_mrr([], [], compensate_init=True) == 0.0
    assert metrics.static_pass_at_turn([], []) == []
