"""Per-annotator MRR and Recall for ``convtui study report``, beside the simulated users' on
the same tasks.

One :class:`Scoring` per model: the study's own (each annotator's finished sessions, scored
live, core/studies/outcomes.py) and each ``--target`` (each annotator's sessions replayed as a
log set against it, scored as ``convtui report`` scores a replay, ConvCodeBench's static MRR
and Recall, benchmarks/reports/static_report.py). A simulated user's log set is scored over
exactly the tasks of the annotator beside it, so each row compares like with like."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TypeVar

from convtui.benchmarks.reports.static_report import COMPENSATE_INIT, Replayed
from convtui.benchmarks.reports.static_report import build_static_columns as static_columns
from convtui.core.metrics import scores as metrics
from convtui.core.metrics.stats import Bootstrap
from convtui.core.studies.outcomes import Scores, TaskOutcome, pooled
from convtui.core.studies.score_stats import (
    UNIT,
    ScoreIntervals,
    TaskTerm,
    Versus,
    score_intervals,
    versus,
    with_holm,
)
from convtui.sessions.reading.log_sets import LogSet

U = TypeVar("U", TaskOutcome, Replayed)
# task -> what is scored of that task's session (a live outcome, or a replayed session).
ByTask = Mapping[str, U]

OWN_RULE = (
    "the annotators' own sessions with the study's model, scored live: MRR the mean of "
    "1/(k+1), k the first passing turn (0 if none); Recall the share solved within the budget"
)
STATIC_RULE = (
    "each annotator's sessions replayed as a log set (bench static), scored as ConvCodeBench's "
    "print_results: a task whose reference passed at turn t-1 counts as solved at turn t; MRR "
    f"scans from the target's own turn 0 (compensate_init={COMPENSATE_INIT})"
)
SAME_TASKS = "simulated users are scored on the same tasks as the annotator beside them"


@dataclass(frozen=True)
class Simulated:
    """A simulated user's log set, as the report names it."""

    name: str
    user: str
    reference_model: str
    feedback: str
    simulator: str | None

    @classmethod
    def of(cls, log_set: LogSet) -> Simulated:
        return cls(
            log_set.name,
            log_set.config.feedback.verbal,
            log_set.model,
            log_set.feedback,
            log_set.simulator,
        )

    def to_json(self) -> dict[str, object]:
        # Every field as it is named here, but the name: the report calls that the log_set.
        fields: dict[str, object] = asdict(self)
        return {"log_set": fields.pop("name"), **fields}


@dataclass(frozen=True)
class AnnotatorScores:
    """One annotator's scores (None: nothing finished to score), and each simulated set's
    on the same tasks (None where it holds none of them); ``terms`` and ``simulated_terms``
    the per-task terms they are means of; ``intervals`` the annotator's MRR and Recall with
    intervals over tasks, ``versus`` the annotator against each simulated set, paired on
    their tasks (core/studies/score_stats.py)."""

    annotator: str
    scores: Scores | None
    simulated: tuple[Scores | None, ...]
    terms: tuple[TaskTerm, ...] = ()
    simulated_terms: tuple[tuple[TaskTerm, ...], ...] = ()
    intervals: ScoreIntervals | None = None
    versus: tuple[Versus | None, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "annotator": self.annotator,
            **_scores_json(self.scores),
            "simulated": [None if s is None else s.to_json() for s in self.simulated],
            "intervals": None if self.intervals is None else self.intervals.to_json(),
            "versus": [None if v is None else v.to_json() for v in self.versus],
        }


