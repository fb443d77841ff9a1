"""The one statistics module (core/metrics/stats.py): every interval and p-value against a value
worked out by hand on a small fixture (the working beside it), and against an independent
implementation on random data (scipy.stats.bootstrap, binomtest, permutation_test,
spearmanr, kendalltau), equal within the bootstrap's own error."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from convtui.core.metrics import stats

scipy_stats = pytest.importorskip("scipy.stats")  # the exec extra: the independent check

MANY = stats.Bootstrap(resamples=20_000, seed=7)


def binary_rows(solved: int, total: int) -> list[tuple[str, list[float]]]:
    return [(f"t{i:02d}", [1.0 if i < solved else 0.0]) for i in range(total)]


def test_a_binary_mean_has_the_binomial_bootstrap_interval():
    # 3 of 10 tasks solved, one item per task: a resample's count of solved tasks is
    # Binomial(10, 0.3). P(X = 0) = 0.7^10 = 0.0282 > 0.025, so the 2.5% bound is 0;
    # P(X <= 5) = 0.9527 < 0.975 <= P(X <= 6) = 0.9894, so the 97.5% bound is 6/10.
    (estimate,) = stats.estimate_means(stats.Clusters.from_rows(binary_rows(3, 10)), MANY)
    assert estimate.value == pytest.approx(0.3)
    assert (estimate.low, estimate.high) == (pytest.approx(0.0), pytest.approx(0.6))
    assert estimate.units == 10 and estimate.reason == ""
    assert estimate.text() == "30.0 [0.0, 60.0]"


def test_clusters_are_resampled_whole_and_their_mean_is_over_items():
    # Task a holds two items (1, 1), b one item (0): the mean over items is 2/3, not the
    # mean of task means (1/2). A resample drawing a twice gives 4/4, b twice 0/2, one
    # each 2/3: exactly those three values, and the interval spans them.
    clusters = stats.Clusters.from_rows([("a", [1.0]), ("b", [0.0]), ("a", [1.0])])
    assert clusters.units == ("a", "b")
    assert clusters.means()[0] == pytest.approx(2 / 3)
    samples = stats.resampled_means(clusters, stats.Bootstrap(resamples=500))
    assert set(np.round(samples[:, 0], 6)) == {1.0, 0.0, round(2 / 3, 6)}
    (estimate,) = stats.estimate_means(clusters, stats.Bootstrap(resamples=500), min_units=2)
    assert (estimate.low, estimate.high) == (0.0, 1.0)


def test_resampled_means_follow_their_definition():
    # The same draws, summed cluster by cluster in plain Python.
    rng = np.random.default_rng(3)
    rows = [
        (f"t{int(u)}", [float(v), None if v > 0.8 else float(v > 0.3)])
        for u, v in zip(rng.integers(0, 12, 60), rng.random(60), strict=True)
    ]
    clusters = stats.Clusters.from_rows(rows)
    bootstrap = stats.Bootstrap(resamples=50, seed=1)
    draws = stats.draw_counts(len(clusters.units), bootstrap)
    assert (draws.sum(axis=1) == len(clusters.units)).all()
    got = stats.resampled_means(clusters, bootstrap)
    for r in range(50):
        for j in range(2):
            num = sum(draws[r, i] * clusters.sums[i, j] for i in range(len(clusters.units)))
            den = sum(draws[r, i] * clusters.counts[i, j] for i in range(len(clusters.units)))
            assert got[r, j] == pytest.approx(num / den)


def test_intervals_agree_with_scipy_bootstrap_on_random_paired_differences():
    rng = np.random.default_rng(11)
    first = rng.random(300) < 0.55
    second = rng.random(300) < 0.45
    pairs = [
        (f"t{i:03d}", float(a), float(b))
        for i, (a, b) in enumerate(zip(first, second, strict=True))
    ]
    comparison = stats.paired_comparison(pairs, stats.Bootstrap(resamples=10_000, seed=2))
    diffs = first.astype(float) - second.astype(float)
    theirs = scipy_stats.bootstrap(
        (diffs,), np.mean, n_resamples=10_000, method="percentile", rng=np.random.default_rng(5)
    ).confidence_interval
    # Two bootstraps of 10,000 differ in a bound by a few hundredths of a standard error.
    se = diffs.std(ddof=1) / math.sqrt(len(diffs))
    assert comparison.difference.low == pytest.approx(theirs.low, abs=0.15 * se)
    assert comparison.difference.high == pytest.approx(theirs.high, abs=0.15 * se)
    assert comparison.difference.value == pytest.approx(diffs.mean())


def test_mcnemar_exact_by_hand_and_against_a_binomial_test():
    # 7 tasks solved by the first side only, 1 by the second only, 12 by both or neither:
    # p = 2 * (C(8,0) + C(8,1)) / 2^8 = 2 * 9 / 256.
    pairs = [(f"a{i}", 1.0, 0.0) for i in range(7)] + [("b0", 0.0, 1.0)]
    pairs += [(f"c{i}", float(i % 2), float(i % 2)) for i in range(12)]
    comparison = stats.paired_comparison(pairs, MANY)
    assert comparison.p_value == pytest.approx(18 / 256)
    assert comparison.test.startswith("McNemar exact")
    assert comparison.first_better == tuple(f"a{i}" for i in range(7))
    assert comparison.second_better == ("b0",)
    assert comparison.difference.value == pytest.approx(6 / 20)
    rng = np.random.default_rng(4)
    for _ in range(20):
        b, c = (int(v) for v in rng.integers(0, 40, 2))
        expected = scipy_stats.binomtest(b, b + c).pvalue if b + c else 1.0
        assert stats.sign_test(b, c) == pytest.approx(expected)


def test_several_pairs_per_task_are_tested_over_tasks_not_pairs():
    # Task a: two pairs (1, 0) and (0, 0) -> mean difference +0.5; task b: (0, 1) -> -1.
    comparison = stats.paired_comparison([("a", 1, 0), ("a", 0, 0), ("b", 0, 1)], MANY, min_units=1)
    assert comparison.pairs == 3 and comparison.units == 2
    assert comparison.first_better == ("a",) and comparison.second_better == ("b",)
    # Several pairs in a task: not McNemar; the sign flips of +0.5 and -1 all reach 0.5.
    assert comparison.test == "sign-flip permutation test over tasks (exact)"
    assert comparison.p_value == 1.0
    assert comparison.difference.value == pytest.approx(0.0)  # (1 + 0 - 1) / 3


def test_sign_flip_test_by_hand_and_against_scipy():
    # Differences 1, 2, 3: the 8 sign patterns sum to ±6, ±4, ±2, 0, 0; |sum| >= 6 in 2 of 8.
    p, name = stats.sign_flip_test([1.0, 0.0, 2.0, 3.0])
    assert p == pytest.approx(2 / 8) and "exact" in name
    rng = np.random.default_rng(9)
    for _ in range(5):
        d = rng.normal(0.4, 1.0, 12)
        theirs = scipy_stats.permutation_test(
            (d,), np.mean, permutation_type="samples", n_resamples=np.inf
        ).pvalue
        assert stats.sign_flip_test(d)[0] == pytest.approx(theirs)
    # Past the exact limit: a Monte Carlo estimate, within its own error of scipy's.
    d = rng.normal(0.15, 1.0, 40)
    mine, name = stats.sign_flip_test(d, seed=1, resamples=20_000)
    theirs = scipy_stats.permutation_test(
        (d,), np.mean, permutation_type="samples", n_resamples=20_000, rng=np.random.default_rng(8)
    ).pvalue
    assert "20000 random patterns" in name
    assert mine == pytest.approx(theirs, abs=4 * math.sqrt(theirs * (1 - theirs) / 20_000) + 1e-3)


def test_a_run_compared_with_itself_differs_by_zero_with_p_one():
    rng = np.random.default_rng(1)
    values = rng.random(50)
    pairs = [(f"t{i}", float(v), float(v)) for i, v in enumerate(values)]
    for test in ("sign", "permutation"):
        comparison = stats.paired_comparison(pairs, MANY, test=test)
        assert comparison.difference.value == 0.0
        assert (comparison.difference.low, comparison.difference.high) == (0.0, 0.0)
        assert comparison.p_value == 1.0
        assert comparison.first_better == comparison.second_better == ()
        assert comparison.effect_size is None


def test_the_same_seed_gives_the_same_bytes_and_another_seed_other_draws():
    rng = np.random.default_rng(2)
    pairs = [(f"t{i}", float(a), float(b)) for i, (a, b) in enumerate(rng.random((80, 2)) < 0.5)]

    def run(seed: int) -> str:
        bootstrap = stats.Bootstrap(resamples=999, seed=seed)
        comparison = stats.paired_comparison(pairs, bootstrap, test="permutation")
        estimates = stats.estimate_means(
            stats.Clusters.from_rows((u, [a]) for u, a, _ in pairs), bootstrap
        )
        return json.dumps(
            [comparison.to_json(digits=12), [e.to_json(digits=12) for e in estimates]]
        )

    assert run(5) == run(5)
    assert run(5) != run(6)


def test_too_few_tasks_or_no_spread_give_a_reason_not_an_interval():
    (few,) = stats.estimate_means(stats.Clusters.from_rows(binary_rows(2, 9)), MANY)
    assert few.low is None and "9 tasks are too few" in few.reason
    assert few.text() == "22.2 (n/a)"
    (flat,) = stats.estimate_means(stats.Clusters.from_rows(binary_rows(0, 40)), MANY)
    assert flat.low is None and "all 40 tasks score the same" in flat.reason
    assert flat.to_json()["reason"] == flat.reason
    (none,) = stats.estimate_means(stats.Clusters.from_rows([("a", [None])]), MANY)
    assert none.units == 0 and none.reason == "no tasks"
    comparison = stats.paired_comparison([("a", 1, 0)] * 3, MANY)
    assert (
        comparison.difference.low is None and "1 tasks are too few" in comparison.difference.reason
    )


def test_holm_by_hand():
    # Sorted 0.01, 0.03, 0.04 -> 3 * 0.01, max(0.03, 2 * 0.03), max(0.06, 1 * 0.04).
    assert stats.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert stats.holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert stats.holm([]) == []


def test_power_by_hand():
    # (z_0.975 + z_0.8) = 1.959964 + 0.841621 = 2.801585.
    assert stats.detectable_difference(100, 0.5) == pytest.approx(2.801585 * 0.5 / 10, rel=1e-5)
    # Binary rate 0.5 on both sides, correlation 0.5: sd = sqrt(2 * 0.25 * 0.5) = 0.5;
    # a 2-point difference needs (2.801585 * 0.5 / 0.02)^2 = 4905.5 -> 4906 tasks.
    sd = stats.binary_difference_sd(0.5, 0.5)
    assert sd == pytest.approx(0.5)
    assert stats.units_needed(0.02, sd) == 4906
    assert stats.detectable_difference(0, 0.5) == math.inf
    with pytest.raises(ValueError):
        stats.binary_difference_sd(1.5)


def test_ranks_with_intervals_and_the_groups_that_cannot_be_told_apart():
    rng = np.random.default_rng(5)
    sides = {
        "strong": list(rng.random(200) < 0.9),
        "middle": list(rng.random(200) < 0.5),
        "middle2": list(rng.random(200) < 0.5),
    }
    ranks = stats.rank_intervals({k: [float(v) for v in vs] for k, vs in sides.items()}, MANY)
    assert ranks[0].side == "strong" and (ranks[0].low, ranks[0].high) == (1.0, 1.0)
    assert {r.side for r in ranks[1:]} == {"middle", "middle2"}
    assert all(r.low == 2.0 and r.high == 3.0 for r in ranks[1:])
    # Ties take their average rank.
    tied = stats.rank_intervals({"a": [1.0, 0.0], "b": [0.0, 1.0]}, MANY)
    assert [r.rank for r in tied] == [1.5, 1.5]
    distinct = {("a", "c"), ("c", "a")}
    groups = stats.indistinguishable_groups(["a", "b", "c", "d"], lambda x, y: (x, y) in distinct)
    assert groups == [("a", "b"), ("b", "c", "d")]


def test_correlations_agree_with_scipy_and_their_intervals_hold_them():
    rng = np.random.default_rng(6)
    for _ in range(10):
        xs = rng.integers(0, 5, (1, 7)).astype(float)  # ties included: tau-b
        ys = xs + rng.integers(-2, 3, (1, 7))
        if len(set(xs[0])) > 1 and len(set(ys[0])) > 1:
            assert stats._spearman_rows(xs, ys)[0] == pytest.approx(
                scipy_stats.spearmanr(xs[0], ys[0]).statistic
            )
            assert stats._kendall_rows(xs, ys)[0] == pytest.approx(
                scipy_stats.kendalltau(xs[0], ys[0]).statistic
            )
    live = {
        m: list(rng.random(60) < q) for m, q in zip("abcde", (0.1, 0.3, 0.5, 0.7, 0.9), strict=True)
    }
    static = {m: [float(v) for v in vs] for m, vs in live.items()}
    bounds = stats.correlation_intervals(
        {m: [float(v) for v in vs] for m, vs in live.items()}, static, MANY
    )
    assert bounds["spearman"] == (1.0, 1.0) and bounds["kendall"] == (1.0, 1.0)


def test_a_mean_of_means_resamples_each_mean_over_the_clusters_drawn():
    # Metric 0 is held by every task, metric 1 by the even ones only (a later round some
    # tasks never reached). The value is the mean of the two means, not a mean over items;
    # each resample's is worked out here loop by loop from the same draws.
    rng = np.random.default_rng(3)
    rows = [
        (f"t{i:02d}", [float(rng.random() < 0.6), float(rng.random() < 0.3) if i % 2 else None])
        for i in range(20)
    ]
    clusters = stats.Clusters.from_rows(rows)
    boot = stats.Bootstrap(resamples=500, seed=4)
    estimate = stats.estimate_mean_of_means(clusters, [0, 1], boot)
    first = [v[0] for _, v in rows]
    second = [v[1] for _, v in rows if v[1] is not None]
    assert estimate.value == pytest.approx((np.mean(first) + np.mean(second)) / 2)
    samples = []
    for counts in stats.draw_counts(20, boot):
        means = []
        for j in (0, 1):
            items = [v[j] for (_, v), k in zip(rows, counts, strict=True) for _ in range(k)]
            held = [x for x in items if x is not None]
            if held:
                means.append(sum(held) / len(held))
        samples.append(sum(means) / len(means))
    assert (estimate.low, estimate.high) == (
        pytest.approx(np.quantile(samples, 0.025)),
        pytest.approx(np.quantile(samples, 0.975)),
    )
    assert estimate.units == 20 and estimate.reason == ""


def test_a_mean_of_means_over_too_few_or_alike_clusters_gives_a_reason():
    few = stats.Clusters.from_rows([(f"t{i}", [1.0, float(i % 2)]) for i in range(5)])
    estimate = stats.estimate_mean_of_means(few, [0, 1], stats.Bootstrap())
    assert estimate.low is None and estimate.reason.startswith("5 tasks are too few")
    alike = stats.Clusters.from_rows([(f"t{i}", [1.0, 0.0]) for i in range(12)])
    estimate = stats.estimate_mean_of_means(alike, [0, 1], stats.Bootstrap())
    assert estimate.value == 0.5 and estimate.reason.startswith("all 12 tasks score the same")


def test_a_paired_comparison_groups_its_pairs_as_clusters_from_rows_does():
    """paired_comparison groups pairs in numpy (for speed); the clusters, sums and counts are
    Clusters.from_rows' on the same rows, to the bit, pairs in any order and several a task."""
    rng = np.random.default_rng(3)
    pairs = [
        (f"t{rng.integers(40)}", float(rng.random()), float(rng.integers(2))) for _ in range(300)
    ]
    rows = [(u, (a, b, a - b)) for u, a, b in pairs]
    expected = stats.Clusters.from_rows(rows)
    clusters, binary, count = stats._paired_clusters(pairs)
    assert clusters.units == expected.units
    assert clusters.sums.tobytes() == expected.sums.tobytes()
    assert clusters.counts.tobytes() == expected.counts.tobytes()
    assert (binary, count) == (False, 300)
    assert stats._paired_clusters([("t1", 1.0, 0.0), ("t2", 0.0, 0.0)])[1] is True
