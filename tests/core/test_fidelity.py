"""What each feedback is worth (core/studies/fidelity.py, core/studies/paired.py), against
values computed by hand on three states x two targets, each number worked out in the
docstring or comment beside it."""

from __future__ import annotations

import json
import math
import random

import pytest

from convtui.core.studies.fidelity import FeedbackOutcome, fidelity
from convtui.core.studies.paired import (
    Bootstrap,
    Difference,
    bootstrap_interval,
    paired_difference,
    sign_test,
)

STATES = {"s1": ("A", "ana"), "s2": ("A", "ben"), "s3": ("B", "ana")}

# (state, source, target) -> (passed, tests passed of 4). The simulator has no t2 on s3.
GRID = {
    ("s1", "none", "t1"): (False, 1),
    ("s1", "none", "t2"): (False, 2),
    ("s1", "person", "t1"): (True, 4),
    ("s1", "person", "t2"): (False, 2),
    ("s1", "sim", "t1"): (True, 4),
    ("s1", "sim", "t2"): (True, 4),
    ("s2", "none", "t1"): (False, 0),
    ("s2", "none", "t2"): (True, 4),
    ("s2", "person", "t1"): (False, 2),
    ("s2", "person", "t2"): (True, 4),
    ("s2", "sim", "t1"): (False, 0),
    ("s2", "sim", "t2"): (False, 1),
    ("s3", "none", "t1"): (False, 1),
    ("s3", "none", "t2"): (False, 1),
    ("s3", "person", "t1"): (True, 4),
    ("s3", "person", "t2"): (True, 4),
    ("s3", "sim", "t1"): (False, 3),
}


def outcomes(grid=GRID) -> list[FeedbackOutcome]:
    return [
        FeedbackOutcome(
            state_id=state,
            task_id=STATES[state][0],
            annotator=STATES[state][1] if source == "person" else None,
            source=source,
            target=target,
            passed=passed,
            tests_passed=n,
            tests_total=4,
        )
        for (state, source, target), (passed, n) in grid.items()
    ]


REPORT = fidelity(outcomes(), seed=3, resamples=500)


def row(rows, key: str, attr: str = "source"):
    (found,) = [r for r in rows if getattr(r, attr) == key]
    return found


def test_pass_rate_and_share_per_source_with_the_control_first():
    """none: passes 0,0,0,1,0,0 -> 1/6; tests 1+2+0+4+1+1 = 9 of 24.
    person: 1,0,0,1,1,1 -> 4/6; 4+2+2+4+4+4 = 20 of 24.
    sim (5 outcomes): 1,1,0,0,0 -> 2/5; 4+4+0+1+3 = 12 of 20."""
    assert [r.source for r in REPORT.sources] == ["none", "person", "sim"]
    expected = {"none": (6, 3, 1 / 6, 9 / 24), "person": (6, 3, 4 / 6, 20 / 24)}
    expected["sim"] = (5, 3, 2 / 5, 12 / 20)
    for source, (n, states, rate, share) in expected.items():
        r = row(REPORT.sources, source)
        assert (r.outcomes, r.states) == (n, states)
        assert r.pass_rate == pytest.approx(rate)
        assert r.mean_share == pytest.approx(share)


def test_gain_over_the_control_is_paired_on_states_and_targets():
    """person - none, pass: s1 (1, 0), s2 (0, 0), s3 (1, 1): 3/6; state means .5, 0, 1:
    two better, none worse, p = 2/4. Share: s1 (3/4, 0), s2 (2/4, 0), s3 (3/4, 3/4):
    2.75/6. sim - none, pass: s1 (1, 1), s2 (0, -1), s3 (0): 1/5 over 5 pairs; state
    means 1, -.5, 0: one each way, p = 2·(1 + 2)/4 capped at 1. Share: s1 (3/4, 2/4),
    s2 (0, -3/4), s3 (2/4): 1/5."""
    person = row(REPORT.sources, "person")
    assert person.gain_pass is not None and person.gain_share is not None
    assert person.gain_pass.mean == pytest.approx(0.5)
    assert (person.gain_pass.states, person.gain_pass.pairs) == (3, 6)
    assert (person.gain_pass.first_better, person.gain_pass.second_better) == (2, 0)
    assert person.gain_pass.p_value == pytest.approx(0.5)
    assert person.gain_share.mean == pytest.approx(2.75 / 6)
    sim = row(REPORT.sources, "sim")
    assert sim.gain_pass is not None and sim.gain_share is not None
    assert sim.gain_pass.mean == pytest.approx(0.2)
    assert (sim.gain_pass.states, sim.gain_pass.pairs) == (3, 5)
    assert (sim.gain_pass.first_better, sim.gain_pass.second_better) == (1, 1)
    assert sim.gain_pass.p_value == 1.0
    assert sim.gain_share.mean == pytest.approx(0.2)