@dataclass(frozen=True)
class Scoring:
    """The annotators' scores with one model: the study's own (``replayed`` False) or a
    target their sessions were replayed against, in ``runs`` (``failed`` of whose sessions
    failed on model errors)."""

    model: str
    replayed: bool
    simulated: tuple[Simulated, ...]
    rows: tuple[AnnotatorScores, ...]
    runs: tuple[str, ...] = ()
    failed: int = 0
    bootstrap: Bootstrap = field(default_factory=Bootstrap)

    @property
    def rule(self) -> str:
        return STATIC_RULE if self.replayed else OWN_RULE

    @property
    def everyone(self) -> AnnotatorScores:
        """Every annotator's sessions as one group (a task done by two counts twice, for
        the simulated sets too; their interval resamples tasks, so those two are one
        cluster). One comparison per simulated set: its p-value needs no adjustment."""
        terms = tuple(t for r in self.rows for t in r.terms)
        sims = range(len(self.simulated))
        # A simulated set's session of a task is the same beside every annotator of it.
        theirs = [{t.task_id: t for r in self.rows for t in r.simulated_terms[i]} for i in sims]
        return AnnotatorScores(
            "all annotators",
            pooled([r.scores for r in self.rows]),
            tuple(pooled([r.simulated[i] for r in self.rows]) for i in sims),
            terms,
            intervals=score_intervals(terms, self.bootstrap),
            versus=tuple(versus(terms, theirs[i], self.bootstrap) for i in sims),
        )

    @property
    def method(self) -> str:
        return self.bootstrap.method(UNIT)

    def to_json(self) -> dict[str, object]:
        return {
            "model": self.model,
            "replayed": self.replayed,
            "rule": self.rule,
            "simulated_rule": SAME_TASKS,
            "runs": list(self.runs),
            "failed_sessions": self.failed,
            "simulated": [s.to_json() for s in self.simulated],
            "bootstrap": {**self.bootstrap.to_json(UNIT), "text": self.method},
            "annotators": [r.to_json() for r in self.rows],
            "all": self.everyone.to_json(),
        }


def _scores_json(scores: Scores | None) -> dict[str, object]:
    if scores is None:
        return {"tasks": 0, "mrr": None, "recall": None}
    return scores.to_json()


def score_groups(
    names: Sequence[str],
    annotators: Mapping[str, ByTask[U]],
    simulated: Sequence[ByTask[U]],
    score: Callable[[list[U]], Scores | None],
    terms: Callable[[list[U]], list[TaskTerm]],
    boot: Bootstrap,
) -> tuple[AnnotatorScores, ...]:
    """Each of ``names``' scores (``annotators``: name -> their sessions by task) and, on the
    tasks they did, each simulated set's; with intervals over tasks and each annotator
    against each simulated set, the p-values Holm-adjusted over the annotators."""
    rows = []
    for name in names:
        mine = annotators.get(name, {})
        theirs = [[s[t] for t in mine if t in s] for s in simulated]
        own = tuple(terms(list(mine.values())))
        sim_terms = tuple(tuple(terms(found)) for found in theirs)
        rows.append(
            AnnotatorScores(
                name,
                score(list(mine.values())),
                tuple(score(found) for found in theirs),
                own,
                sim_terms,
                score_intervals(own, boot),
                tuple(versus(own, {t.task_id: t for t in st}, boot) for st in sim_terms),
            )
        )
    columns = [with_holm([r.versus[i] for r in rows]) for i in range(len(simulated))]
    return tuple(
        replace(r, versus=tuple(column[k] for column in columns)) for k, r in enumerate(rows)
    )


def live_terms(outcomes: list[TaskOutcome]) -> list[TaskTerm]:
    """Each live session's terms: 1/(k+1) for its first pass k within its budget (0 when
    none), and whether it solved (the terms live_scores averages)."""
    return [
        TaskTerm(
            o.task_id, 0.0 if o.first_pass is None else 1 / (o.first_pass + 1), float(o.solved)
        )
        for o in outcomes
    ]


def static_terms(replayed: list[Replayed]) -> list[TaskTerm]:
    """Each replayed session's terms of static MRR and Recall, stretched to the group's
    budget as static_scores' columns stretch them (ConvCodeBench's print_results)."""
    if not replayed:
        return []
    turns = max(r.max_turns for r in replayed)
    out = []
    for r in replayed:
        target = metrics.carry_forward(r.target[:turns], turns)
        reference = metrics.carry_forward(r.reference[:turns], turns)
        rr = metrics.static_task_mrr(target, reference, compensate_init=COMPENSATE_INIT)
        out.append(TaskTerm(r.task_id, rr, metrics.static_task_recall(target, reference)))
    return out


def static_scores(replayed: list[Replayed]) -> Scores | None:
    """Static MRR and Recall of replayed sessions (None for none), through the columns
    ``convtui report`` builds: one, as they replay one log set against one model."""
    return pooled([Scores(c.tasks, c.mrr, c.recall) for c in static_columns(replayed)])
