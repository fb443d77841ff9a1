"""Live-vs-static rank correlation (core/metrics/correlation.py): scipy's values against the rank
arithmetic done by hand, and every case it cannot answer explained in words."""

from __future__ import annotations

import math

import pytest

from convtui.core.metrics.correlation import rank_correlation

pytest.importorskip("scipy")  # the exec extra


def test_spearman_and_kendall_without_ties_match_the_hand_computation():
    live = {"a": 0.9, "b": 0.7, "c": 0.5, "d": 0.2}  # ranks a=4 b=3 c=2 d=1
    static = {"a": 0.6, "b": 0.8, "c": 0.3, "d": 0.1}  # ranks a=3 b=4 c=2 d=1
    # d = (1, -1, 0, 0), sum of d^2 = 2; rho = 1 - 6 * 2 / (4 * (16 - 1)) = 1 - 12/60.
    rho = 1 - 6 * 2 / (4 * (4**2 - 1))
    assert rho == pytest.approx(0.8)
    # Pairs: only (a, b) is ordered differently, so 5 concordant, 1 discordant of 6.
    tau = (5 - 1) / 6
    # Exact null distribution of 4 untied ranks: 1 of the 24 orders has no discordant pair
    # and 3 have one, so P(|tau| >= 2/3) = 2 * 4 / 24.
    tau_p = 2 * (1 + 3) / 24
    result = rank_correlation(live, static)
    assert result.reason == ""
    assert result.models == ("a", "b", "c", "d") and result.n == 4
    assert result.spearman_rho == pytest.approx(rho)
    assert result.kendall_tau == pytest.approx(tau)
    assert result.kendall_p == pytest.approx(tau_p)
    assert result.spearman_p is not None and 0 < result.spearman_p <= 1


def test_spearman_with_ties_is_pearson_on_average_ranks_and_kendall_is_tau_b():
    live = {"a": 0.9, "b": 0.5, "c": 0.5, "d": 0.2}  # ranks a=4 b=2.5 c=2.5 d=1
    static = {"a": 0.7, "b": 0.8, "c": 0.3, "d": 0.1}  # ranks a=3 b=4 c=2 d=1
    x, y = [4, 2.5, 2.5, 1], [3, 4, 2, 1]  # both have mean 2.5
    dx, dy = [v - 2.5 for v in x], [v - 2.5 for v in y]  # (1.5, 0, 0, -1.5), (.5, 1.5, -.5, -1.5)
    covariance = sum(a * b for a, b in zip(dx, dy, strict=True))  # 0.75 + 2.25 = 3
    rho = covariance / math.sqrt(sum(a * a for a in dx) * sum(b * b for b in dy))  # 3/sqrt(4.5*5)
    assert rho == pytest.approx(3 / math.sqrt(22.5))
    # Of the 6 pairs, (a, b) is discordant, (b, c) is tied in live only, the other 4 are
    # concordant: tau-b = (C - D) / sqrt((n0 - ties_live) * (n0 - ties_static)).
    tau_b = (4 - 1) / math.sqrt((6 - 1) * (6 - 0))
    result = rank_correlation(live, static)
    assert result.spearman_rho == pytest.approx(rho)
    assert result.kendall_tau == pytest.approx(tau_b)


def test_models_scored_only_one_way_are_left_out():
    live = {"a": 0.9, "b": 0.7, "c": 0.5, "only-live": 0.1}
    static = {"a": 0.8, "b": 0.6, "c": 0.4, "only-static": 0.9}
    result = rank_correlation(live, static)
    assert result.models == ("a", "b", "c")
    assert result.spearman_rho == pytest.approx(1.0)
    assert result.kendall_tau == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("live", "static", "reason"),
    [
        (
            {"a": 0.9, "b": 0.7, "c": 0.1},
            {"a": 0.8, "b": 0.6},
            "needs at least 3 models with both live and static results; found 2",
        ),
        (
            {"a": 0.5, "b": 0.5, "c": 0.5},
            {"a": 0.8, "b": 0.6, "c": 0.1},
            "every model has the same live MRR: ranks are undefined",
        ),
        (
            {"a": 0.9, "b": 0.6, "c": 0.1},
            {"a": 0.4, "b": 0.4, "c": 0.4},
            "every model has the same static MRR: ranks are undefined",
        ),
        ({"a": 0.9, "b": 0.6, "c": 0.1}, {}, "no static results to compare with"),
    ],
)
def test_a_correlation_that_cannot_be_computed_says_why_instead_of_nan(live, static, reason):
    result = rank_correlation(live, static)
    assert result.reason == reason and not result.computed
    assert (result.spearman_rho, result.spearman_p, result.kendall_tau, result.kendall_p) == (
        None,
        None,
        None,
        None,
    )


def test_the_reason_names_the_metric():
    result = rank_correlation(
        {"a": 1.0, "b": 1.0, "c": 1.0}, {"a": 0.1, "b": 0.2, "c": 0.3}, "Recall"
    )
    assert result.reason == "every model has the same live Recall: ranks are undefined"
