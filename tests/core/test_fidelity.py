"""What each feedback is worth (core/studies/fidelity.py, with core/metrics/stats.py's
statistics over sessions), against values computed by hand on three states x two targets,
each number worked out in the docstring or comment beside it; and the unit, the per-target
tables and the Holm adjustment on fixtures built for each."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from convtui.core.metrics.stats import Bootstrap, draw_counts, percentile_interval
from convtui.core.studies.fidelity import FeedbackOutcome, fidelity

# state -> (task, annotator, session): each of these states is a session of its own.
STATES = {"s1": ("A", "ana", "ana-A"), "s2": ("A", "ben", "ben-A"), "s3": ("B", "ana", "ana-B")}

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
            session_id=STATES[state][2],
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
    """person - none, pass: s1 (1, 0), s2 (0, 0), s3 (1, 1): 3/6; session means .5, 0, 1: two
    better, none worse; a session holds two pairs (no McNemar), so the exact sign-flip test of the
    session means: of ±.5 ±1, |sum| >= 1.5 in 2 of 4, p = 2/4. Share: s1 (3/4, 0), s2 (2/4, 0),
    s3 (3/4, 3/4): 2.75/6, three sessions better, the exact sign-flip test 2/8. sim - none,
    pass: s1 (1, 1), s2 (0, -1), s3 (0): 1/5 over 5 pairs; session means 1, -.5, 0: one each
    way, p = 2·(1 + 2)/4 capped at 1; d_z = mean(1, -.5, 0) / sd = (1/6) / sqrt(7/12). Share: s1
    (3/4, 2/4), s2 (0, -3/4), s3 (2/4): 1/5. Three sessions are fewer than stats' ten: no
    interval, a reason."""
    person = row(REPORT.sources, "person")
    assert person.gain_pass is not None and person.gain_share is not None
    assert person.gain_pass.difference.value == pytest.approx(0.5)
    assert (person.gain_pass.units, person.gain_pass.pairs) == (3, 6)
    assert person.gain_pass.first_better == ("ana-A", "ana-B")
    assert person.gain_pass.second_better == ()
    assert person.gain_pass.p_value == pytest.approx(0.5)
    assert person.gain_pass.test == "sign-flip permutation test over sessions (exact)"
    assert person.gain_share.difference.value == pytest.approx(2.75 / 6)
    assert person.gain_share.p_value == pytest.approx(2 / 8)
    assert person.gain_share.test == "sign-flip permutation test over sessions (exact)"
    assert person.gain_pass.difference.low is None
    assert person.gain_pass.difference.reason == (
        "3 sessions are too few for an interval (at least 10)"
    )
    sim = row(REPORT.sources, "sim")
    assert sim.gain_pass is not None and sim.gain_share is not None
    assert sim.gain_pass.difference.value == pytest.approx(0.2)
    assert (sim.gain_pass.units, sim.gain_pass.pairs) == (3, 5)
    assert (sim.gain_pass.first_better, sim.gain_pass.second_better) == (("ana-A",), ("ben-A",))
    assert sim.gain_pass.p_value == 1.0
    assert sim.gain_pass.effect_size == pytest.approx((1 / 6) / math.sqrt(7 / 12))
    assert sim.gain_share.difference.value == pytest.approx(0.2)


def test_the_control_gains_exactly_nothing_over_itself():
    control = row(REPORT.sources, "none")
    assert control.gain_pass is not None
    assert control.gain_pass.difference.value == 0
    assert (control.gain_pass.p_value, control.gain_pass.effect_size) == (1.0, None)
    assert control.gain_pass.first_better == control.gain_pass.second_better == ()


def test_per_task_tables_each_hold_the_control_and_only_sources_present():
    """Task A (s1, s2): none 1/4, person 2/4, sim 2/4, person's gain (1+0+0+0)/4.
    Task B (s3): none 0/2, person 2/2, sim 0/1, person's gain 1, sim's 0 on one pair."""
    assert sorted(REPORT.sources_by_task) == ["A", "B"]
    a, b = REPORT.sources_by_task["A"], REPORT.sources_by_task["B"]
    assert [r.source for r in a] == [r.source for r in b] == ["none", "person", "sim"]
    assert [r.pass_rate for r in a] == pytest.approx([1 / 4, 2 / 4, 2 / 4])
    assert [r.pass_rate for r in b] == pytest.approx([0, 1, 0])
    assert row(a, "person").gain_pass.difference.value == pytest.approx(0.25)
    assert row(b, "person").gain_pass.difference.value == pytest.approx(1.0)
    assert (row(b, "sim").gain_pass.difference.value, row(b, "sim").gain_pass.pairs) == (0, 1)


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
    """ana (s1, s3): person passes 1,0,1,1 = 3/4 against none 0/4, gain 3/4 on 2 sessions,
    both better: p = 2/4; shares (4+2+4+4)/16 against (1+2+1+1)/16. ben (s2): 1/2 against
    1/2, gain 0, one session that ties: p = 1. Holm over the two annotators: ana's 0.5 x 2
    = 1, ben's max(1, 1) = 1."""
    ana, ben = REPORT.annotators
    assert (ana.annotator, ben.annotator) == ("ana", "ben")
    assert (ana.states, ben.states) == (2, 1)
    assert (ana.person_pass_rate, ana.control_pass_rate) == (0.75, 0.0)
    assert (ana.person_share, ana.control_share) == (14 / 16, 5 / 16)
    assert ana.gain_pass.difference.value == pytest.approx(0.75)
    assert (ana.gain_pass.units, ana.gain_pass.p_value) == (2, 0.5)
    assert ana.gain_share.difference.value == pytest.approx((0.75 + 0 + 0.75 + 0.75) / 4)
    assert (ben.person_pass_rate, ben.control_pass_rate, ben.gain_pass.units) == (0.5, 0.5, 1)
    assert (ben.gain_pass.difference.value, ben.gain_pass.p_value) == (0, 1.0)
    assert (ana.holm_pass, ben.holm_pass) == (1.0, 1.0)


