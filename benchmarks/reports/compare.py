"""``convtui compare``: two or more sides (models, Ω settings, runs, databases, annotators or
log sets) compared paired on what they share (docs/design.md, "Uncertainty and comparisons").

- A *side* is a set of recorded sessions of one kind: live BigCodeBench sessions or static
  (replayed, ConvCodeBench) ones. Each session is scored per task here, by the functions that
  define the metrics (core/metrics/scores.py): Pass@1 at each turn (by its run's protocol),
  MRR and Recall, live or static.
- Sides are *paired* on a key: the task and every dimension (model, Ω, log set) that is not
  what the sides differ by, and always the protocol (runs of two protocols never share a
  table). What differs is the ``--by`` dimension; sides made of runs, databases or annotators
  differ by each dimension whose values are not the same on every side (two runs of two
  models are compared across the model, two runs of one model on it).
- Within a side, a session played again (same task, model, Ω, protocol, log set and
  annotator) counts once, the newest run's, as in ``report``; sessions left on one key after
  that (two models pooled in one side) are averaged.
- The cluster that every interval resamples and every test counts is the task: a task under
  several Ω is one cluster. All statistics come from core/metrics/stats.py."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

import numpy as np

from convtui.benchmarks.reports.static_report import COMPENSATE_INIT
from convtui.benchmarks.settings import CompareBy, CompareKind
from convtui.core.errors import ConvtuiError
from convtui.core.metrics import scores
from convtui.core.metrics.stats import (
    Bootstrap,
    Comparison,
    Rank,
    Test,
    cluster_means,
    detectable_difference,
    holm,
    indistinguishable_groups,
    paired_comparison,
    rank_intervals,
)
from convtui.core.plural import counted

ALPHA = 0.05
POWER = 0.8
# The dimensions sessions are paired on besides the task; "protocol" is never compared.
DIMENSIONS = ("model", "feedback", "log_set")
DIMENSION_NAMES = {
    "task": "task",
    "model": "model",
    "feedback": "feedback",
    "log_set": "log set",
    "protocol": "protocol",
}
# --by values that name a dimension: the one the sides differ by.
BY_DIMENSION = {"model": "model", "feedback": "feedback", "log-set": "log_set"}
KIND_NAMES = {"live": "live BigCodeBench", "static": "static (replayed) BigCodeBench"}
STATIC_NOTE = (
    "static scores are ConvCodeBench's: they include the reference's successes (a task whose "
    "reference passed at turn t-1 counts as solved at turn t)"
)


@dataclass(frozen=True)
class Played:
    """One recorded session as a comparison needs it: ``verdicts`` its turns' verdicts in
    order and, for a replay, ``reference`` those of the session it replayed. ``log_set`` is
    "" for a live session, else the replayed log set (reference model, context, who gave the
    feedback)."""

    kind: CompareKind
    db: str
    run_id: str
    task_id: str
    model: str
    feedback: str
    protocol: str
    max_turns: int
    verdicts: tuple[bool, ...]
    reference: tuple[bool, ...] = ()
    log_set: str = ""
    annotator: str | None = None

    def dimension(self, name: str) -> str:
        return str(getattr(self, name))

    @property
    def identity(self) -> tuple[str, ...]:
        """What makes two sessions the same measurement: one played again has it too."""
        return (
            self.task_id,
            self.model,
            self.feedback,
            self.protocol,
            self.log_set,
            self.annotator or "",
        )


@dataclass(frozen=True)
class Metric:
    """One compared number: ``key`` as ``--metric`` names it, ``name`` as tables do, and the
    paired test its per-task values take (McNemar/sign on 0/1, sign-flip on ranks)."""

    key: str
    name: str
    test: Test


def metrics_for(kind: CompareKind, turns: int) -> tuple[Metric, ...]:
    """The metrics of ``kind`` over ``turns`` turns (turn 0 included). Static Pass@1 rows
    start at turn 1, as ConvCodeBench's print_results prints them."""
    first = 1 if kind == "static" else 0
    return (
        *(Metric(f"pass1-t{t}", f"Pass@1 t{t}", "sign") for t in range(first, turns)),
        Metric("mrr", "MRR", "permutation"),
        Metric("recall", "Recall", "sign"),
    )


