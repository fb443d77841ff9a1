"""What each feedback is worth, by execution: the tables of issue 32's simulated-user fidelity
report, as pure functions of recorded outcomes (the store reads them, a front end prints them).

An outcome is one target model's one turn from one recorded state (a turn where a person gave
verbal feedback), handed one feedback source: the person's words (``"person"``), a simulator's
(its identity string), or none at all (``"none"``, the control). Each table compares sources
on the *same* states and targets (paired), and every table holds the control:

- per source (pooled, per target, and per task): pass rate and mean share of tests passed, and
  the gain over the control;
- per annotator (pooled and per target): the worth of their feedback, the gain the person's
  words give over the control on that annotator's states;
- per pair (pooled, per target, and per task): the person against each other source (each
  simulator, and the control) on the same states and targets.

The statistics are core/metrics/stats.py's, and their unit is the **session** (``UNIT``): a
difference's interval resamples whole sessions, its exact test counts sessions, and its effect
size (d_z) is over per-session mean differences. The states of one session share a person, a
task and the code that led up to them, and its targets share each state's words, so neither a
state nor a (state, target) pair is an independent draw; a session is (one person on one task,
assigned on its own). Tasks given to several annotators tie their sessions loosely through the
task; the per-task tables show how much the worth moves from task to task. Pass gains are
tested with McNemar's exact test where each session holds one 0/1 pair, else (and shares of
tests passed) with the sign-flip permutation test of the sessions' mean differences, which
tests the mean the interval is of. Pooled over targets a
target that ignores feedback dilutes every gain, so each target has its tables too. Where a
table prints one p-value per task or per annotator, each comes with its Holm adjustment over
that family (the same comparison across the tasks, or the annotators, of the table).

A source with no outcomes is absent from a table, never a row of zeros."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from convtui.core.metrics.stats import Bootstrap, Comparison, Test, holm, paired_comparison
from convtui.core.studies.fidelity_rows import (
    UNIT,
    AnnotatorRow,
    FidelityReport,
    Measure,
    PairRow,
    SourceRow,
    Tables,
)

NO_FEEDBACK = "none"
PERSON = "person"
# Pass is 0/1 (the sign test, McNemar's where a session holds one pair); a share is graded.
TESTS: dict[Measure, Test] = {"passed": "sign", "share": "permutation"}


@dataclass(frozen=True)
class FeedbackOutcome:
    """One target's one turn from state ``state_id`` (turn of session ``session_id``, of task
    ``task_id``, where ``annotator`` gave the feedback; None where unknown) handed the
    feedback of ``source``: whether its code passed, and how many of the task's tests
    passed."""

    state_id: str
    session_id: str
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


class Outcomes:
    """The outcomes indexed by (state, source, target); one outcome per key, one task, one
    session and one annotator per state (None on some rows is allowed), else ValueError."""

    def __init__(self, outcomes: Iterable[FeedbackOutcome]) -> None:
        self.rows: dict[tuple[str, str, str], FeedbackOutcome] = {}
        self.task: dict[str, str] = {}
        self.session: dict[str, str] = {}
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
            if self.session.setdefault(o.state_id, o.session_id) != o.session_id:
                raise ValueError(f"state {o.state_id} belongs to two sessions")
            if o.annotator is not None and (
                self.annotator.setdefault(o.state_id, o.annotator) != o.annotator
            ):
                raise ValueError(f"state {o.state_id} has two annotators")

    def only(self, target: str) -> Outcomes:
        """The outcomes of one target."""
        return Outcomes(o for (_, _, t), o in self.rows.items() if t == target)

    def targets(self) -> tuple[str, ...]:
        return tuple(sorted({t for _, _, t in self.rows}))

    def sources(self) -> tuple[str, ...]:
        """The sources present: the control first, then the person, then the rest sorted."""
        present = {source for _, source, _ in self.rows}
        first = [s for s in (NO_FEEDBACK, PERSON) if s in present]
        return (*first, *sorted(present - set(first)))

    def of(self, source: str, states: set[str]) -> list[FeedbackOutcome]:
        return [o for (s, src, _), o in self.rows.items() if src == source and s in states]

    def pairs(
        self, first: str, second: str, states: set[str], measure: Measure
    ) -> list[tuple[str, float, float]]:
        """(session, first's ``measure``, second's) for each (state, target) of ``states``
        both sources have, sorted: the matched pairs, clustered by session."""
        out = []
        for (state, source, target), o in sorted(self.rows.items()):
            other = self.rows.get((state, second, target))
            if source == first and state in states and other is not None:
                out.append((self.session[state], o.value(measure), other.value(measure)))
        return out


def fidelity(
    outcomes: Iterable[FeedbackOutcome],
    *,
    seed: int = 0,
    resamples: int = 2000,
    level: float = 0.95,
) -> FidelityReport:
    """Every table of the report over ``outcomes``, intervals drawn with ``seed``,
    ``resamples`` and ``level`` (see :class:`Bootstrap`) over sessions."""
    boot = Bootstrap(resamples=resamples, seed=seed, level=level)
    table = Outcomes(outcomes)
    pooled = tables(table, boot)
    tasks = sorted(set(table.task.values()))
    by_task = {t: {s for s, task in table.task.items() if task == t} for t in tasks}
    return FidelityReport(
        bootstrap=boot,
        sources=pooled.sources,
        sources_by_task=_holm_by_task(
            {t: source_rows(table, states, boot) for t, states in by_task.items()},
            lambda row: row.source,
        ),
        annotators=pooled.annotators,
        pairs=pooled.pairs,
        pairs_by_task=_holm_by_task(
            {t: pair_rows(table, states, boot) for t, states in by_task.items()},
            lambda row: row.other,
        ),
        by_target={t: tables(table.only(t), boot) for t in table.targets()},
    )


def tables(table: Outcomes, boot: Bootstrap) -> Tables:
    """The per-source, per-annotator and per-pair tables over every state of ``table``."""
    everywhere = set(table.task)
    return Tables(
        source_rows(table, everywhere, boot),
        annotator_rows(table, boot),
        pair_rows(table, everywhere, boot),
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
                sessions=len({o.session_id for o in mine}),
                pass_rate=_mean(o.value("passed") for o in mine),
                mean_share=_mean(o.share for o in mine),
                gain_pass=_compare(table, source, NO_FEEDBACK, states, "passed", boot),
                gain_share=_compare(table, source, NO_FEEDBACK, states, "share", boot),
            )
        )
    return tuple(rows)


def annotator_rows(table: Outcomes, boot: Bootstrap) -> tuple[AnnotatorRow, ...]:
    """One :class:`AnnotatorRow` per annotator (sorted) whose states have person and control
    outcomes for a common target, the p-values Holm-adjusted over them; states without a
    known annotator are left out."""
    rows = []
    for annotator in sorted(set(table.annotator.values())):
        states = {s for s, who in table.annotator.items() if who == annotator}
        gain_pass = _compare(table, PERSON, NO_FEEDBACK, states, "passed", boot)
        gain_share = _compare(table, PERSON, NO_FEEDBACK, states, "share", boot)
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
                states=len({p.state_id for p, _ in matched}),
                person_pass_rate=_mean(p.value("passed") for p, _ in matched),
                control_pass_rate=_mean(c.value("passed") for _, c in matched),
                person_share=_mean(p.share for p, _ in matched),
                control_share=_mean(c.share for _, c in matched),
                gain_pass=gain_pass,
                gain_share=gain_share,
            )
        )
    adjusted_pass = holm([r.gain_pass.p_value for r in rows])
    adjusted_share = holm([r.gain_share.p_value for r in rows])
    return tuple(
        replace(r, holm_pass=p, holm_share=q)
        for r, p, q in zip(rows, adjusted_pass, adjusted_share, strict=True)
    )


def pair_rows(table: Outcomes, states: set[str], boot: Bootstrap) -> tuple[PairRow, ...]:
    """The person against every other source (the control first) on ``states``, for each
    that shares a (state, target) with the person there."""
    rows = []
    for other in table.sources():
        if other == PERSON:
            continue
        pass_diff = _compare(table, PERSON, other, states, "passed", boot)
        share_diff = _compare(table, PERSON, other, states, "share", boot)
        if pass_diff is not None and share_diff is not None:
            rows.append(PairRow(other, pass_diff, share_diff))
    return tuple(rows)


Row = TypeVar("Row", SourceRow, PairRow)


def _holm_by_task(
    by_task: dict[str, tuple[Row, ...]], name: Callable[[Row], str]
) -> dict[str, tuple[Row, ...]]:
    """Each row's p-values Holm-adjusted over the rows of the same ``name`` on every task:
    one family per comparison and measure, the p-values printed for it task by task."""
    adjusted: dict[tuple[str, str, Measure], float] = {}
    for measure in TESTS:
        family: dict[str, list[tuple[str, float]]] = defaultdict(list)
        for task, rows in by_task.items():
            for row in rows:
                found = row.measured(measure)
                if found is not None:
                    family[name(row)].append((task, found.p_value))
        for key, members in family.items():
            for (task, _), p in zip(members, holm([p for _, p in members]), strict=True):
                adjusted[(task, key, measure)] = p
    return {
        task: tuple(
            replace(
                row,
                holm_pass=adjusted.get((task, name(row), "passed")),
                holm_share=adjusted.get((task, name(row), "share")),
            )
            for row in rows
        )
        for task, rows in by_task.items()
    }


def _compare(
    table: Outcomes, first: str, second: str, states: set[str], measure: Measure, boot: Bootstrap
) -> Comparison | None:
    """``first`` − ``second`` over the sessions of ``states``; None with no matched pair."""
    pairs = table.pairs(first, second, states, measure)
    if not pairs:
        return None
    return paired_comparison(pairs, boot, test=TESTS[measure], unit=UNIT)


def _mean(values: Iterable[float]) -> float:
    kept: Sequence[float] = list(values)
    return math.fsum(kept) / len(kept)
