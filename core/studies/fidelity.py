"""What each feedback is worth, by execution: the tables of issue 32's simulated-user fidelity
report, as pure functions of recorded outcomes (the store reads them, a front end prints them).

An outcome is one target model's one turn from one recorded state (a turn where a person gave
verbal feedback), handed one feedback source: the person's words (``"person"``), a simulator's
(its identity string), or none at all (``"none"``, the control). Each table compares sources
on the *same* states and targets (paired), and every table holds the control:

- per source (pooled, and per task): pass rate and mean share of tests passed, and the gain
  over the control;
- per annotator: the worth of their feedback, the gain the person's words give over the
  control on that annotator's states, across targets;
- per pair: the person against each other source (each simulator, and the control) on the
  same states and targets.

Differences come with a seeded bootstrap interval over states and an exact sign test over
states (core/studies/paired.py). A source with no outcomes is absent from a table, never a
row of zeros."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Literal

from convtui.core.studies.paired import Bootstrap, Difference, paired_difference

NO_FEEDBACK = "none"
PERSON = "person"

Measure = Literal["passed", "share"]


@dataclass(frozen=True)
class FeedbackOutcome:
    """One target's one turn from state ``state_id`` (of task ``task_id``, where
    ``annotator`` gave the feedback; None where unknown) handed the feedback of ``source``:
    whether its code passed, and how many of the task's tests passed."""

    state_id: str
    task_id: str
    annotator: str | None
    source: str
    target: str
    passed: bool
    tests_passed: int
    tests_total: int

    def __post_init__(self) -> None:
        if not 0 <= self.tests_passed <= self.tests_total:
            raise ValueError(
                f"{self.state_id}/{self.source}/{self.target}: tests_passed "
                f"{self.tests_passed} outside 0..{self.tests_total}"
            )

    @property
    def share(self) -> float:
        """tests_passed / tests_total; with no tests at all, 1.0 if it passed, else 0.0."""
        if self.tests_total == 0:
            return float(self.passed)
        return self.tests_passed / self.tests_total

    def value(self, measure: Measure) -> float:
        """1.0 or 0.0 for ``"passed"``, :attr:`share` for ``"share"``."""
        return float(self.passed) if measure == "passed" else self.share


@dataclass(frozen=True)
class SourceRow:
    """One feedback source over a set of states.

    - ``outcomes``, ``states``: its (state, target) outcomes and the states they come from;
    - ``pass_rate``, ``mean_share``: over all its outcomes, the share that passed and the mean
      share of tests passed (unpaired: every outcome of the source counts);
    - ``gain_pass``, ``gain_share``: the source minus the control on the (state, target)
      pairs both have (None when there is none); the control's own row holds a gain of
      exactly 0 over itself."""

    source: str
    outcomes: int
    states: int
    pass_rate: float
    mean_share: float
    gain_pass: Difference | None
    gain_share: Difference | None


@dataclass(frozen=True)
class AnnotatorRow:
    """The worth of one annotator's feedback: on the states where they gave it, the
    person's words against the control, matched on (state, target).

    ``person_pass_rate``, ``control_pass_rate``, ``person_share``, ``control_share`` are
    the two sides' pass rates and mean shares over the matched pairs; ``gain_pass`` and
    ``gain_share`` their differences (person − control), with the number of states."""

    annotator: str
    person_pass_rate: float
    control_pass_rate: float
    person_share: float
    control_share: float
    gain_pass: Difference
    gain_share: Difference


@dataclass(frozen=True)
class PairRow:
    """The person against ``other`` (a simulator, or ``"none"``, the control) on the
    (state, target) pairs both have: differences person − other in pass and in share of
    tests passed."""

    other: str
    pass_diff: Difference
    share_diff: Difference


@dataclass(frozen=True)
class FidelityReport:
    """Every table, computed with ``bootstrap``: ``sources`` pooled over all states,
    ``sources_by_task`` per task, ``annotators``, ``pairs`` pooled and ``pairs_by_task``."""

    bootstrap: Bootstrap
    sources: tuple[SourceRow, ...]
    sources_by_task: dict[str, tuple[SourceRow, ...]] = field(default_factory=dict)
    annotators: tuple[AnnotatorRow, ...] = ()
    pairs: tuple[PairRow, ...] = ()
    pairs_by_task: dict[str, tuple[PairRow, ...]] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        """Plain dicts, lists, strings and numbers (``json.dumps`` takes it as it is)."""
        return asdict(self)


