"""Uncertainty and paired comparisons for every number convtui reports (docs/design.md,
"Uncertainty and comparisons"; Miller 2024, "Adding Error Bars to Evals", arXiv 2411.00640).

One home for the statistics of ``report``, ``compare``, ``study report`` and ``study fidelity``:

- The unit of resampling is a *cluster*: a task in a benchmark (its sessions under several Ω,
  samples or annotators are one cluster), a session or an annotator in a study, never a
  single turn or state. A cluster holds one or more *items* (a session, a state, an
  instruction); a mean is over items, and a resample draws whole clusters with replacement,
  so the mean of a resample is Σ sums / Σ counts over the clusters drawn (the ratio
  estimator; clusters of one item make it the plain mean).
- Intervals are two-sided percentile bootstrap intervals, seeded: numpy's PCG64 from
  ``Bootstrap.seed`` draws ``resamples`` resamples of n clusters, the same draws for every
  metric of one call, so one seed gives the same bytes on every run. The quantiles are numpy's
  default (linear between order statistics).
- Fewer than ``MIN_UNITS`` clusters, or clusters that all score the same, give no interval
  but a reason in words: a percentile bootstrap over five tasks, or over forty that all
  failed, says nothing about the tasks not drawn.
- Paired comparisons (first − second on what both sides share) resample clusters of matched
  pairs; their exact test works on each cluster's mean difference: the two-sided sign test,
  which on one binary pair per cluster *is* McNemar's exact test, or a sign-flip permutation
  test (exact up to ``EXACT_PERMUTATION_LIMIT`` differing clusters, else Monte Carlo, seeded).
- Power: the smallest difference a paired comparison of n clusters detects with a two-sided
  test at ``alpha`` and ``power``, from the spread of the per-cluster differences (normal
  approximation), so a study or a subset can be sized before it is paid for.

numpy is the only dependency; scipy is used by the tests as an independent check, not here."""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist
from typing import Literal

import numpy as np

MIN_UNITS = 10
"""Fewer clusters than this get a reason instead of an interval."""

EXACT_PERMUTATION_LIMIT = 16
"""Up to this many differing clusters the sign-flip test enumerates all 2ⁿ sign patterns."""


@dataclass(frozen=True)
class Bootstrap:
    """How intervals are drawn: ``resamples`` resamples of the clusters with replacement from
    numpy's PCG64 seeded with ``seed``; a two-sided percentile interval covering ``level``."""

    resamples: int = 2000
    seed: int = 0
    level: float = 0.95

    def __post_init__(self) -> None:
        if self.resamples < 1:
            raise ValueError(f"resamples must be at least 1, not {self.resamples}")
        if not 0 < self.level < 1:
            raise ValueError(f"level must lie strictly between 0 and 1, not {self.level}")
        if self.seed < 0:
            raise ValueError(f"seed must be 0 or more, not {self.seed}")

    def method(self, unit: str = "tasks") -> str:
        """The method in words, for the line under a table and for JSON."""
        return (
            f"{100 * self.level:g}% percentile bootstrap over {unit} "
            f"({self.resamples} resamples, seed {self.seed})"
        )

    def to_json(self, unit: str = "tasks") -> dict[str, object]:
        return {
            "method": "percentile bootstrap",
            "unit": unit,
            "level": self.level,
            "resamples": self.resamples,
            "seed": self.seed,
            "min_units": MIN_UNITS,
        }


@dataclass(frozen=True)
class Estimate:
    """A mean over items with its bootstrap interval over ``units`` clusters. ``low`` and
    ``high`` are None exactly when ``reason`` says why no interval is given."""

    value: float
    low: float | None
    high: float | None
    units: int
    reason: str = ""

    def text(self, scale: float = 100.0, digits: int = 1) -> str:
        """``12.3 [8.1, 16.0]``, or the value alone followed by `` (n/a)`` without an interval."""
        value = f"{scale * self.value:.{digits}f}"
        if self.low is None or self.high is None:
            return f"{value} (n/a)"
        return f"{value} [{scale * self.low:.{digits}f}, {scale * self.high:.{digits}f}]"

    def to_json(self, scale: float = 100.0, digits: int = 1) -> dict[str, object]:
        def rounded(v: float | None) -> float | None:
            return None if v is None else round(scale * v, digits)

        data: dict[str, object] = {
            "value": rounded(self.value),
            "low": rounded(self.low),
            "high": rounded(self.high),
            "units": self.units,
        }
        if self.reason:
            data["reason"] = self.reason
        return data