def score(played: Played, turns: int) -> tuple[float, ...]:
    """``played``'s per-task value of every metric of its kind, in the order of
    :func:`metrics_for`, its verdicts carried forward to ``turns`` turns
    (metrics.carry_forward, as report does)."""
    return _score(played.kind, played.protocol, played.verdicts, played.reference, turns)


@lru_cache(maxsize=4096)
def _score(
    kind: CompareKind,
    protocol: str,
    verdicts: tuple[bool, ...],
    reference: tuple[bool, ...],
    turns: int,
) -> tuple[float, ...]:
    # Cached: a sweep's thousands of sessions show a few dozen verdict patterns.
    passes = scores.carry_forward(verdicts[:turns], turns)
    if kind == "static":
        ref = scores.carry_forward(reference[:turns], turns)
        return scores.static_task_terms(passes, ref, compensate_init=COMPENSATE_INIT)
    return scores.live_task_terms(passes, protocol)


@dataclass(frozen=True)
class Side:
    """One side: ``label`` as the tables name it, ``name`` what it is, in words."""

    label: str
    name: str
    played: tuple[Played, ...]


def split_sides(played: Sequence[Played], by: CompareBy, dbs: Sequence[str] = ()) -> list[Side]:
    """``played`` split into sides by ``by``, labelled A, B, C…: in the order of ``dbs`` for
    ``db``, else sorted by value. Sessions without an annotator have no side by annotator."""
    groups: dict[str, list[Played]] = defaultdict(list)
    for p in played:
        value = _split_value(p, by)
        if value is not None:
            groups[value].append(p)
    order = [d for d in dbs if d in groups] if by == "db" else sorted(groups)
    word = by.replace("-", " ")
    return [
        Side(_letter(i), f"{word} {value}", tuple(groups[value])) for i, value in enumerate(order)
    ]


def _split_value(p: Played, by: CompareBy) -> str | None:
    if by == "run":
        return p.run_id
    if by == "log-set":
        return p.log_set or "live"
    return p.dimension(BY_DIMENSION.get(by, by))


def _letter(i: int) -> str:
    return chr(ord("A") + i) if i < 26 else f"S{i + 1}"


def pairing_dimensions(
    sides: Sequence[Side], by: CompareBy | None, kind: CompareKind
) -> tuple[str, ...]:
    """The key sessions are paired on: the task, each dimension the sides do not differ by,
    and the protocol. ``by`` naming a dimension makes it the one that differs. Sides of
    runs, databases or annotators differ by each dimension whose values are not the same on
    every side: runs of two models are compared across the model, runs of one model under
    two Ω across the Ω, and a side that gathers runs of several models (a task played by
    each) across the model, its models pooled per key."""
    dims = DIMENSIONS if kind == "static" else tuple(d for d in DIMENSIONS if d != "log_set")
    if by in BY_DIMENSION:
        compared = {BY_DIMENSION[by]}
    else:
        held = [{d: {p.dimension(d) for p in s.played} for d in dims} for s in sides]
        compared = {d for d in dims if any(h[d] != held[0][d] for h in held)}
    return ("task", *(d for d in dims if d not in compared), "protocol")


Key = tuple[str, ...]


@dataclass(frozen=True)
class SideValues:
    """A side's per-key metric values (in the order of :func:`metrics_for`), with what it
    took to get them: ``replaced`` sessions superseded by a newer run of the same
    measurement, ``pooled`` keys holding several sessions that were averaged."""

    values: dict[Key, tuple[float, ...]]
    replaced: int
    pooled: int


def side_values(side: Side, dims: Sequence[str], turns: int) -> SideValues:
    newest: dict[tuple[str, ...], Played] = {}
    for p in sorted(side.played, key=lambda p: p.run_id):  # run ids sort by creation time
        newest[p.identity] = p
    by_key: dict[Key, list[tuple[float, ...]]] = defaultdict(list)
    for p in newest.values():
        key = tuple(p.task_id if d == "task" else p.dimension(d) for d in dims)
        by_key[key].append(score(p, turns))
    values = {
        key: scored[0] if len(scored) == 1 else tuple(np.mean(scored, axis=0).tolist())
        for key, scored in by_key.items()
    }
    pooled = sum(len(scored) > 1 for scored in by_key.values())
    return SideValues(values, len(side.played) - len(newest), pooled)


