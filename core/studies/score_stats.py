"""The uncertainty of ``study report``'s scores (core/metrics/stats.py): each annotator's MRR
and Recall with a bootstrap interval, and each annotator against a simulated user on the same
tasks, paired.

The unit is the **task**. An annotator finishes a task at most once, so within an annotator
a task is a session; pooled over annotators, a task several of them did is one cluster (their
sessions share the task's difficulty, and the replayed target's), so the "all annotators" row
resamples tasks, never sessions or turns. A comparison pairs the annotator's session of a
task with the simulated user's session of the same task: its difference in MRR (reciprocal
ranks: the sign-flip permutation test) and in Recall (solved or not: McNemar's exact test),
with the tasks that flip each way and d_z. One comparison per annotator prints one p-value
per annotator: each comes with its Holm adjustment over the annotators of the table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from convtui.core.metrics.stats import (
    Bootstrap,
    Clusters,
    Comparison,
    Estimate,
    estimate_means,
    holm,
    paired_comparison,
)

UNIT = "tasks"


@dataclass(frozen=True)
class TaskTerm:
    """One session's terms of MRR and Recall: its reciprocal rank and whether it solved."""

    task_id: str
    rr: float
    solved: float


@dataclass(frozen=True)
class ScoreIntervals:
    """MRR and Recall over tasks, each with its interval (or the reason for none)."""

    mrr: Estimate
    recall: Estimate

    def to_json(self) -> dict[str, object]:
        return {"mrr": self.mrr.to_json(), "recall": self.recall.to_json()}


@dataclass(frozen=True)
class Versus:
    """An annotator minus a simulated user on the tasks both did: MRR and Recall, each with
    its p-value Holm-adjusted over the annotators of the table."""

    mrr: Comparison
    recall: Comparison
    holm_mrr: float
    holm_recall: float

    def to_json(self) -> dict[str, object]:
        return {
            "mrr": self.mrr.to_json(),
            "recall": self.recall.to_json(),
            "holm_mrr": self.holm_mrr,
            "holm_recall": self.holm_recall,
        }


def score_intervals(terms: Sequence[TaskTerm], boot: Bootstrap) -> ScoreIntervals | None:
    """MRR and Recall of ``terms`` with intervals over their tasks (None for no term)."""
    if not terms:
        return None
    clusters = Clusters.from_rows((t.task_id, (t.rr, t.solved)) for t in terms)
    mrr, recall = estimate_means(clusters, boot, unit=UNIT)
    return ScoreIntervals(mrr, recall)


def versus(
    mine: Sequence[TaskTerm], theirs: Mapping[str, TaskTerm], boot: Bootstrap
) -> Versus | None:
    """``mine`` minus ``theirs`` (task -> the simulated user's term) on the tasks both hold,
    clustered by task; None where they share none. The Holm fields hold the raw p-values
    until :func:`with_holm` adjusts them over a table."""
    shared = [(t, theirs[t.task_id]) for t in mine if t.task_id in theirs]
    if not shared:
        return None
    mrr = paired_comparison(
        [(a.task_id, a.rr, b.rr) for a, b in shared], boot, test="permutation", unit=UNIT
    )
    solved = [(a.task_id, a.solved, b.solved) for a, b in shared]
    recall = paired_comparison(solved, boot, unit=UNIT)
    return Versus(mrr, recall, mrr.p_value, recall.p_value)


def with_holm(column: Sequence[Versus | None]) -> list[Versus | None]:
    """``column`` (one simulated user against each annotator) with each p-value Holm-adjusted
    over the annotators compared."""
    present = [v for v in column if v is not None]
    mrr = iter(holm([v.mrr.p_value for v in present]))
    recall = iter(holm([v.recall.p_value for v in present]))
    return [
        None if v is None else replace(v, holm_mrr=next(mrr), holm_recall=next(recall))
        for v in column
    ]