@dataclass(frozen=True)
class Clusters:
    """Per-cluster sums and item counts of m metrics: ``units`` the cluster ids in sorted
    order (so the order rows arrive in never changes a resample), ``sums`` and ``counts``
    arrays of shape (n, m). A cluster with count 0 for a metric has no item of it."""

    units: tuple[str, ...]
    sums: np.ndarray
    counts: np.ndarray

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[str, Sequence[float | None]]]) -> Clusters:
        """Group ``rows`` (cluster id, one value per metric; None where the item has no value
        for that metric) into clusters. Every row must hold the same number of metrics."""
        units: list[str] = []
        values: list[list[float]] = []
        for unit, row in rows:
            if values and len(row) != len(values[0]):
                raise ValueError(
                    f"rows hold {len(values[0])} and {len(row)} metrics; give each the same"
                )
            units.append(unit)
            values.append([math.nan if v is None else float(v) for v in row])
        if not values:
            return cls((), np.zeros((0, 0)), np.zeros((0, 0)))
        return cls.from_arrays(units, np.array(values, dtype=float))

    @classmethod
    def from_arrays(cls, units: Sequence[str], values: np.ndarray) -> Clusters:
        """Group items into clusters: ``units`` names each item's cluster, ``values`` (items ×
        metrics) holds its values, NaN where it has none. Each cluster's sums add its items
        in the order given."""
        names, inverse = np.unique(np.asarray(units, dtype=str), return_inverse=True)
        present = ~np.isnan(values)
        sums = np.zeros((len(names), values.shape[1]))
        counts = np.zeros((len(names), values.shape[1]))
        np.add.at(sums, inverse, np.where(present, values, 0.0))
        np.add.at(counts, inverse, present.astype(float))
        return cls(tuple(str(u) for u in names), sums, counts)

    @property
    def metrics(self) -> int:
        return int(self.sums.shape[1])

    def means(self) -> np.ndarray:
        """Each metric's mean over all items (NaN for a metric with no item)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.sums.sum(axis=0) / self.counts.sum(axis=0)


@lru_cache(maxsize=16)
def _draws(n: int, resamples: int, seed: int) -> np.ndarray:
    rng = np.random.Generator(np.random.PCG64(seed))
    picks = rng.integers(0, n, size=(resamples, n))
    flat = picks + (np.arange(resamples) * n)[:, None]
    counts = np.bincount(flat.ravel(), minlength=resamples * n).reshape(resamples, n)
    counts.setflags(write=False)
    return counts


def draw_counts(n: int, bootstrap: Bootstrap) -> np.ndarray:
    """How many times each of n clusters is drawn in each resample: an array of shape
    (resamples, n), each row summing to n. The same n and bootstrap give the same array."""
    if n < 1:
        raise ValueError("a bootstrap needs at least one cluster")
    return _draws(n, bootstrap.resamples, bootstrap.seed)


def resampled_means(clusters: Clusters, bootstrap: Bootstrap) -> np.ndarray:
    """The mean of every metric in every resample: shape (resamples, m); NaN where a resample
    drew no item of a metric."""
    draws = draw_counts(len(clusters.units), bootstrap).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (draws @ clusters.sums) / (draws @ clusters.counts)


def percentile_interval(samples: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """The two-sided percentile bounds of ``samples`` along axis 0 (NaNs left out)."""
    tail = (1 - level) / 2
    with warnings.catch_warnings():  # a metric no resample holds is NaN, said by its reason
        warnings.simplefilter("ignore", RuntimeWarning)
        low = np.nanquantile(samples, tail, axis=0)
        high = np.nanquantile(samples, 1 - tail, axis=0)
    return low, high


def estimate_means(
    clusters: Clusters, bootstrap: Bootstrap, *, unit: str = "tasks", min_units: int = MIN_UNITS
) -> list[Estimate]:
    """Every metric's mean over items with its percentile interval over clusters."""
    if not clusters.units:
        return [Estimate(0.0, None, None, 0, f"no {unit}") for _ in range(clusters.metrics)]
    values = clusters.means()
    with np.errstate(invalid="ignore", divide="ignore"):
        unit_means = clusters.sums / clusters.counts
    samples = resampled_means(clusters, bootstrap)
    lows, highs = percentile_interval(samples, bootstrap.level)
    estimates = []
    for j in range(clusters.metrics):
        present = clusters.counts[:, j] > 0
        n = int(present.sum())
        value = float(values[j]) if n else 0.0
        reason = _no_interval(n, _spread(unit_means[present, j]), unit, min_units)
        if reason:
            estimates.append(Estimate(value, None, None, n, reason))
        else:
            estimates.append(Estimate(value, float(lows[j]), float(highs[j]), n))
    return estimates


