"""What a study's report reads from each finished session, and the scores it gives a group of
them: the per-annotator MRR and Recall of ``convtui study report``.

Pure: the store reads the verdicts; the formulas are core/metrics/scores.py's (ConvCodeWorld's live
MRR and Recall, sessions stretched to their budget by ``carry_forward``), never restated here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from convtui.core.metrics import scores as metrics


@dataclass(frozen=True)
class TaskOutcome:
    """One finished session of a task: the verdict of each turn it recorded, in order, and
    its ``budget``, the turns it could have had (turn 0 and the feedback turns)."""

    task_id: str
    passes: tuple[bool, ...]
    budget: int

    @property
    def first_pass(self) -> int | None:
        """The first passing turn within the budget, None when none passed."""
        return metrics.first_pass(self.passes[: self.budget])

    @property
    def solved(self) -> bool:
        return self.first_pass is not None

    @property
    def turns_to_solve(self) -> int:
        """How many turns it took: a pass at turn k took k + 1; an unsolved session counts
        as ``budget + 1``, one more than it was allowed (so it ranks after every solve)."""
        first = self.first_pass
        return self.budget + 1 if first is None else first + 1


@dataclass(frozen=True)
class Scores:
    """MRR and Recall (fractions in [0, 1]) over ``tasks`` sessions."""

    tasks: int
    mrr: float
    recall: float

    def to_json(self) -> dict[str, object]:
        """As the report tables show them: percentages with one decimal."""
        return {
            "tasks": self.tasks,
            "mrr": round(100 * self.mrr, 1),
            "recall": round(100 * self.recall, 1),
        }


def live_scores(outcomes: Sequence[TaskOutcome]) -> Scores | None:
    """Live MRR and Recall of ``outcomes`` (None for none), each stretched to the largest
    budget among them as ``convtui report`` stretches a run's sessions."""
    if not outcomes:
        return None
    turns = max(o.budget for o in outcomes)
    passes = [metrics.carry_forward(o.passes[: o.budget], turns) for o in outcomes]
    return Scores(len(outcomes), metrics.live_mrr(passes), metrics.live_recall(passes))


def pooled(groups: Sequence[Scores | None]) -> Scores | None:
    """The scores of several groups taken as one: both metrics are means over sessions, so
    the pooled mean is the groups' means weighted by their sizes."""
    kept = [g for g in groups if g is not None and g.tasks]
    if not kept:
        return None
    tasks = sum(g.tasks for g in kept)
    return Scores(
        tasks,
        math.fsum(g.tasks * g.mrr for g in kept) / tasks,
        math.fsum(g.tasks * g.recall for g in kept) / tasks,
    )
