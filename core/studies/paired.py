"""Paired differences between two feedback sources on the same states, for the simulated-user
fidelity report (core/studies/fidelity.py): the mean difference, a seeded bootstrap interval
that resamples states, and an exact sign test over states. Pure Python (no numpy, no scipy).

The unit of resampling and of the test is the *state* (one recorded turn a person gave
feedback on), not the (state, target) pair: the targets of one state share its task, its code
and its feedback, so they are not independent draws."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Bootstrap:
    """How intervals are drawn: ``resamples`` resamples of the states with replacement from
    ``random.Random(seed)``, a two-sided percentile interval covering ``level``."""

    resamples: int = 2000
    seed: int = 0
    level: float = 0.95

    def __post_init__(self) -> None:
        if self.resamples < 1:
            raise ValueError(f"resamples must be at least 1, not {self.resamples}")
        if not 0 < self.level < 1:
            raise ValueError(f"level must lie strictly between 0 and 1, not {self.level}")

    def to_json(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class Difference:
    """First minus second on the same states and targets.

    - ``mean``: the mean of (first − second) over the matched (state, target) pairs, every
      pair weighing the same;
    - ``low``, ``high``: the bootstrap percentile interval of that mean (see
      :func:`bootstrap_interval`);
    - ``states``, ``pairs``: how many states and (state, target) pairs were matched;
    - ``first_better``, ``second_better``: the states where the mean difference over that
      state's targets is above zero, below zero (the rest are ties);
    - ``p_value``: the exact two-sided sign test on those states (:func:`sign_test`)."""

    mean: float
    low: float
    high: float
    states: int
    pairs: int
    first_better: int
    second_better: int
    p_value: float

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def paired_difference(
    diffs: Mapping[str, Sequence[float]], bootstrap: Bootstrap
) -> Difference | None:
    """The :class:`Difference` of ``diffs`` (state id -> first − second for each target of
    that state matched on both sides); None when no pair is matched. States with no pair are
    ignored."""
    units = {state: tuple(d) for state, d in diffs.items() if d}
    if not units:
        return None
    pairs = sum(len(d) for d in units.values())
    state_means = [math.fsum(d) / len(d) for d in units.values()]
    first_better = sum(m > 0 for m in state_means)
    second_better = sum(m < 0 for m in state_means)
    low, high = bootstrap_interval(units, bootstrap)
    return Difference(
        mean=math.fsum(v for d in units.values() for v in d) / pairs,
        low=low,
        high=high,
        states=len(units),
        pairs=pairs,
        first_better=first_better,
        second_better=second_better,
        p_value=sign_test(first_better, second_better),
    )


def bootstrap_interval(
    diffs: Mapping[str, Sequence[float]], bootstrap: Bootstrap
) -> tuple[float, float]:
    """A percentile bootstrap interval for the mean over pairs of ``diffs`` (state id -> the
    differences of its matched targets; every state must hold at least one).

    Exactly: the states sorted by id (so the order of the input does not matter); a fresh
    ``random.Random(bootstrap.seed)``; for each of ``bootstrap.resamples`` resamples, n states
    drawn with replacement by ``rng.choices(range(n), k=n)`` and the mean over all their pairs
    (a state drawn twice counts twice); the resampled means sorted; the bounds are their
    quantiles at (1 − level)/2 and (1 + level)/2, interpolated linearly between order
    statistics (numpy's default, position q·(resamples − 1)). The same data, seed and
    settings give the same interval on every run."""
    states = sorted(diffs)
    sums = [math.fsum(diffs[s]) for s in states]
    counts = [len(diffs[s]) for s in states]
    if not states or not all(counts):
        raise ValueError("every state needs at least one difference")
    rng = random.Random(bootstrap.seed)
    n = len(states)
    means = []
    for _ in range(bootstrap.resamples):
        drawn = rng.choices(range(n), k=n)
        means.append(math.fsum(sums[i] for i in drawn) / sum(counts[i] for i in drawn))
    means.sort()
    tail = (1 - bootstrap.level) / 2
    return _quantile(means, tail), _quantile(means, 1 - tail)


def _quantile(ordered: Sequence[float], q: float) -> float:
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (position - below) * (ordered[above] - ordered[below])


def sign_test(first_better: int, second_better: int) -> float:
    """The exact two-sided sign test of ``first_better`` against ``second_better`` (ties
    already left out): with n = their sum and k the smaller, p = min(1, 2 · Σ_{i=0..k}
    C(n, i) / 2ⁿ), the probability under a fair coin of a split at least as uneven. No state
    that differs (n = 0) gives p = 1."""
    n = first_better + second_better
    if n == 0:
        return 1.0
    k = min(first_better, second_better)
    tail = sum(math.comb(n, i) for i in range(k + 1))
    return min(1.0, 2 * tail / 2**n)