def test_person_against_each_simulator_and_the_control():
    """person - sim, pass: s1 (0, -1), s2 (0, 1), s3 (1): 1/5; session means -.5, .5, 1: two to one;
    sign flips of ±.5 ±.5 ±1 reach |sum| >= 1 in 6 of 8 (only +.5 -.5 ... and -.5 +.5 ... with
    the 1 against them fall short), p = 6/8. Share: s1 (0, -2/4), s2 (2/4, 3/4), s3 (1/4): 1/5.
    The row against the control is the person's gain."""
    assert [r.other for r in REPORT.pairs] == ["none", "sim"]
    sim = row(REPORT.pairs, "sim", "other")
    assert sim.pass_diff.difference.value == pytest.approx(0.2)
    assert (len(sim.pass_diff.first_better), len(sim.pass_diff.second_better)) == (2, 1)
    assert sim.pass_diff.p_value == pytest.approx(6 / 8)
    assert sim.share_diff.difference.value == pytest.approx(0.2)
    assert row(REPORT.pairs, "none", "other").pass_diff == row(REPORT.sources, "person").gain_pass
    b = row(REPORT.pairs_by_task["B"], "sim", "other")
    assert (b.pass_diff.difference.value, b.pass_diff.units) == (1.0, 1)


def outcome(state: str, session: str, source: str, target: str, passed: bool, **kw: str):
    return FeedbackOutcome(
        state_id=state,
        session_id=session,
        task_id=kw.get("task", "T"),
        annotator=kw.get("annotator", "ana"),
        source=source,
        target=target,
        passed=passed,
        tests_passed=int(passed),
        tests_total=1,
    )


