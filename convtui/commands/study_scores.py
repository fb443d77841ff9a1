"""Per-annotator MRR and Recall for ``convtui study report``, beside the simulated users' on
the same tasks.

One :class:`Scoring` per model: the study's own (each annotator's finished sessions, scored
live, core/studies/outcomes.py) and each ``--target`` (each annotator's sessions replayed as a
log set against it, scored as ``convtui report`` scores a replay, ConvCodeBench's static MRR
and Recall, benchmarks/reports/static_report.py). A simulated user's log set is scored over
exactly the tasks of the annotator beside it, so each row compares like with like."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TypeVar

from convtui.benchmarks.reports.static_report import COMPENSATE_INIT, Replayed
from convtui.benchmarks.reports.static_report import build_static_columns as static_columns
from convtui.core.studies.outcomes import Scores, TaskOutcome, pooled
from convtui.sessions.log_sets import LogSet

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
    on the same tasks (None where it holds none of them)."""

    annotator: str
    scores: Scores | None
    simulated: tuple[Scores | None, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "annotator": self.annotator,
            **_scores_json(self.scores),
            "simulated": [None if s is None else s.to_json() for s in self.simulated],
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

    @property
    def rule(self) -> str:
        return STATIC_RULE if self.replayed else OWN_RULE

    @property
    def everyone(self) -> AnnotatorScores:
        """Every annotator's sessions as one group (a task done by two counts twice, for
        the simulated sets too)."""
        return AnnotatorScores(
            "all annotators",
            pooled([r.scores for r in self.rows]),
            tuple(pooled([r.simulated[i] for r in self.rows]) for i in range(len(self.simulated))),
        )

    def to_json(self) -> dict[str, object]:
        return {
            "model": self.model,
            "replayed": self.replayed,
            "rule": self.rule,
            "simulated_rule": SAME_TASKS,
            "runs": list(self.runs),
            "failed_sessions": self.failed,
            "simulated": [s.to_json() for s in self.simulated],
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
) -> tuple[AnnotatorScores, ...]:
    """Each of ``names``' scores (``annotators``: name -> their sessions by task) and, on the
    tasks they did, each simulated set's."""
    rows = []
    for name in names:
        mine = annotators.get(name, {})
        rows.append(
            AnnotatorScores(
                name,
                score(list(mine.values())),
                tuple(score([s[t] for t in mine if t in s]) for s in simulated),
            )
        )
    return tuple(rows)


def static_scores(replayed: list[Replayed]) -> Scores | None:
    """Static MRR and Recall of replayed sessions (None for none), through the columns
    ``convtui report`` builds: one, as they replay one log set against one model."""
    return pooled([Scores(c.tasks, c.mrr, c.recall) for c in static_columns(replayed)])
