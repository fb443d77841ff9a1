"""``convtui report --correlate``: per feedback configuration, how well the static
(replayed) MRR and Recall rank models the way the live ones do (core/metrics/correlation.py).

Live columns and static columns meet on (Ω, protocol); static columns are further kept apart
by the reference model they replayed and the context mode, since each such set is one
ConvCodeBench. A live model counts once per Ω and protocol (report.py never mixes runs of the
two protocols in a column).

With a bootstrap, ρ and τ get percentile intervals over tasks (stats.correlation_intervals):
the tasks shared by every correlated model's live and static columns are resampled together,
and each resample ranks the models by their means over the tasks drawn (a task's reciprocal
rank for MRR, solved or not for Recall)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from convtui.benchmarks.reports.interval_cells import caption
from convtui.benchmarks.reports.report import Column, StaticColumn, TaskScores
from convtui.core.metrics.correlation import RankCorrelation, rank_correlation

if TYPE_CHECKING:  # the class only: importing stats imports numpy
    from convtui.core.metrics.stats import Bootstrap

METRICS = ("MRR", "Recall")
NO_STATIC = (
    "no static (replayed, ConvCodeBench) results in this database: "
    "there is nothing to correlate the live scores with"
)


# What the intervals resample, in the method's words.
INTERVAL_UNIT = "the tasks shared by every model's live and static results"


@dataclass(frozen=True)
class CorrelationInterval:
    """The intervals of one row's ρ and τ over its ``tasks`` shared tasks, each (low, high);
    both None exactly when ``reason`` says why there are none."""

    tasks: int
    spearman: tuple[float, float] | None = None
    kendall: tuple[float, float] | None = None
    reason: str = ""

    def to_json(self, bounds: tuple[float, float] | None) -> dict[str, object]:
        low, high = bounds if bounds else (None, None)
        data: dict[str, object] = {
            "low": None if low is None else round(low, 4),
            "high": None if high is None else round(high, 4),
            "units": self.tasks,
        }
        return data | ({"reason": self.reason} if self.reason else {})


@dataclass(frozen=True)
class CorrelationRow:
    feedback: str
    protocol: str
    reference: str  # "" when there were no static results for this Ω
    context: str
    metric: str
    result: RankCorrelation
    interval: CorrelationInterval | None = None  # None: not asked for (--no-intervals)

    def to_json(self) -> dict:
        r = self.result
        i = self.interval
        intervals = (
            {"spearman_interval": i.to_json(i.spearman), "kendall_interval": i.to_json(i.kendall)}
            if i
            else {}
        )
        return {
            "feedback": self.feedback,
            "protocol": self.protocol,
            "reference": self.reference or None,
            "context": self.context or None,
            "metric": self.metric,
            "models": list(r.models),
            "n": r.n,
            "spearman_rho": r.spearman_rho,
            "spearman_p": r.spearman_p,
            "kendall_tau": r.kendall_tau,
            "kendall_p": r.kendall_p,
            "reason": r.reason or None,
            **intervals,
        }


def _score(column: Column | StaticColumn, metric: str) -> float:
    return column.mrr if metric == "MRR" else column.recall


def _task_score(scores: TaskScores, metric: str) -> float:
    return scores.mrr if metric == "MRR" else scores.recall


def correlation_interval(
    live: Mapping[str, Column],
    static: Mapping[str, StaticColumn],
    result: RankCorrelation,
    metric: str,
    bootstrap: Bootstrap,
) -> CorrelationInterval:
    """ρ's and τ's intervals over the tasks that every model of ``result`` holds both live
    and static, each model's per-task terms of ``metric`` paired across models by task."""
    from convtui.core.metrics.stats import MIN_UNITS, correlation_intervals

    by_model = {
        m: (
            {s.task_id: _task_score(s, metric) for s in live[m].scores},
            {s.task_id: _task_score(s, metric) for s in static[m].scores},
        )
        for m in result.models
    }
    if not result.computed:  # no coefficient: no interval, for the row's own reason
        return CorrelationInterval(0, reason=result.reason)
    shared = sorted(set.intersection(*(set(a) & set(b) for a, b in by_model.values())))
    if len(shared) < MIN_UNITS:
        return CorrelationInterval(
            len(shared),
            reason=f"{len(shared)} shared tasks are too few for an interval (at least {MIN_UNITS})",
        )
    found = correlation_intervals(
        {m: [a[t] for t in shared] for m, (a, _) in by_model.items()},
        {m: [b[t] for t in shared] for m, (_, b) in by_model.items()},
        bootstrap,
    )
    if any(math.isnan(v) for bounds in found.values() for v in bounds):
        # Every resample tied the models on one side: no rank to correlate.
        return CorrelationInterval(
            len(shared), reason="no resample of the tasks ranks the models apart"
        )
    return CorrelationInterval(len(shared), found["spearman"], found["kendall"])