def test_the_states_of_one_session_are_one_unit_not_two():
    """Session x: states x/0 and x/1, the person's words pass and the control fails on
    both; session y: y/0, the other way round. Over pairs the gain is (1 + 1 - 1)/3 = 1/3;
    over sessions one is better and one worse, so the sign test's p is 1 (counting states,
    two against one, it would be 2·(1 + 3)/8 = 1 too, but the better side would be two)."""
    rows = []
    for state, session, person in (("x/0", "x", True), ("x/1", "x", True), ("y/0", "y", False)):
        rows.append(outcome(state, session, "person", "t", person))
        rows.append(outcome(state, session, "none", "t", not person))
    gain = row(fidelity(rows, resamples=50).sources, "person").gain_pass
    assert gain.difference.value == pytest.approx(1 / 3)
    assert (gain.units, gain.pairs) == (2, 3)
    assert (gain.first_better, gain.second_better) == (("x",), ("y",))
    assert gain.p_value == 1.0
    with pytest.raises(ValueError, match="two sessions"):
        fidelity([outcome("x/0", "x", "none", "t", True), outcome("x/0", "z", "person", "t", True)])


def many_sessions() -> list[FeedbackOutcome]:
    """Twelve sessions of two states each on two targets; the person's words pass where
    (session + state + target) is odd-ish, the control where it is divisible by 3."""
    rows = []
    for i in range(12):
        for turn in range(2):
            state, session = f"s{i:02}/{turn}", f"s{i:02}"
            for k, target in enumerate(("t1", "t2")):
                person = (i * 5 + turn * 3 + k) % 4 != 0
                control = (i + turn + k) % 3 == 0
                rows.append(outcome(state, session, "person", target, person))
                rows.append(outcome(state, session, "none", target, control))
    return rows


def test_the_interval_is_stats_percentile_bootstrap_over_sessions():
    """The documented procedure (core/metrics/stats.py): per session the sum and count of
    its (state, target) differences; each resample draws sessions with replacement by
    draw_counts (PCG64 from the seed); its mean is the drawn sums over the drawn counts; the
    bounds are numpy's quantiles at 2.5 % and 97.5 %."""
    data = many_sessions()
    report = fidelity(data, seed=5, resamples=300)
    gain = row(report.sources, "person").gain_pass
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for p in (o for o in data if o.source == "person"):
        c = next(
            o for o in data if (o.state_id, o.source, o.target) == (p.state_id, "none", p.target)
        )
        sums[p.session_id] = sums.get(p.session_id, 0.0) + p.passed - c.passed
        counts[p.session_id] = counts.get(p.session_id, 0) + 1
    units = sorted(sums)
    draws = draw_counts(12, Bootstrap(resamples=300, seed=5)).astype(float)
    means = (draws @ np.array([sums[u] for u in units])) / (
        draws @ np.array([counts[u] for u in units], dtype=float)
    )
    low, high = percentile_interval(means, 0.95)
    assert (gain.difference.low, gain.difference.high) == (float(low), float(high))
    assert gain.units == 12 and gain.pairs == 48
    assert gain.difference.value == pytest.approx(sum(sums.values()) / 48)
    assert report.method == "95% percentile bootstrap over sessions (300 resamples, seed 5)"
    # The same seed gives the same report; another seed other bounds.
    assert fidelity(data, seed=5, resamples=300) == report
    other = row(fidelity(data, seed=6, resamples=300).sources, "person").gain_pass
    assert (other.difference.low, other.difference.high) != (low, high)


def test_a_target_that_ignores_feedback_has_its_own_table_and_halves_the_pooled_gain():
    """Two sessions, one state each: t1 passes with the person's words and fails without
    them; t2 fails either way. t1's gain is 1, t2's 0, pooled over both (1 + 0)/2 = 0.5."""
    rows = []
    for session in ("a", "b"):
        state = f"{session}/0"
        rows += [outcome(state, session, "person", "t1", True)]
        rows += [outcome(state, session, "none", "t1", False)]
        rows += [outcome(state, session, s, "t2", False) for s in ("person", "none")]
    report = fidelity(rows, resamples=50)
    assert row(report.sources, "person").gain_pass.difference.value == 0.5
    assert sorted(report.by_target) == ["t1", "t2"]
    t1, t2 = report.by_target["t1"], report.by_target["t2"]
    assert row(t1.sources, "person").gain_pass.difference.value == 1.0
    assert row(t2.sources, "person").gain_pass.difference.value == 0.0
    assert t1.annotators[0].gain_pass.difference.value == 1.0
    assert row(t2.pairs, "none", "other").pass_diff.difference.value == 0.0