def estimate_mean_of_means(
    clusters: Clusters,
    columns: Sequence[int],
    bootstrap: Bootstrap,
    *,
    unit: str = "tasks",
    min_units: int = MIN_UNITS,
) -> Estimate:
    """The unweighted mean of the means of metrics ``columns`` with its percentile interval:
    in each resample the mean of those metrics' resampled means, a metric the resample drew
    no item of left out (as it would be from the table). A summary row that averages rows
    over different clusters is such a mean (CodeIF-Bench's dynamic ``report.py`` "avg": the
    mean of each pair of turns' mean over the tasks that reached it), not a mean over items.
    ``units`` counts the clusters holding an item of any of the metrics; no interval (a
    reason) under ``min_units`` of them, or where every metric scores all its clusters alike."""
    picked = list(columns)
    counts = clusters.counts[:, picked]
    with np.errstate(invalid="ignore", divide="ignore"):
        unit_means = clusters.sums[:, picked] / counts
    means = clusters.means()[picked]
    held = means[~np.isnan(means)]
    value = float(held.mean()) if held.size else 0.0
    n = int((counts.sum(axis=1) > 0).sum())
    # No spread only where no metric's cluster means (of the clusters holding it) differ.
    spread = max(
        (_spread(unit_means[counts[:, j] > 0, j]) for j in range(len(picked))), default=0.0
    )
    reason = _no_interval(n, spread, unit, min_units)
    if reason:
        return Estimate(value, None, None, n, reason)
    with warnings.catch_warnings():  # a resample holding none of the metrics: said as NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        samples = np.nanmean(resampled_means(clusters, bootstrap)[:, picked], axis=1)
    low, high = percentile_interval(samples, bootstrap.level)
    return Estimate(value, float(low), float(high), n)


def _spread(unit_means: np.ndarray) -> float:
    """The range of the clusters' means (0 for none)."""
    return float(np.ptp(unit_means)) if unit_means.size else 0.0


def _no_interval(n: int, spread: float, unit: str, min_units: int) -> str:
    if n == 0:
        return f"no {unit}"
    if n < min_units:
        return _too_few(n, unit, min_units)
    if spread == 0.0:
        return f"all {n} {unit} score the same: resampling them has no spread"
    return ""


def _too_few(n: int, unit: str, min_units: int) -> str:
    return f"{n} {unit} are too few for an interval (at least {min_units})"


# --- paired comparisons ----------------------------------------------------------------------

Test = Literal["sign", "permutation"]


@dataclass(frozen=True)
class Comparison:
    """First minus second on matched pairs.

    - ``first``, ``second``: each side's mean over the matched pairs;
    - ``difference``: the mean of (first − second) over pairs with its paired bootstrap
      interval over clusters (zero spread is an interval here: every cluster differs alike);
    - ``pairs``: matched pairs; ``difference.units``: clusters;
    - ``first_better``, ``second_better``: the clusters whose mean difference is above, below
      zero (the rest tie), sorted;
    - ``p_value`` of ``test`` (its name in words), two-sided, over those clusters;
    - ``effect_size``: the mean per-cluster difference over its standard deviation (Cohen's
      d_z), None when the differences do not vary;
    - ``sd``: the standard deviation of the per-cluster differences (for power)."""

    first: float
    second: float
    difference: Estimate
    pairs: int
    first_better: tuple[str, ...]
    second_better: tuple[str, ...]
    p_value: float
    test: str
    effect_size: float | None
    sd: float

    @property
    def units(self) -> int:
        return self.difference.units

    def to_json(self, scale: float = 100.0, digits: int = 1) -> dict[str, object]:
        return {
            "first": round(scale * self.first, digits),
            "second": round(scale * self.second, digits),
            "difference": self.difference.to_json(scale, digits),
            "pairs": self.pairs,
            "units": self.units,
            "first_better": list(self.first_better),
            "second_better": list(self.second_better),
            "p_value": self.p_value,
            "test": self.test,
            "effect_size": None if self.effect_size is None else round(self.effect_size, 3),
        }