class Outcomes:
    """The outcomes indexed by (state, source, target); one outcome per key, one task per
    state and one annotator per state (None on some rows is allowed), else ValueError."""

    def __init__(self, outcomes: Iterable[FeedbackOutcome]) -> None:
        self.rows: dict[tuple[str, str, str], FeedbackOutcome] = {}
        self.task: dict[str, str] = {}
        self.annotator: dict[str, str] = {}
        for o in outcomes:
            key = (o.state_id, o.source, o.target)
            if key in self.rows:
                raise ValueError(
                    f"two outcomes for state {key[0]}, source {key[1]}, target {key[2]}"
                )
            self.rows[key] = o
            if self.task.setdefault(o.state_id, o.task_id) != o.task_id:
                raise ValueError(f"state {o.state_id} belongs to two tasks")
            if o.annotator is not None and (
                self.annotator.setdefault(o.state_id, o.annotator) != o.annotator
            ):
                raise ValueError(f"state {o.state_id} has two annotators")

    def sources(self) -> tuple[str, ...]:
        """The sources present: the control first, then the person, then the rest sorted."""
        present = {source for _, source, _ in self.rows}
        first = [s for s in (NO_FEEDBACK, PERSON) if s in present]
        return (*first, *sorted(present - set(first)))

    def of(self, source: str, states: set[str]) -> list[FeedbackOutcome]:
        return [o for (s, src, _), o in self.rows.items() if src == source and s in states]

    def diffs(
        self, first: str, second: str, states: set[str], measure: Measure
    ) -> dict[str, list[float]]:
        """state -> first − second of ``measure`` for each target both sources have there."""
        out: dict[str, list[float]] = defaultdict(list)
        for (state, source, target), o in self.rows.items():
            other = self.rows.get((state, second, target))
            if source == first and state in states and other is not None:
                out[state].append(o.value(measure) - other.value(measure))
        return out


def fidelity(
    outcomes: Iterable[FeedbackOutcome],
    *,
    seed: int = 0,
    resamples: int = 2000,
    level: float = 0.95,
) -> FidelityReport:
    """Every table of the report over ``outcomes``, intervals drawn with ``seed``,
    ``resamples`` and ``level`` (see :class:`Bootstrap`)."""
    boot = Bootstrap(resamples=resamples, seed=seed, level=level)
    table = Outcomes(outcomes)
    everywhere = set(table.task)
    tasks = sorted(set(table.task.values()))
    by_task = {t: {s for s, task in table.task.items() if task == t} for t in tasks}
    return FidelityReport(
        bootstrap=boot,
        sources=source_rows(table, everywhere, boot),
        sources_by_task={t: source_rows(table, states, boot) for t, states in by_task.items()},
        annotators=annotator_rows(table, boot),
        pairs=pair_rows(table, everywhere, boot),
        pairs_by_task={t: pair_rows(table, states, boot) for t, states in by_task.items()},
    )


def source_rows(table: Outcomes, states: set[str], boot: Bootstrap) -> tuple[SourceRow, ...]:
    """One :class:`SourceRow` per source with outcomes on ``states``."""
    rows = []
    for source in table.sources():
        mine = table.of(source, states)
        if not mine:
            continue
        rows.append(
            SourceRow(
                source=source,
                outcomes=len(mine),
                states=len({o.state_id for o in mine}),
                pass_rate=_mean(o.value("passed") for o in mine),
                mean_share=_mean(o.share for o in mine),
                gain_pass=_difference(table, source, NO_FEEDBACK, states, "passed", boot),
                gain_share=_difference(table, source, NO_FEEDBACK, states, "share", boot),
            )
        )
    return tuple(rows)


def annotator_rows(table: Outcomes, boot: Bootstrap) -> tuple[AnnotatorRow, ...]:
    """One :class:`AnnotatorRow` per annotator (sorted) whose states have person and control
    outcomes for a common target; states without a known annotator are left out."""
    rows = []
    for annotator in sorted(set(table.annotator.values())):
        states = {s for s, who in table.annotator.items() if who == annotator}
        gain_pass = _difference(table, PERSON, NO_FEEDBACK, states, "passed", boot)
        gain_share = _difference(table, PERSON, NO_FEEDBACK, states, "share", boot)
        if gain_pass is None or gain_share is None:
            continue
        matched = [
            (o, table.rows[(o.state_id, NO_FEEDBACK, o.target)])
            for o in table.of(PERSON, states)
            if (o.state_id, NO_FEEDBACK, o.target) in table.rows
        ]
        rows.append(
            AnnotatorRow(
                annotator=annotator,
                person_pass_rate=_mean(p.value("passed") for p, _ in matched),
                control_pass_rate=_mean(c.value("passed") for _, c in matched),
                person_share=_mean(p.share for p, _ in matched),
                control_share=_mean(c.share for _, c in matched),
                gain_pass=gain_pass,
                gain_share=gain_share,
            )
        )
    return tuple(rows)


def pair_rows(table: Outcomes, states: set[str], boot: Bootstrap) -> tuple[PairRow, ...]:
    """The person against every other source (the control first) on ``states``, for each
    that shares a (state, target) with the person there."""
    rows = []
    for other in table.sources():
        if other == PERSON:
            continue
        pass_diff = _difference(table, PERSON, other, states, "passed", boot)
        share_diff = _difference(table, PERSON, other, states, "share", boot)
        if pass_diff is not None and share_diff is not None:
            rows.append(PairRow(other, pass_diff, share_diff))
    return tuple(rows)


def _difference(
    table: Outcomes, first: str, second: str, states: set[str], measure: Measure, boot: Bootstrap
) -> Difference | None:
    return paired_difference(table.diffs(first, second, states, measure), boot)


def _mean(values: Iterable[float]) -> float:
    kept: Sequence[float] = list(values)
    return math.fsum(kept) / len(kept)