def test_per_task_and_per_annotator_p_values_come_with_holm():
    """Task A: ana's 4 sessions, every one better with her words: p = 2/16 = 0.125. Task B:
    ben's 6 sessions, all better: p = 2/64 = 0.03125. Holm over the two tasks: B's 2 x
    0.03125 = 0.0625; A's max(0.0625, 1 x 0.125) = 0.125. The annotators are the same
    family (ana is task A, ben task B)."""
    rows = []
    for who, task, n in (("ana", "A", 4), ("ben", "B", 6)):
        for i in range(n):
            session = f"{who}{i}"
            state = f"{session}/0"
            rows += [outcome(state, session, "person", "t", True, task=task, annotator=who)]
            rows += [outcome(state, session, "none", "t", False, task=task, annotator=who)]
    report = fidelity(rows, resamples=50)
    a = row(report.sources_by_task["A"], "person")
    b = row(report.sources_by_task["B"], "person")
    assert (a.gain_pass.p_value, b.gain_pass.p_value) == (0.125, 0.03125)
    assert (a.holm_pass, b.holm_pass) == (0.125, 0.0625)
    assert a.gain_pass.test.startswith("McNemar exact")  # one 0/1 pair per session
    ana, ben = report.annotators
    assert (ana.holm_pass, ben.holm_pass) == (0.125, 0.0625)
    pair_a = row(report.pairs_by_task["A"], "none", "other")
    assert (pair_a.holm_pass, pair_a.holm_share) == (0.125, 0.125)
    assert row(report.sources, "person").holm_pass is None  # pooled: one test, nothing to adjust


def test_an_outcome_with_no_tests_shares_by_its_verdict_and_bad_input_is_refused():
    base = dict(state_id="s", session_id="x", task_id="t", annotator=None, source="none")
    assert (
        FeedbackOutcome(**base, target="m", passed=True, tests_passed=0, tests_total=0).share == 1
    )
    assert (
        FeedbackOutcome(**base, target="m", passed=False, tests_passed=0, tests_total=0).share == 0
    )
    with pytest.raises(ValueError, match="outside"):
        FeedbackOutcome(**base, target="m", passed=False, tests_passed=5, tests_total=4)
    with pytest.raises(ValueError, match="two outcomes"):
        fidelity([*outcomes(), outcomes()[0]])
    with pytest.raises(ValueError, match="resamples"):
        fidelity(outcomes(), resamples=0)


def test_the_report_is_json_and_names_its_unit():
    data = json.loads(json.dumps(REPORT.to_json()))
    assert data["bootstrap"]["unit"] == "sessions"
    assert (data["bootstrap"]["resamples"], data["bootstrap"]["seed"]) == (500, 3)
    assert (
        data["bootstrap"]["text"]
        == "95% percentile bootstrap over sessions (500 resamples, seed 3)"
    )
    person = data["sources"][1]
    assert (person["source"], person["sessions"]) == ("person", 3)
    assert math.isclose(person["gain_pass"]["difference"]["value"], 0.5)
    assert person["gain_pass"]["difference"]["reason"].startswith("3 sessions are too few")
    assert set(data["sources_by_task"]) == {"A", "B"}
    assert data["annotators"][0]["annotator"] == "ana"
    assert set(data["by_target"]) == {"t1", "t2"}
    assert data["by_target"]["t1"]["sources"][0]["source"] == "none"