def paired_comparison(
    pairs: Iterable[tuple[str, float, float]],
    bootstrap: Bootstrap,
    *,
    test: Test = "sign",
    unit: str = "tasks",
    min_units: int = MIN_UNITS,
) -> Comparison:
    """Compare ``pairs`` (cluster id, first's value, second's value), matched by the caller.

    ``test="sign"``: where every cluster holds one pair of 0/1 values, McNemar's exact test
    (the two-sided sign test over clusters); otherwise, and with ``test="permutation"``, the
    sign-flip permutation test of the clusters' mean differences (:func:`sign_flip_test`),
    which tests the mean that the interval is of.
    Raises ValueError when there is no pair."""
    clusters, binary, count = _paired_clusters(pairs)
    first, second, diff = (float(v) for v in clusters.means())
    unit_diffs = clusters.sums[:, 2] / clusters.counts[:, 2]
    n = len(clusters.units)
    if n < min_units:  # zero spread is an interval here: every cluster differs alike
        difference = Estimate(diff, None, None, n, _too_few(n, unit, min_units))
    else:
        samples = resampled_means(clusters, bootstrap)[:, 2]
        low, high = percentile_interval(samples, bootstrap.level)
        difference = Estimate(diff, float(low), float(high), n)
    first_better = tuple(u for u, d in zip(clusters.units, unit_diffs, strict=True) if d > 0)
    second_better = tuple(u for u, d in zip(clusters.units, unit_diffs, strict=True) if d < 0)
    if test == "sign" and binary and count == n:
        p = sign_test(len(first_better), len(second_better))
        name = f"McNemar exact (binomial on the {unit} solved by one side only)"
    else:
        # Where a cluster holds several pairs (a task under nine Ω), a sign test over
        # clusters sees only which way each task leans and disagreed with the interval of
        # the mean (p 0.10 beside an interval of [-2.8, -1.0] on a sweep); flipping the
        # signs of the clusters' mean differences tests the same mean the interval is of.
        p, name = sign_flip_test(unit_diffs, bootstrap.seed, unit=unit)
    sd = float(np.std(unit_diffs, ddof=1)) if n > 1 else 0.0
    effect = float(np.mean(unit_diffs)) / sd if sd > 0 else None
    return Comparison(
        first=first,
        second=second,
        difference=difference,
        pairs=count,
        first_better=first_better,
        second_better=second_better,
        p_value=p,
        test=name,
        effect_size=effect,
        sd=sd,
    )


def _paired_clusters(pairs: Iterable[tuple[str, float, float]]) -> tuple[Clusters, bool, int]:
    """``pairs`` grouped by cluster as three metrics (first, second, first − second), with
    whether every value is 0 or 1 and how many pairs there are."""
    listed = list(pairs)
    if not listed:
        raise ValueError("no matched pair to compare")
    units, firsts, seconds = zip(*listed, strict=True)
    a = np.asarray(firsts, dtype=float)
    b = np.asarray(seconds, dtype=float)
    clusters = Clusters.from_arrays(units, np.column_stack([a, b, a - b]))
    binary = bool(np.isin(a, (0.0, 1.0)).all() and np.isin(b, (0.0, 1.0)).all())
    return clusters, binary, len(listed)


def sign_test(first_better: int, second_better: int) -> float:
    """The exact two-sided sign test of ``first_better`` against ``second_better`` (ties
    left out): with n their sum and k the smaller, p = min(1, 2 · Σ_{i≤k} C(n, i) / 2ⁿ). On
    binary outcomes, one pair per task, it is McNemar's exact test. n = 0 gives 1."""
    n = first_better + second_better
    if n == 0:
        return 1.0
    k = min(first_better, second_better)
    tail = sum(math.comb(n, i) for i in range(k + 1))
    return min(1.0, 2 * tail / 2**n)


