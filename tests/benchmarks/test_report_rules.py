"""How `convtui report` turns sessions into its tables under each protocol (pure: no store)."""

from __future__ import annotations

import pytest

from convtui.benchmarks.reports.report import Outcome, build_report

T, F = True, False


def outcome(task: str, passes: tuple[bool, ...], protocol: str) -> Outcome:
    return Outcome(
        model="m",
        feedback="CF,EF:full",
        task_id=task,
        turn_passes=passes,
        max_turns=4,
        status="solved" if any(passes) else "exhausted",
        protocol=protocol,
    )


def test_pass_rows_are_per_turn_under_convcodeworld_and_cumulative_under_convtui():
    # Task a passes at turn 1 and fails at turn 2 (possible in the reference, which keeps
    # generating); task b solves it at turn 3; neither passed at turn 0.
    sessions = [("a", (F, T, F, F)), ("b", (F, F, F, T))]
    report = build_report(
        [
            outcome(task, passes, p)
            for p in ("convcodeworld", "convtui")
            for task, passes in sessions
        ]
    )
    columns = {c.protocol: c for c in report.columns}
    assert set(columns) == {"convcodeworld", "convtui"}  # never one mixed column
    assert columns["convcodeworld"].pass_at == (0.0, 0.5, 0.0, 0.5)
    assert columns["convtui"].pass_at == (0.0, 0.5, 0.5, 1.0)
    for column in columns.values():  # MRR and Recall are the reference's live ones either way
        assert column.mrr == pytest.approx((1 / 2 + 1 / 4) / 2)
        assert column.recall == 1.0
    data = report.to_json()
    assert {c["protocol"] for c in data["columns"]} == {"convcodeworld", "convtui"}
    assert "protocol" in report.summary_csv().splitlines()[0]


def test_turns_a_session_never_ran_carry_its_last_verdict():
    # Solved at turn 1, so the loop stopped: turns 2 and 3 count as passed; a session that
    # stopped after a failing turn 0 fails from there on.
    report = build_report(
        [outcome("a", (F, T), "convcodeworld"), outcome("b", (F,), "convcodeworld")]
    )
    assert report.columns[0].pass_at == (0.0, 0.5, 0.5, 0.5)


def test_an_unknown_protocol_is_refused_in_one_line():
    from convtui.core.errors import ConvtuiError

    with pytest.raises(ConvtuiError, match="unknown protocol"):
        build_report([outcome("a", (T,), "ours")])