@dataclass(frozen=True)
class PairResult:
    """``first`` − ``second`` on one metric: the comparison, its Holm-adjusted p over the
    metric's pairs, and the smallest difference its tasks detect at ``POWER``."""

    first: str
    second: str
    comparison: Comparison
    p_adjusted: float
    detectable: float

    @property
    def verdict(self) -> str:
        if self.p_adjusted >= ALPHA:
            return "cannot tell"
        d = self.comparison.difference.value
        return f"{self.first} higher" if d > 0 else f"{self.second} higher"


@dataclass(frozen=True)
class MetricResult:
    metric: Metric
    pairs: tuple[PairResult, ...]
    ranks: tuple[Rank, ...] = ()  # more than two sides only
    groups: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True)
class SideSummary:
    label: str
    name: str
    sessions: int
    runs: int
    models: tuple[str, ...]
    keys: int
    left_out: int
    replaced: int
    pooled: int
    max_turns: tuple[int, ...]


@dataclass(frozen=True)
class CompareResult:
    kind: CompareKind
    sides: tuple[SideSummary, ...]
    paired_on: tuple[str, ...]
    differ_by: tuple[str, ...]  # the dimensions compared across (none: the sides alone)
    keys: int
    tasks: int
    turns: int
    metrics: tuple[MetricResult, ...]
    bootstrap: Bootstrap

    @property
    def left_out(self) -> int:
        return sum(s.left_out for s in self.sides)

    @property
    def key_words(self) -> str:
        """The pairing key in words: ``(task, feedback, protocol)``."""
        return f"({', '.join(DIMENSION_NAMES[d] for d in self.paired_on)})"


def build_comparison(
    kind: CompareKind,
    sides: Sequence[Side],
    by: CompareBy | None,
    bootstrap: Bootstrap,
    metric_keys: Sequence[str] = (),
) -> CompareResult:
    """Compare ``sides`` (two or more, each holding sessions of ``kind``) on ``metric_keys``
    (every metric of the kind when empty). Raises ConvtuiError, in one line, for fewer than
    two sides, an empty side, a metric the kind lacks, and sides that share no key."""
    if len(sides) < 2:
        found = f": only {sides[0].name}" if sides else ""
        raise ConvtuiError(
            f"compare needs two sides or more; the selection gives {len(sides)}{found}"
        )
    for side in sides:
        if not side.played:
            raise ConvtuiError(
                f"side {side.label} ({side.name}) holds no {KIND_NAMES[kind]} session"
            )
    turns = max(max(p.max_turns, len(p.verdicts)) for s in sides for p in s.played)
    metrics = _chosen(metrics_for(kind, turns), metric_keys, kind)
    dims = pairing_dimensions(sides, by, kind)
    values = [side_values(s, dims, turns) for s in sides]
    shared = sorted(set.intersection(*(set(v.values) for v in values)))
    if not shared:
        held = ", ".join(f"{s.label} {len(v.values)}" for s, v in zip(sides, values, strict=True))
        words = ", ".join(DIMENSION_NAMES[d] for d in dims)
        raise ConvtuiError(f"the sides share no ({words}) to pair on (each holds: {held})")
    summaries = tuple(_summary(s, v, len(shared)) for s, v in zip(sides, values, strict=True))
    # One matrix a side (shared keys × every metric of the kind), read by column per metric.
    columns = {m.key: j for j, m in enumerate(metrics_for(kind, turns))}
    matrices = [np.array([v.values[k] for k in shared], dtype=float) for v in values]
    task_ids = [k[0] for k in shared]
    results = tuple(
        _metric_result(
            m,
            [s.label for s in sides],
            [matrix[:, columns[m.key]] for matrix in matrices],
            task_ids,
            bootstrap,
        )
        for m in metrics
    )
    return CompareResult(
        kind=kind,
        sides=summaries,
        paired_on=dims,
        differ_by=tuple(
            d for d in DIMENSIONS if d not in dims and (kind == "static" or d != "log_set")
        ),
        keys=len(shared),
        tasks=len({k[0] for k in shared}),
        turns=turns,
        metrics=results,
        bootstrap=bootstrap,
    )