def sign_flip_test(
    differences: Sequence[float] | np.ndarray,
    seed: int = 0,
    *,
    resamples: int = 10_000,
    unit: str = "tasks",
) -> tuple[float, str]:
    """The two-sided paired permutation test of a zero mean difference: under the null each
    cluster's difference is as likely negated, so p is the share of sign patterns whose
    |sum| reaches the observed |sum|. Exact over all 2ⁿ patterns of the n non-zero
    differences up to ``EXACT_PERMUTATION_LIMIT``; past it ``resamples`` random patterns
    from PCG64(seed), p = (hits + 1) / (resamples + 1). Returns p and the test's name."""
    d = np.asarray(differences, dtype=float)
    d = d[d != 0]
    n = len(d)
    if n == 0:
        return 1.0, f"sign-flip permutation test over {unit} (exact)"
    observed = abs(d.sum())
    tolerance = 1e-9 * max(1.0, float(np.abs(d).sum()))
    if n <= EXACT_PERMUTATION_LIMIT:
        patterns = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1) * 2 - 1
        sums = np.abs(patterns @ d)
        return float(np.mean(sums >= observed - tolerance)), (
            f"sign-flip permutation test over {unit} (exact)"
        )
    rng = np.random.Generator(np.random.PCG64(seed))
    signs = rng.integers(0, 2, size=(resamples, n)) * 2 - 1
    hits = int(np.sum(np.abs(signs @ d) >= observed - tolerance))
    return (hits + 1) / (resamples + 1), (
        f"sign-flip permutation test over {unit} ({resamples} random patterns, seed {seed})"
    )


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of ``p_values`` (family-wise error), in their order."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


# --- more than two sides ---------------------------------------------------------------------


@dataclass(frozen=True)
class Rank:
    """A side's rank by mean (1 = highest, ties averaged) and its bootstrap interval."""

    side: str
    value: float
    rank: float
    low: float
    high: float

    def to_json(self, scale: float = 100.0, digits: int = 1) -> dict[str, object]:
        return {
            "side": self.side,
            "value": round(scale * self.value, digits),
            "rank": self.rank,
            "low": self.low,
            "high": self.high,
        }


def rank_intervals(sides: Mapping[str, Sequence[float]], bootstrap: Bootstrap) -> list[Rank]:
    """Ranks of ``sides`` (name -> one value per shared cluster, the same clusters in the same
    order for every side) with percentile intervals from resampling the clusters jointly,
    best first."""
    names = list(sides)
    matrix = np.array([sides[s] for s in names], dtype=float).T  # clusters × sides
    if matrix.size == 0:
        raise ValueError("ranks need at least one shared cluster")
    observed = _ranks(matrix.mean(axis=0)[None, :])[0]
    draws = draw_counts(matrix.shape[0], bootstrap).astype(float)
    ranks = _ranks((draws @ matrix) / matrix.shape[0])
    lows, highs = percentile_interval(ranks, bootstrap.level)
    means = matrix.mean(axis=0)
    out = [
        Rank(name, float(means[j]), float(observed[j]), float(lows[j]), float(highs[j]))
        for j, name in enumerate(names)
    ]
    return sorted(out, key=lambda r: (r.rank, r.side))


def _ranks(values: np.ndarray) -> np.ndarray:
    """Descending ranks along axis 1 (1 = highest), ties given their average rank."""
    greater = (values[:, None, :] > values[:, :, None]).sum(axis=2)
    equal = (values[:, None, :] == values[:, :, None]).sum(axis=2)
    return greater + (equal + 1) / 2


def indistinguishable_groups(
    sides: Sequence[str], distinct: Callable[[str, str], bool]
) -> list[tuple[str, ...]]:
    """The largest runs of ``sides`` (given best first) within which no two can be told
    apart (``distinct(a, b)`` false for every pair), each run listed once: the groups a
    letter display would draw."""
    groups: list[tuple[str, ...]] = []
    for i in range(len(sides)):
        j = i
        while j + 1 < len(sides) and not any(
            distinct(sides[k], sides[j + 1]) for k in range(i, j + 1)
        ):
            j += 1
        group = tuple(sides[i : j + 1])
        if len(group) > 1 and not any(set(group) <= set(g) for g in groups):
            groups.append(group)
    return groups


# --- correlation with intervals ---------------------------------------------------------------