def correlate_columns(
    live: Sequence[Column], static: Sequence[StaticColumn], bootstrap: Bootstrap | None = None
) -> tuple[CorrelationRow, ...]:
    """One row per (Ω, protocol, reference, context, metric) with static results, and one
    per (Ω, protocol, metric) of the live columns that has none (its reason says so); with
    ``bootstrap``, each with the intervals of its ρ and τ (:func:`correlation_interval`)."""
    live_by: dict[tuple[str, str], dict[str, Column]] = defaultdict(dict)
    for c in live:
        live_by[(c.feedback, c.protocol)][c.model] = c
    static_by: dict[tuple[str, str, str, str], dict[str, StaticColumn]] = defaultdict(dict)
    for s in static:
        # Each log set (its reference and who gave its feedback) is its own benchmark.
        reference = f"{s.reference}, {s.feedback_by}" if s.feedback_by else s.reference
        static_by[(s.feedback, s.protocol, reference, s.context)][s.model] = s
    rows = []
    for (feedback, protocol, reference, context), targets in static_by.items():
        models = live_by.get((feedback, protocol), {})
        for metric in METRICS:
            result = rank_correlation(
                {m: _score(c, metric) for m, c in models.items()},
                {m: _score(c, metric) for m, c in targets.items()},
                metric,
            )
            interval = (
                correlation_interval(models, targets, result, metric, bootstrap)
                if bootstrap
                else None
            )
            row = CorrelationRow(feedback, protocol, reference, context, metric, result, interval)
            rows.append(row)
    covered = {(f, p) for f, p, _, _ in static_by}
    for feedback, protocol in live_by:
        if (feedback, protocol) not in covered:
            reason = NO_STATIC if not static else f"no static results for {feedback}"
            for metric in METRICS:
                result = RankCorrelation((), reason=reason)
                rows.append(CorrelationRow(feedback, protocol, "", "", metric, result))
    return tuple(rows)


def correlation_json(
    rows: Sequence[CorrelationRow], static_count: int, bootstrap: Bootstrap | None = None
) -> dict:
    """``uncertainty`` says how the ``*_interval`` keys were drawn (None: there are none)."""
    return {
        "method": "scipy.stats.spearmanr and kendalltau (tau-b) over the models scored both "
        "live and static, per feedback configuration",
        "static_columns": static_count,
        "note": NO_STATIC if static_count == 0 else None,
        "rows": [row.to_json() for row in rows],
        "uncertainty": bootstrap.to_json(INTERVAL_UNIT) if bootstrap else None,
    }


def _value(value: float | None, p: float | None) -> str:
    return "-" if value is None or p is None else f"{value:+.3f} (p={p:.3g})"


def _bounds(row: CorrelationRow, bounds: tuple[float, float] | None) -> str:
    """The line under a coefficient: ``[low,high]`` or n/a; nothing without intervals or
    without a coefficient (its reason is the row's "why not")."""
    if row.interval is None or not row.result.computed:
        return ""
    return "\nn/a" if bounds is None else f"\n[{bounds[0]:+.2f},{bounds[1]:+.2f}]"


def _interval_notes(rows: Sequence[CorrelationRow], method: str) -> list[str]:
    """What the bounds are, and each reason for an n/a once."""
    if not any(r.interval for r in rows):
        return []
    reasons = dict.fromkeys(
        r.interval.reason for r in rows if r.interval and r.result.computed and r.interval.reason
    )
    return [f"[low,high]: {method}."] + ([f"n/a: {'; '.join(reasons)}."] if reasons else [])


def correlation_table(rows: Sequence[CorrelationRow], method: str = ""):
    from rich.table import Table
    from rich.text import Text

    table = Table(
        title="Live vs static rank correlation",
        header_style="bold",
        caption=caption(
            [
                "Static scores include the reference model's successes (print_results).",
                *_interval_notes(rows, method),
            ]
        ),
    )
    for name in ("feedback", "protocol", "reference", "context", "metric", "models"):
        table.add_column(name, justify="right" if name == "models" else "left")
    table.add_column("Spearman ρ", justify="right")
    table.add_column("Kendall τ", justify="right")
    table.add_column("why not", overflow="fold")
    for row in rows:
        r = row.result
        table.add_row(
            row.feedback,
            row.protocol,
            Text(row.reference or "-"),
            row.context or "-",
            row.metric,
            str(r.n),
            _value(r.spearman_rho, r.spearman_p)
            + _bounds(row, row.interval.spearman if row.interval else None),
            _value(r.kendall_tau, r.kendall_p)
            + _bounds(row, row.interval.kendall if row.interval else None),
            Text(r.reason),
        )
    return table
