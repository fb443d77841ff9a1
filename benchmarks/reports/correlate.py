"""``convtui report --correlate``: per feedback configuration, how well the static
(replayed) MRR and Recall rank models the way the live ones do (core/metrics/correlation.py).

Live columns and static columns meet on (Ω, protocol); static columns are further kept apart
by the reference model they replayed and the context mode, since each such set is one
ConvCodeBench. A live model counts once per Ω and protocol (report.py never mixes runs of the
two protocols in a column)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from convtui.benchmarks.reports.report import Column, StaticColumn
from convtui.core.metrics.correlation import RankCorrelation, rank_correlation

METRICS = ("MRR", "Recall")
NO_STATIC = (
    "no static (replayed, ConvCodeBench) results in this database: "
    "there is nothing to correlate the live scores with"
)


@dataclass(frozen=True)
class CorrelationRow:
    feedback: str
    protocol: str
    reference: str  # "" when there were no static results for this Ω
    context: str
    metric: str
    result: RankCorrelation

    def to_json(self) -> dict:
        r = self.result
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
        }


def _score(column: Column | StaticColumn, metric: str) -> float:
    return column.mrr if metric == "MRR" else column.recall


def correlate_columns(
    live: Sequence[Column], static: Sequence[StaticColumn]
) -> tuple[CorrelationRow, ...]:
    """One row per (Ω, protocol, reference, context, metric) with static results, and one
    per (Ω, protocol, metric) of the live columns that has none (its reason says so)."""
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
            rows.append(CorrelationRow(feedback, protocol, reference, context, metric, result))
    covered = {(f, p) for f, p, _, _ in static_by}
    for feedback, protocol in live_by:
        if (feedback, protocol) not in covered:
            reason = NO_STATIC if not static else f"no static results for {feedback}"
            for metric in METRICS:
                result = RankCorrelation((), reason=reason)
                rows.append(CorrelationRow(feedback, protocol, "", "", metric, result))
    return tuple(rows)


def correlation_json(rows: Sequence[CorrelationRow], static_count: int) -> dict:
    return {
        "method": "scipy.stats.spearmanr and kendalltau (tau-b) over the models scored both "
        "live and static, per feedback configuration",
        "static_columns": static_count,
        "note": NO_STATIC if static_count == 0 else None,
        "rows": [row.to_json() for row in rows],
    }


def _value(value: float | None, p: float | None) -> str:
    return "-" if value is None or p is None else f"{value:+.3f} (p={p:.3g})"


def correlation_table(rows: Sequence[CorrelationRow]):
    from rich.table import Table
    from rich.text import Text

    table = Table(
        title="Live vs static rank correlation",
        header_style="bold",
        caption="Static scores include the reference model's successes (print_results).",
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
            _value(r.spearman_rho, r.spearman_p),
            _value(r.kendall_tau, r.kendall_p),
            Text(r.reason),
        )
    return table