def correlation_intervals(
    first: Mapping[str, Sequence[float]],
    second: Mapping[str, Sequence[float]],
    bootstrap: Bootstrap,
) -> dict[str, tuple[float, float]]:
    """Percentile intervals of Spearman's ρ and Kendall's τ-b between the per-model means of
    ``first`` and ``second`` (model -> one value per shared cluster, in the same order for
    every model of both), resampling the clusters jointly. A resample where one side ties
    every model has no correlation and is left out. Keys ``spearman`` and ``kendall``."""
    models = sorted(set(first) & set(second))
    a = np.array([first[m] for m in models], dtype=float).T
    b = np.array([second[m] for m in models], dtype=float).T
    if a.shape != b.shape or a.size == 0:
        raise ValueError("both sides need the same models over the same clusters")
    draws = draw_counts(a.shape[0], bootstrap).astype(float)
    xs = (draws @ a) / a.shape[0]
    ys = (draws @ b) / b.shape[0]
    rho = _spearman_rows(xs, ys)
    tau = _kendall_rows(xs, ys)
    out = {}
    for name, values in (("spearman", rho), ("kendall", tau)):
        low, high = percentile_interval(values, bootstrap.level)
        out[name] = (float(low), float(high))
    return out


def _spearman_rows(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    rx = _ranks(xs)
    ry = _ranks(ys)
    rx = rx - rx.mean(axis=1, keepdims=True)
    ry = ry - ry.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rx * ry).sum(axis=1) / np.sqrt((rx**2).sum(axis=1) * (ry**2).sum(axis=1))


def _kendall_rows(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Kendall's τ-b per row: (concordant − discordant) / √((n0 − ties x)(n0 − ties y))."""
    i, j = np.triu_indices(xs.shape[1], k=1)
    sx = np.sign(xs[:, j] - xs[:, i])
    sy = np.sign(ys[:, j] - ys[:, i])
    with np.errstate(invalid="ignore", divide="ignore"):
        return (sx * sy).sum(axis=1) / np.sqrt(
            (sx != 0).sum(axis=1).astype(float) * (sy != 0).sum(axis=1)
        )


# --- power ------------------------------------------------------------------------------------


def detectable_difference(
    units: int, sd: float, *, alpha: float = 0.05, power: float = 0.8
) -> float:
    """The smallest true mean difference a paired comparison of ``units`` clusters, whose
    per-cluster differences have standard deviation ``sd``, detects with a two-sided test at
    ``alpha`` with probability ``power``: (z₁₋α/₂ + z_power) · sd / √units (normal
    approximation). Infinite for no cluster."""
    if units < 1:
        return math.inf
    return _z_sum(alpha, power) * sd / math.sqrt(units)


def units_needed(difference: float, sd: float, *, alpha: float = 0.05, power: float = 0.8) -> int:
    """How many clusters a paired comparison needs to detect ``difference`` (see
    :func:`detectable_difference`), rounded up."""
    if difference <= 0:
        raise ValueError("the difference to detect must be above 0")
    return max(1, math.ceil((_z_sum(alpha, power) * sd / difference) ** 2))


def binary_difference_sd(rate: float, correlation: float = 0.5) -> float:
    """The standard deviation of one task's difference between two sides that each solve it
    with probability ``rate``, their outcomes correlated by ``correlation`` (0 for
    independent sides; models that find the same tasks hard are positively correlated):
    √(2 · rate · (1 − rate) · (1 − correlation))."""
    if not 0 <= rate <= 1:
        raise ValueError(f"rate must lie in [0, 1], not {rate}")
    if not -1 <= correlation <= 1:
        raise ValueError(f"correlation must lie in [-1, 1], not {correlation}")
    return math.sqrt(2 * rate * (1 - rate) * (1 - correlation))


def _z_sum(alpha: float, power: float) -> float:
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError("alpha and power must lie strictly between 0 and 1")
    normal = NormalDist()
    return normal.inv_cdf(1 - alpha / 2) + normal.inv_cdf(power)


# --- grouping helpers -------------------------------------------------------------------------


def cluster_means(rows: Iterable[tuple[str, float]]) -> dict[str, float]:
    """Each cluster's mean of ``rows`` (cluster id, value)."""
    sums: dict[str, list[float]] = defaultdict(list)
    for unit, value in rows:
        sums[unit].append(value)
    return {u: math.fsum(v) / len(v) for u, v in sorted(sums.items())}