def _chosen(metrics: Sequence[Metric], keys: Sequence[str], kind: CompareKind) -> list[Metric]:
    by_key = {m.key: m for m in metrics}
    unknown = [k for k in keys if k not in by_key]
    if unknown:
        raise ConvtuiError(
            f"no metric {', '.join(unknown)} for {KIND_NAMES[kind]} sessions; they have "
            f"{', '.join(by_key)}"
        )
    return [by_key[k] for k in dict.fromkeys(keys)] if keys else list(metrics)


def _summary(side: Side, values: SideValues, shared: int) -> SideSummary:
    return SideSummary(
        label=side.label,
        name=side.name,
        sessions=len(side.played),
        runs=len({p.run_id for p in side.played}),
        models=tuple(sorted({p.model for p in side.played})),
        keys=len(values.values),
        left_out=len(values.values) - shared,
        replaced=values.replaced,
        pooled=values.pooled,
        max_turns=tuple(sorted({p.max_turns for p in side.played})),
    )


def _metric_result(
    metric: Metric,
    labels: Sequence[str],
    values: Sequence[np.ndarray],
    task_ids: Sequence[str],
    bootstrap: Bootstrap,
) -> MetricResult:
    """``metric`` compared on every pair of sides: ``values`` holds each side's value per
    shared key, ``task_ids`` each key's task (its cluster)."""
    comparisons = []
    for i, j in combinations(range(len(labels)), 2):
        matched = zip(task_ids, values[i].tolist(), values[j].tolist(), strict=True)
        comparisons.append(
            (labels[i], labels[j], paired_comparison(matched, bootstrap, test=metric.test))
        )
    # Each metric's pairs are one family: many are printed, so their p-values are corrected.
    adjusted = holm([c.p_value for _, _, c in comparisons])
    pairs = tuple(
        PairResult(a, b, c, p, detectable_difference(c.units, c.sd, alpha=ALPHA, power=POWER))
        for (a, b, c), p in zip(comparisons, adjusted, strict=True)
    )
    if len(labels) < 3:
        return MetricResult(metric, pairs)
    # Ranks resample tasks: each side's mean per task over the keys it holds of that task.
    per_task = {
        label: cluster_means(zip(task_ids, side.tolist(), strict=True))
        for label, side in zip(labels, values, strict=True)
    }
    tasks = sorted(set(task_ids))
    ranks = tuple(rank_intervals({s: [per_task[s][t] for t in tasks] for s in labels}, bootstrap))
    told_apart = {frozenset((p.first, p.second)) for p in pairs if p.p_adjusted < ALPHA}
    groups = indistinguishable_groups(
        [r.side for r in ranks], lambda a, b: frozenset((a, b)) in told_apart
    )
    return MetricResult(metric, pairs, ranks, tuple(groups))


def notes(result: CompareResult) -> list[str]:
    """What a reader must know before the numbers: sessions counted once or averaged,
    differing turn limits, and what static scores include."""
    out = []
    for s in result.sides:
        if s.replaced:
            out.append(
                f"{s.label}: {counted(s.replaced, 'session')} played again by a newer run "
                "counted once (the newest), as report does"
            )
        if s.pooled:
            out.append(
                f"{s.label}: {counted(s.pooled, 'key')} held by several sessions (models or "
                "annotators pooled in one side): their scores are averaged"
            )
    limits = {s.label: s.max_turns for s in result.sides}
    if len({t for ts in limits.values() for t in ts}) > 1:
        said = ", ".join(f"{k} {'/'.join(map(str, v))}" for k, v in limits.items())
        out.append(
            f"turn limits differ ({said}): every session is carried forward to "
            f"{result.turns} turns, so a side with fewer turns had fewer tries"
        )
    if result.kind == "static":
        out.append(STATIC_NOTE)
    return out