def test_the_control_gains_exactly_nothing_over_itself():
    control = row(REPORT.sources, "none")
    assert control.gain_pass is not None
    assert (control.gain_pass.mean, control.gain_pass.low, control.gain_pass.high) == (0, 0, 0)
    assert control.gain_pass.p_value == 1.0


def test_per_task_tables_each_hold_the_control_and_only_sources_present():
    """Task A (s1, s2): none 1/4, person 2/4, sim 2/4, person's gain (1+0+0+0)/4.
    Task B (s3): none 0/2, person 2/2, sim 0/1, person's gain 1, sim's 0 on one pair."""
    assert sorted(REPORT.sources_by_task) == ["A", "B"]
    a, b = REPORT.sources_by_task["A"], REPORT.sources_by_task["B"]
    assert [r.source for r in a] == [r.source for r in b] == ["none", "person", "sim"]
    assert [r.pass_rate for r in a] == pytest.approx([1 / 4, 2 / 4, 2 / 4])
    assert [r.pass_rate for r in b] == pytest.approx([0, 1, 0])
    assert row(a, "person").gain_pass.mean == pytest.approx(0.25)
    assert row(b, "person").gain_pass.mean == pytest.approx(1.0)
    assert (row(b, "sim").gain_pass.mean, row(b, "sim").gain_pass.pairs) == (0, 1)


def test_a_source_with_no_outcomes_is_absent_not_zero():
    only_a = {k: v for k, v in GRID.items() if not (k[1] == "sim" and k[0] == "s3")}
    report = fidelity(outcomes(only_a), resamples=50)
    assert [r.source for r in report.sources_by_task["B"]] == ["none", "person"]
    assert [r.other for r in report.pairs_by_task["B"]] == ["none"]
    no_control = fidelity(outcomes({k: v for k, v in GRID.items() if k[1] != "none"}))
    assert [r.source for r in no_control.sources] == ["person", "sim"]
    assert all(r.gain_pass is None and r.gain_share is None for r in no_control.sources)
    assert no_control.annotators == ()
    assert [r.other for r in no_control.pairs] == ["sim"]


def test_each_annotators_worth_is_their_gain_over_the_control():
    """ana (s1, s3): person passes 1,0,1,1 = 3/4 against none 0/4, gain 3/4 on 2 states;
    shares (4+2+4+4)/16 against (1+2+1+1)/16. ben (s2): 1/2 against 1/2, gain 0, one
    state, an interval of exactly [0, 0]."""
    ana, ben = REPORT.annotators
    assert (ana.annotator, ben.annotator) == ("ana", "ben")
    assert (ana.person_pass_rate, ana.control_pass_rate) == (0.75, 0.0)
    assert (ana.person_share, ana.control_share) == (14 / 16, 5 / 16)
    assert ana.gain_pass.mean == pytest.approx(0.75)
    assert ana.gain_pass.states == 2
    assert ana.gain_share.mean == pytest.approx((0.75 + 0 + 0.75 + 0.75) / 4)
    assert (ben.person_pass_rate, ben.control_pass_rate, ben.gain_pass.states) == (0.5, 0.5, 1)
    assert (ben.gain_pass.mean, ben.gain_pass.low, ben.gain_pass.high) == (0, 0, 0)


def test_person_against_each_simulator_and_the_control():
    """person - sim, pass: s1 (0, -1), s2 (0, 1), s3 (1): 1/5; state means -.5, .5, 1:
    two to one, p = 2·(1 + 3)/8 = 1. Share: s1 (0, -2/4), s2 (2/4, 3/4), s3 (1/4): 1/5.
    The row against the control is the person's gain."""
    assert [r.other for r in REPORT.pairs] == ["none", "sim"]
    sim = row(REPORT.pairs, "sim", "other")
    assert sim.pass_diff.mean == pytest.approx(0.2)
    assert (sim.pass_diff.first_better, sim.pass_diff.second_better) == (2, 1)
    assert sim.pass_diff.p_value == 1.0
    assert sim.share_diff.mean == pytest.approx(0.2)
    assert row(REPORT.pairs, "none", "other").pass_diff == row(REPORT.sources, "person").gain_pass
    b = row(REPORT.pairs_by_task["B"], "sim", "other")
    assert (b.pass_diff.mean, b.pass_diff.states) == (1.0, 1)


