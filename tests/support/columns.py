"""Report columns made by hand, for tests of what ``convtui report`` does with them
(correlations, plots, files) without a store: four tasks over three turns, convtui's
protocol, the pass rates following from the MRR and Recall given."""

from __future__ import annotations

from convtui.benchmarks.reports.report import Column, StaticColumn


def live_column(model: str, feedback: str, mrr: float, recall: float) -> Column:
    return Column(
        model=model,
        feedback=feedback,
        tasks=4,
        pass_at=(mrr / 2, mrr, recall),
        protocol="convtui",
        mrr=mrr,
        recall=recall,
        failed_sessions=0,
        unfinished_sessions=0,
    )


def static_column(model: str, feedback: str, mrr: float, recall: float) -> StaticColumn:
    return StaticColumn(
        model=model,
        feedback=feedback,
        protocol="convtui",
        reference="ref-model",
        context="markov",
        tasks=4,
        pass_at=(mrr / 2, mrr, recall),
        mrr=mrr,
        recall=recall,
    )
