"""CodeIF-Bench models ranked under each protocol, each model's protocol shift paired by task,
and whether the ranking moved (benchmarks/reports/codeif_standings.py). Sessions are built
by hand: which verdicts each model gets is the point, not what an executor says."""

from __future__ import annotations

import io

from rich.console import Console

from convtui.benchmarks.reports.codeif_report import CodeifSession, build_groups
from convtui.benchmarks.reports.codeif_standings import ranking_tables, standings
from convtui.core.codeif.instructions import BASE
from convtui.core.codeif.metrics import Round
from convtui.core.metrics.stats import Bootstrap

TASKS = [f"CodeIF/{i}" for i in range(1, 13)]
FIRST, SECOND = "Input-Output Conditions", "Exception Handling"


def conversation(base: bool, first: bool, second: bool) -> tuple[Round, ...]:
    """The base answer and two follow-ups, each round's own asserts as given."""
    return (
        Round(1, "instruction", BASE, {BASE: base}, own={BASE: base}),
        Round(2, "instruction", FIRST, {BASE: base, FIRST: first}, own={BASE: base, FIRST: first}),
        Round(
            3,
            "instruction",
            SECOND,
            {BASE: base, FIRST: first, SECOND: second},
            own={BASE: base, FIRST: first, SECOND: second},
        ),
    )


def sessions(model: str, protocol: str, verdicts: dict[str, tuple[bool, bool, bool]]) -> list:
    return [
        CodeifSession(
            session_id=f"{model}-{protocol}-{task}",
            run_id=f"{model}-{protocol}",
            task_id=task,
            model=model,
            mode="static",
            protocol=protocol,
            status="done",
            rounds=conversation(*verdicts[task]),
            data="d",
        )
        for task in TASKS
    ]


ALL = (True, True, True)
NONE = (False, False, False)
SECOND_FAILS = (True, True, False)


def played() -> list[CodeifSession]:
    """Under codeif, A follows everything, B half the tasks, C nothing. Under convtui a
    repaired test now judges A's second instruction (failed on every task) while B follows
    everything: B above A."""
    half = {t: (ALL if i % 2 else NONE) for i, t in enumerate(TASKS)}
    return [
        *sessions("A", "codeif", dict.fromkeys(TASKS, ALL)),
        *sessions("B", "codeif", half),
        *sessions("C", "codeif", dict.fromkeys(TASKS, NONE)),
        *sessions("A", "convtui", dict.fromkeys(TASKS, SECOND_FAILS)),
        *sessions("B", "convtui", dict.fromkeys(TASKS, ALL)),
        *sessions("C", "convtui", dict.fromkeys(TASKS, NONE)),
    ]


def test_a_ranking_per_protocol_the_shift_per_model_and_the_moves() -> None:
    found = standings(build_groups(played()), Bootstrap(resamples=300, seed=1))
    by_protocol = {r.cell.protocol: r for r in found.rankings}
    assert [r.side for r in by_protocol["codeif"].ranks] == ["A", "B", "C"]
    assert [r.side for r in by_protocol["convtui"].ranks] == ["B", "A", "C"]
    assert by_protocol["codeif"].tasks == 12
    a = by_protocol["convtui"].rank_of("A")
    assert a is not None and (a.value, a.rank, a.low, a.high) == (2 / 3, 2.0, 2.0, 2.0)
    # B's half of the tasks under codeif: its rank interval spans what a resample can give.
    b = by_protocol["codeif"].rank_of("B")
    assert b is not None and b.low <= 2.0 <= b.high
    shifts = {s.model: s for s in found.shifts}
    assert set(shifts) == {"A", "B", "C"}
    ca = shifts["A"].comparisons["ca"].difference
    assert shifts["A"].tasks == 12
    assert (round(ca.value, 6), round(ca.low or 0, 6), round(ca.high or 0, 6)) == (
        round(-1 / 3, 6),
        round(-1 / 3, 6),
        round(-1 / 3, 6),
    )
    assert shifts["C"].comparisons["ca"].difference.value == 0.0
    data = found.to_json()
    assert data["rank_moves"][0]["moved"] == [
        {"model": "A", "codeif": 1.0, "convtui": 2.0},
        {"model": "B", "codeif": 2.0, "convtui": 1.0},
    ]


def test_the_table_puts_both_rankings_side_by_side_and_says_what_moved() -> None:
    found = standings(build_groups(played()), Bootstrap(resamples=200))
    (table,) = ranking_tables(found, "the method")
    out = io.StringIO()
    Console(file=out, width=160).print(table)
    text = " ".join(out.getvalue().split())  # the title and caption wrap to the table
    assert "codeif and convtui protocols" in text
    assert "ranks moved: A #1 → #2, B #2 → #1" in text
    assert "-33.3" in text  # A's CA shift, in points


def test_one_model_or_unshared_tasks_rank_nothing_and_shifts_need_both_protocols() -> None:
    alone = [s for s in played() if s.model == "A" and s.protocol == "codeif"]
    found = standings(build_groups(alone), Bootstrap(resamples=50))
    assert not found and found.rankings == () and found.shifts == ()
    # Two models of one protocol that share 6 of 12 tasks are ranked on those 6.
    some = [s for s in played() if s.protocol == "codeif" and s.model in "AB"]
    some = [s for s in some if s.model == "A" or TASKS.index(s.task_id) < 6]
    (ranking,) = standings(build_groups(some), Bootstrap(resamples=50)).rankings
    assert (ranking.tasks, ranking.left_out) == (6, 6)