def test_sign_test_is_the_doubled_binomial_tail():
    # n = 11, k = 2: 2·(C(11,0) + C(11,1) + C(11,2)) / 2^11 = 2·67/2048.
    assert sign_test(9, 2) == pytest.approx(2 * 67 / 2048)
    assert sign_test(2, 9) == sign_test(9, 2)
    assert sign_test(5, 0) == pytest.approx(2 / 32)
    assert sign_test(3, 3) == 1.0  # 2·42/64 > 1, capped
    assert sign_test(0, 0) == 1.0  # no state where they differ


def test_states_that_never_differ_give_p_one():
    same = paired_difference({"s1": [0.0, 0.0], "s2": [0.0]}, Bootstrap(resamples=10))
    assert same is not None
    assert (same.first_better, same.second_better, same.p_value) == (0, 0, 1.0)
    assert paired_difference({"s1": []}, Bootstrap()) is None


def varied() -> dict[str, list[float]]:
    return {f"s{i:02}": [((i * 7) % 5 - 2) / 4, ((i * 3) % 4 - 1) / 4] for i in range(20)}


def test_the_interval_is_reproducible_from_the_seed_and_moves_with_it():
    diffs = varied()
    settings = Bootstrap(resamples=200, seed=11)
    first = bootstrap_interval(diffs, settings)
    assert bootstrap_interval(dict(reversed(diffs.items())), settings) == first
    assert bootstrap_interval(diffs, Bootstrap(resamples=200, seed=12)) != first
    low, high = first
    mean = sum(sum(d) for d in diffs.values()) / 40
    assert low < mean < high
    assert fidelity(outcomes(), seed=3, resamples=500) == REPORT


def test_the_report_draws_its_intervals_with_its_seed():
    """The person's pass gain on the hand-made grid: s1 (1, 0), s2 (0, 0), s3 (1, 1)."""
    gain = row(REPORT.sources, "person").gain_pass
    diffs = {"s1": [1.0, 0.0], "s2": [0.0, 0.0], "s3": [1.0, 1.0]}
    assert (gain.low, gain.high) == bootstrap_interval(diffs, Bootstrap(resamples=500, seed=3))
    assert 0 <= gain.low <= 0.5 <= gain.high <= 1


def test_the_interval_follows_the_documented_draws():
    """One resample: the mean of the states random.Random(seed).choices drew, over their
    pairs; both bounds are that mean."""
    diffs = {"a": [1.0, 0.0], "b": [1.0], "c": [-1.0]}
    drawn = random.Random(7).choices(range(3), k=3)
    rows = [diffs[s] for s in sorted(diffs)]
    expected = sum(sum(rows[i]) for i in drawn) / sum(len(rows[i]) for i in drawn)
    assert bootstrap_interval(diffs, Bootstrap(resamples=1, seed=7)) == (expected, expected)


def test_two_states_at_zero_and_one_span_the_whole_range():
    """Resampled means are 0, 1/2, 1 with chances 1/4, 1/2, 1/4: the 2.5 % and 97.5 %
    points of 2000 draws are 0 and 1 (about 500 draws at each end)."""
    assert bootstrap_interval({"a": [0.0], "b": [1.0]}, Bootstrap()) == (0.0, 1.0)


def test_an_outcome_with_no_tests_shares_by_its_verdict_and_bad_input_is_refused():
    base = dict(state_id="s", task_id="t", annotator=None, source="none", target="m")
    assert FeedbackOutcome(**base, passed=True, tests_passed=0, tests_total=0).share == 1.0
    assert FeedbackOutcome(**base, passed=False, tests_passed=0, tests_total=0).share == 0.0
    with pytest.raises(ValueError, match="outside"):
        FeedbackOutcome(**base, passed=False, tests_passed=5, tests_total=4)
    with pytest.raises(ValueError, match="two outcomes"):
        fidelity([*outcomes(), outcomes()[0]])
    with pytest.raises(ValueError, match="resamples"):
        Bootstrap(resamples=0)


def test_the_report_is_json():
    data = json.loads(json.dumps(REPORT.to_json()))
    assert data["bootstrap"] == {"resamples": 500, "seed": 3, "level": 0.95}
    person = data["sources"][1]
    assert person["source"] == "person"
    assert math.isclose(person["gain_pass"]["mean"], 0.5)
    assert set(data["sources_by_task"]) == {"A", "B"}
    assert data["annotators"][0]["annotator"] == "ana"
    assert isinstance(Difference(**person["gain_pass"]), Difference)
