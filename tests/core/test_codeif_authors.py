"""CodeIF-Bench's static metrics as the authors' scripts compute them (core/codeif/authors.py),
on hand-made round matrices, every number worked out by hand in the comments from the
scripts' rules (``evaluation.py`` ways 1, 5, 6 and 7, ``IA_CA.py``, ``IFR.py``)."""

from __future__ import annotations

import pytest

from convtui.core.codeif.authors import authors_per_round, task_rows
from convtui.core.codeif.metrics import Round

B, IO, EH, FE, AC = (
    "Base",
    "Input-Output Conditions",
    "Exception Handling",
    "Functionality Extension",
    "Annotation Coverage",
)


def rnd(number: int, instruction: str, own: dict[str, bool]) -> Round:
    """A static round: every instruction given so far is checked (``own``: its own
    asserts); ``followed`` (the paper's check) is not what these rules read."""
    return Round(number, "instruction", instruction, dict.fromkeys(own, False), own=own)


# Base passes; IO's round: IO's own asserts pass but the base ones fail; FE's round passes
# its own; EH's round: everything passes; AC's round: AC passes, EH and Base broken.
TASK_A = [
    rnd(1, B, {B: True}),
    rnd(2, IO, {B: False, IO: True}),
    rnd(3, FE, {B: True, IO: True, FE: True}),
    rnd(4, EH, {B: True, IO: True, FE: False, EH: True}),
    rnd(5, AC, {B: False, IO: True, FE: False, EH: False, AC: True}),
]


def test_ia_is_an_instructions_own_asserts_and_counts_functionality_extension() -> None:
    # Positions: base, then every follow-up (FE included) on its own asserts.
    assert task_rows(TASK_A).ia == (1.0, 1.0, 1.0, 1.0, 1.0)


def test_ca_drops_functionality_extension_rows_and_moves_later_rounds_up() -> None:
    # Base 1; IO round: base asserts fail -> 0; FE: no row; EH round: Base, IO, EH pass -> 1;
    # AC round: Base and EH fail -> 0. Four rows, not five.
    assert task_rows(TASK_A).ca == (1.0, 0.0, 1.0, 0.0)


def test_ifr_only_where_ca_fails_against_everything_passed_before() -> None:
    # No base row. IO round fails; passed before: {Base}; Base's asserts fail now -> 1/1.
    # EH round passes -> 0 (EH joins the passed: {Base, EH}; IO never passed its CA row).
    # AC round fails; Base and EH both fail now -> 2/2.
    assert task_rows(TASK_A).ifr == (None, 1.0, 0.0, 1.0)


# Base fails, so it never counts as passed before; IO passes its CA row, EH's does not and
# its own asserts pass while IO's fail.
TASK_B = [
    rnd(1, B, {B: False}),
    rnd(2, IO, {B: True, IO: True}),
    rnd(3, EH, {B: True, IO: False, EH: True}),
]


def test_a_failed_base_answer_is_never_forgotten() -> None:
    rows = task_rows(TASK_B)
    assert rows.ca == (0.0, 1.0, 0.0)
    # EH round: passed before = {IO} (Base failed in round 1): IO broken -> 1/1.
    assert rows.ifr == (None, 0.0, 1.0)
    assert rows.ia == (0.0, 1.0, 1.0)


def test_a_base_answer_passed_before_counts_as_broken_whenever_ca_fails() -> None:
    # way 7's accumulated_tests is the task's own test list, extended in place: "Base" is
    # checked on every accumulated assert, the check that just failed, even though the base
    # asserts alone still pass here. IO's round: passed before {Base} -> 1/1.
    rows = task_rows([rnd(1, B, {B: True}), rnd(2, IO, {B: True, IO: False})])
    assert rows.ca == (1.0, 0.0)
    assert rows.ifr == (None, 1.0)
    # With IO passed before too (its own asserts still pass): Base broken, IO kept -> 1/2.
    rows = task_rows(
        [
            rnd(1, B, {B: True}),
            rnd(2, IO, {B: True, IO: True}),
            rnd(3, EH, {B: True, IO: True, EH: False}),
        ]
    )
    assert rows.ifr == (None, 0.0, 0.5)


def test_nothing_passed_before_gives_ifr_zero() -> None:
    rows = task_rows([rnd(1, B, {B: False}), rnd(2, IO, {B: False, IO: False})])
    assert rows.ifr == (None, 0.0)


def test_rounds_average_over_the_tasks_with_a_row_there() -> None:
    table = authors_per_round([TASK_A, TASK_B])
    # IA: A has 5 positions, B 3. Round 1: (1 + 0) / 2; rounds 2-3: both 1; rounds 4-5: A only.
    assert [(c["ia"].value, c["ia"].tasks) for c in table] == [
        (0.5, 2),
        (1.0, 2),
        (1.0, 2),
        (1.0, 1),
        (1.0, 1),
    ]
    # CA: A (1, 0, 1, 0), B (0, 1, 0): rounds 1-3 over both, round 4 A only; round 5 none.
    assert [(c["ca"].value, c["ca"].tasks) for c in table[:4]] == [
        (0.5, 2),
        (0.5, 2),
        (0.5, 2),
        (0.0, 1),
    ]
    assert "ca" not in table[4]
    # IFR: no row at round 1; A (1, 0, 1), B (0, 1) at rounds 2-4.
    assert "ifr" not in table[0]
    assert [(c["ifr"].value, c["ifr"].tasks) for c in table[1:4]] == [
        (0.5, 2),
        (0.5, 2),
        (1.0, 1),
    ]


def test_a_conversation_must_start_with_the_base_answer() -> None:
    with pytest.raises(ValueError, match="initial instruction"):
        task_rows([rnd(1, IO, {IO: True})])
