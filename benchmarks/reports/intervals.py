"""The intervals of ``convtui report``'s numbers (docs/design.md, "Uncertainty and
comparisons"): each column's metrics from its per-task terms, a task being the unit, through
core/metrics/stats.py. Imported only when intervals are asked for: stats imports numpy, and
``--no-intervals`` must leave the report as fast as it was.

Every metric of one column goes into one ``estimate_means`` call (one row per task, one
value per metric), so the metrics share their resamples and a column costs one matrix
product however many turns it has."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TypeVar

from convtui.benchmarks.reports.codeif_report import (
    CodeifGroup,
    CodeifIntervals,
    task_categories,
    task_terms,
)
from convtui.benchmarks.reports.report import Column, ColumnIntervals, Report, StaticColumn
from convtui.core.codeif.authors_dynamic import AVERAGE
from convtui.core.metrics.stats import (
    Bootstrap,
    Clusters,
    Estimate,
    estimate_mean_of_means,
    estimate_means,
)

Row = tuple[str, Sequence[float | None]]
C = TypeVar("C", Column, StaticColumn)


def estimates(rows: Iterable[Row], width: int, bootstrap: Bootstrap) -> list[Estimate]:
    """``width`` metrics' means over the items of ``rows`` (task id, one value per metric,
    None where the item has none), each with its interval over tasks: the rows of one task
    are one cluster."""
    return _estimates(Clusters.from_rows(rows), width, bootstrap)


def with_intervals(column: C, bootstrap: Bootstrap) -> C:
    """``column`` with the intervals of its Pass@1 rows, MRR and Recall."""
    turns = len(column.pass_at)
    rows = [(s.task_id, s.values()) for s in column.scores]
    found = estimates(rows, turns + 2, bootstrap)
    intervals = ColumnIntervals(tuple(found[:turns]), found[turns], found[turns + 1])
    return replace(column, intervals=intervals)


def report_with_intervals(report: Report, bootstrap: Bootstrap) -> Report:
    return replace(report, columns=tuple(with_intervals(c, bootstrap) for c in report.columns))


def static_with_intervals(
    columns: Sequence[StaticColumn], bootstrap: Bootstrap
) -> tuple[StaticColumn, ...]:
    return tuple(with_intervals(c, bootstrap) for c in columns)


def codeif_with_intervals(group: CodeifGroup, bootstrap: Bootstrap) -> CodeifGroup:
    """``group`` with the intervals of every per-round metric and of IA by category, all in
    one call: a row per task with its round terms, a row per instruction round with its
    category's term (a task's rounds of one category are one cluster). The authors' dynamic
    "avg" row, a mean of the pairs' means, resamples those means (estimate_mean_of_means)."""
    terms = task_terms(group)
    averaged = [i for i in range(len(group.rounds)) if group.labels[i : i + 1] != (AVERAGE,)]
    columns = [(i, m) for i in averaged for m in group.rounds[i]]
    categories = sorted(group.categories)
    width = len(columns) + len(categories)
    rows: list[Row] = [
        (task, [found.get(c) for c in columns] + [None] * len(categories))
        for task, found in terms.items()
    ]
    place = {c: len(columns) + j for j, c in enumerate(categories)}
    for task, category, ia in task_categories(group):
        row: list[float | None] = [None] * width
        row[place[category]] = ia
        rows.append((task, row))
    clusters = Clusters.from_rows(rows)
    found = _estimates(clusters, width, bootstrap)
    by_term = dict(zip(columns, found, strict=False))
    rounds = [{m: by_term[(i, m)] for m in group.rounds[i]} for i in averaged]
    if len(averaged) < len(group.rounds):  # the avg row, last
        rounds.append(
            {
                m: _mean_of_means(
                    clusters, [j for j, (_, n) in enumerate(columns) if n == m], bootstrap
                )
                for m in group.rounds[-1]
            }
        )
    by_category = {c: found[place[c]] for c in categories}
    return replace(group, intervals=CodeifIntervals(tuple(rounds), by_category))


def _estimates(clusters: Clusters, width: int, bootstrap: Bootstrap) -> list[Estimate]:
    if not clusters.units:  # no row: from_rows cannot know the width
        return [Estimate(0.0, None, None, 0, "no tasks")] * width
    return estimate_means(clusters, bootstrap, unit="tasks")


def _mean_of_means(clusters: Clusters, columns: list[int], bootstrap: Bootstrap) -> Estimate:
    if not clusters.units or not columns:
        return Estimate(0.0, None, None, 0, "no tasks")
    return estimate_mean_of_means(clusters, columns, bootstrap, unit="tasks")
