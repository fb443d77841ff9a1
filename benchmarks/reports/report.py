"""``convtui report``: ConvCodeWorld's two tables from a results database.

Table 1: Pass@1 after each turn (rows 0..n-1), one column per feedback configuration.
Table 2: MRR and Recall per configuration. Metric definitions live in core/metrics/scores.py.

Each session becomes its per-turn verdicts stretched to the table's turns by
``metrics.carry_forward``. Pass@1 rows follow the protocol the runs recorded: ConvCodeWorld's
per-turn rule under ``convcodeworld``, the cumulative one under ``convtui``."""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from convtui.benchmarks.reports import interval_cells as cells
from convtui.core.errors import ConvtuiError
from convtui.core.execution.isolation import verdict_warning
from convtui.core.metrics import scores as metrics
from convtui.core.plural import noun
from convtui.core.settings.omega import ALL_CONFIGS

if TYPE_CHECKING:  # the class only: importing stats imports numpy (see interval_cells)
    from convtui.core.metrics.stats import Estimate

_ORDER = {c.label: i for i, c in enumerate(ALL_CONFIGS)}


# Pass@1 rows per protocol, as a one-line name for the tables and JSON.
PASS_RULES = {
    "convcodeworld": "per turn, as ConvCodeWorld's print_results: turn t or turn 0 passed",
    "convtui": "cumulative: passed at any turn up to t",
}
STATIC_PASS_RULE = (
    "static, as ConvCodeBench's print_results: turn t (from 1) passed, or the reference's "
    "turn 0 did"
)


@dataclass(frozen=True)
class Outcome:
    """One session's result as the report needs it: ``turn_passes`` holds the verdict of each
    turn it recorded, in order; ``max_turns`` counts turn 0 and the feedback turns; ``protocol``
    is the one its run recorded (``convcodeworld`` or ``convtui``)."""

    model: str
    feedback: str
    task_id: str
    turn_passes: tuple[bool, ...]
    max_turns: int
    status: str
    protocol: str


@dataclass(frozen=True)
class TaskScores:
    """One task's terms of a column's means: 1 or 0 at each row of its Pass@1 table, its
    reciprocal rank (MRR's term) and 1 or 0 solved (Recall's). What the intervals resample,
    a task being the unit, and what ``--correlate``'s intervals pair across models."""

    task_id: str
    pass_at: tuple[float, ...]
    mrr: float
    recall: float

    @classmethod
    def of(cls, task_id: str, terms: Sequence[float]) -> TaskScores:
        """From a task's terms as core/metrics/scores.py lists them (Pass@1 rows, MRR, Recall)."""
        return cls(task_id, tuple(terms[:-2]), terms[-2], terms[-1])

    def values(self) -> tuple[float, ...]:
        """Every metric of the column in one row: the Pass@1 rows, then MRR and Recall."""
        return (*self.pass_at, self.mrr, self.recall)


@dataclass(frozen=True)
class ColumnIntervals:
    """A column's numbers with their intervals over tasks (benchmarks/reports/intervals.py)."""

    pass_at: tuple[Estimate, ...]
    mrr: Estimate
    recall: Estimate

    def all(self) -> tuple[Estimate, ...]:
        return (*self.pass_at, self.mrr, self.recall)

    def to_json(self) -> dict[str, object]:
        """The ``*_interval`` keys set beside the values they qualify."""
        return {
            "pass_at_turn_interval": [cells.interval_json(e) for e in self.pass_at],
            "mrr_interval": cells.interval_json(self.mrr),
            "recall_interval": cells.interval_json(self.recall),
        }


@dataclass(frozen=True)
class Column:
    """One column of the live report: a model's sessions under one Ω (``feedback``) and
    protocol, over ``tasks`` tasks. ``pass_at`` is Pass@1 per turn by the protocol's rule
    (``PASS_RULES``); ``mrr`` and ``recall`` are ConvCodeWorld's live ones."""

    model: str
    feedback: str
    tasks: int
    pass_at: tuple[float, ...]
    protocol: str
    mrr: float
    recall: float
    failed_sessions: int
    unfinished_sessions: int
    scores: tuple[TaskScores, ...] = field(default=(), repr=False)
    intervals: ColumnIntervals | None = None  # None: not asked for (--no-intervals)

    @property
    def label(self) -> str:
        return self.feedback


@dataclass(frozen=True)
class StaticColumn:
    """One target model's static (replayed, ConvCodeBench) results under one Ω: replayed
    against ``reference``'s logged turns with context mode ``context`` (``markov`` or
    ``full``). ``mrr`` and ``recall`` are print_results' static ones
    (``metrics.static_mrr``/``static_recall``), so they include the reference's successes."""

    model: str
    feedback: str
    protocol: str
    reference: str
    context: str
    tasks: int
    # print_results' static rows: element 0 is turn 1 (the target's own turn 0 is no row).
    pass_at: tuple[float, ...]
    mrr: float
    recall: float
    # Who gave the recorded feedback: "" (no verbal feedback), "simulated by M", or
    # "human feedback (n annotators, m sessions)".
    feedback_by: str = ""
    compensate_init: bool = True
    scores: tuple[TaskScores, ...] = field(default=(), repr=False)
    intervals: ColumnIntervals | None = None

    @property
    def label(self) -> str:
        """The column's heading: Ω, then the log set it replayed."""
        by = f", {self.feedback_by}" if self.feedback_by else ""
        return f"{self.feedback} static ({self.reference}, {self.context}{by})"

    def to_json(self) -> dict:
        return {
            "model": self.model,
            "feedback": self.feedback,
            "protocol": self.protocol,
            "reference": self.reference,
            "context": self.context,
            "feedback_by": self.feedback_by or None,
            "tasks": self.tasks,
            "pass_at_turn_rule": STATIC_PASS_RULE,
            "pass_at_turn_from": 1,
            "pass_at_turn": [round(100 * v, 1) for v in self.pass_at],
            "mrr": round(100 * self.mrr, 1),
            "recall": round(100 * self.recall, 1),
            "compensate_init": self.compensate_init,
            **(self.intervals.to_json() if self.intervals else {}),
        }


# The default model of every command: what a first run of the README's set-up reports on.
EMBEDDED_MODEL = "local:smollm2"
EMBEDDED_MODEL_NOTE = (
    f"{EMBEDDED_MODEL} is the embedded 135M-parameter model, far too small to solve these "
    "tasks: its scores near 0 are expected. It is the default so every command runs "
    "offline; for scores that mean something, give --model a served model or an API (see "
    "Models in the README)."
)


def model_notes(models: Iterable[str]) -> tuple[str, ...]:
    """What a reader must know about the models reported before reading their scores."""
    return (EMBEDDED_MODEL_NOTE,) if EMBEDDED_MODEL in set(models) else ()


@dataclass(frozen=True)
class Report:
    columns: tuple[Column, ...]
    max_turns: int
    # run id -> the isolation label its config recorded ("" for runs from before it was).
    isolation: Mapping[str, str] = field(default_factory=dict)

    @property
    def warnings(self) -> tuple[str, ...]:
        """One line per isolation level that changes verdicts, naming the runs it covers."""
        runs: dict[str, list[str]] = defaultdict(list)
        for run_id, label in sorted(self.isolation.items()):
            warning = verdict_warning(label)
            if warning is not None:
                runs[warning].append(run_id)
        return tuple(
            f"{noun(len(ids), 'run')} {', '.join(ids)}: {warning}" for warning, ids in runs.items()
        )

    def to_json(self) -> dict:
        return {
            "max_turns": self.max_turns,
            "isolation": dict(self.isolation),
            "warnings": list(self.warnings),
            "columns": [
                {
                    "model": c.model,
                    "feedback": c.feedback,
                    "tasks": c.tasks,
                    "protocol": c.protocol,
                    "pass_at_turn_rule": PASS_RULES[c.protocol],
                    "pass_at_turn": [round(100 * v, 1) for v in c.pass_at],
                    "mrr": round(100 * c.mrr, 1),
                    "recall": round(100 * c.recall, 1),
                    "failed_sessions": c.failed_sessions,
                    "unfinished_sessions": c.unfinished_sessions,
                    **(c.intervals.to_json() if c.intervals else {}),
                }
                for c in self.columns
            ],
        }

    def pass_csv(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out)
        names = [f"{c.model} {c.feedback} {c.protocol}" for c in self.columns]
        # The bounds come after every value column, so no column's place moves.
        shown = [(n, c.intervals) for n, c in zip(names, self.columns, strict=True) if c.intervals]
        writer.writerow(["turn", *names, *cells.bound_headers([n for n, _ in shown])])
        for t in range(self.max_turns):
            values = [f"{100 * c.pass_at[t]:.1f}" for c in self.columns]
            bounds = [b for _, i in shown for b in cells.csv_bounds(i.pass_at[t])]
            writer.writerow([t, *values, *bounds])
        return out.getvalue()

    def summary_csv(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out)
        with_bounds = any(c.intervals for c in self.columns)
        writer.writerow(
            ["model", "feedback", "protocol", "tasks", "mrr", "recall"]
            + (SUMMARY_BOUNDS if with_bounds else [])
        )
        for c in self.columns:
            writer.writerow(
                [
                    c.model,
                    c.feedback,
                    c.protocol,
                    c.tasks,
                    f"{100 * c.mrr:.1f}",
                    f"{100 * c.recall:.1f}",
                ]
                + (summary_bounds(c.intervals) if with_bounds else [])
            )
        return out.getvalue()


# The interval columns of the MRR and Recall CSV files, after the existing ones.
SUMMARY_BOUNDS = ["mrr_low", "mrr_high", "recall_low", "recall_high", "interval_reason"]


def summary_bounds(intervals: ColumnIntervals | None) -> list[str]:
    """A column's cells under SUMMARY_BOUNDS: blank bounds and the reason where there is no
    interval."""
    if intervals is None:
        return [""] * len(SUMMARY_BOUNDS)
    reasons = dict.fromkeys(e.reason for e in (intervals.mrr, intervals.recall) if e.reason)
    return [
        *cells.csv_bounds(intervals.mrr),
        *cells.csv_bounds(intervals.recall),
        "; ".join(reasons),
    ]


_FINAL = {"solved", "exhausted", "stalled"}


def build_report(outcomes: Iterable[Outcome]) -> Report:
    """Group sessions by (model, feedback, protocol) and compute each column's metrics from per-turn
    verdicts. Turns a session never ran are filled by ``metrics.carry_forward``: after a pass
    they pass (ConvCodeWorld re-runs code that passed), after a fail or with no turn at all they
    fail, so sessions that have not finished (or failed on model errors) count as unsolved from
    where they stopped, and are reported. MRR and Recall are ConvCodeWorld's live ones; Pass@1
    rows follow the column's protocol (``PASS_RULES``); runs of the two protocols never share a
    column."""
    groups: dict[tuple[str, str, str], list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        if outcome.protocol not in PASS_RULES:
            raise ConvtuiError(f"{outcome.model}: unknown protocol {outcome.protocol!r}")
        groups[(outcome.model, outcome.feedback, outcome.protocol)].append(outcome)
    everyone = [o for group in groups.values() for o in group]
    max_turns = max((max(o.max_turns, len(o.turn_passes)) for o in everyone), default=0)
    columns = []
    for (model, feedback, protocol), group in sorted(
        groups.items(),
        key=lambda item: (item[0][0], item[0][2], _ORDER.get(item[0][1], 99), item[0][1]),
    ):
        passes = [metrics.carry_forward(o.turn_passes, max_turns) for o in group]
        if protocol == "convtui":
            pass_at = metrics.cumulative_pass_at_turn(passes)
        else:
            pass_at = metrics.live_pass_at_turn(passes)
        scores = tuple(
            TaskScores.of(o.task_id, metrics.live_task_terms(p, protocol))
            for o, p in zip(group, passes, strict=True)
        )
        columns.append(
            Column(
                model=model,
                feedback=feedback,
                tasks=len(group),
                pass_at=tuple(pass_at),
                protocol=protocol,
                mrr=metrics.live_mrr(passes),
                recall=metrics.live_recall(passes),
                failed_sessions=sum(o.status == "failed" for o in group),
                unfinished_sessions=sum(o.status not in _FINAL | {"failed"} for o in group),
                scores=scores,
            )
        )
    return Report(tuple(columns), max_turns)


def pass_table(report: Report, method: str = ""):
    """Pass@1 per turn; where intervals were computed, each under its value, and ``method``
    (stats.Bootstrap.method) with the reasons for any n/a below the table."""
    from rich.table import Table

    rules = sorted({PASS_RULES[c.protocol] for c in report.columns})
    estimates = [e for c in report.columns if c.intervals for e in c.intervals.pass_at]
    table = Table(
        title="Pass@1 (%) after each turn",
        header_style="bold",
        min_width=30,
        caption=cells.caption(
            [*(f"Pass@1 {rule}" for rule in rules), *cells.notes(method, estimates)]
        ),
    )
    cells.compact(table, bool(estimates))
    headings = [f"{c.feedback}\n{c.model}\n{c.protocol}" for c in report.columns]
    rows = [[str(t), *(pass_cell(c, t) for c in report.columns)] for t in range(report.max_turns)]
    add_body(table, "turn", headings, rows, bool(estimates))
    return table


def add_body(
    table, first: str, headings: Sequence[str], rows: Sequence[Sequence[str]], intervals: bool
) -> None:
    """A Pass@1 table's columns and rows: ``first`` names the rows, a right-aligned column
    under each of ``headings``, folded where it must, never cut (nine settings cut to nine
    characters read alike); with intervals, no column narrower than its cells."""
    names = [first, *(row[0] for row in rows)]
    table.add_column(first, justify="right", min_width=_least(names, intervals))
    for j, heading in enumerate(headings, start=1):
        width = _least([row[j] for row in rows], intervals)
        table.add_column(heading, justify="right", overflow="fold", min_width=width)
    for row in rows:
        table.add_row(*row)


def _least(column: Sequence[str], intervals: bool) -> int | None:
    return cells.fitted_width(column) if intervals else None


def pass_cell(column: Column | StaticColumn, row: int) -> str:
    """Row ``row`` of a column's Pass@1 (blank past its last row), with its interval."""
    if row >= len(column.pass_at):
        return ""
    estimate = column.intervals.pass_at[row] if column.intervals else None
    return cells.cell(f"{100 * column.pass_at[row]:.1f}", estimate)


def summary_table(report: Report, notes: Sequence[str] = (), method: str = ""):
    from rich.table import Table

    estimates = [
        e for c in report.columns if c.intervals for e in (c.intervals.mrr, c.intervals.recall)
    ]
    table = Table(
        title="MRR and Recall (%)",
        header_style="bold",
        caption=cells.caption([*notes, *cells.notes(method, estimates)]),
    )
    names = ("feedback", "model", "protocol", "tasks", "MRR", "Recall", "failed", "unfinished")
    for name in names:
        table.add_column(name, justify="right" if name in names[3:] else "left")
    for c in report.columns:
        table.add_row(
            c.feedback,
            c.model,
            c.protocol,
            str(c.tasks),
            *summary_cells(c),
            str(c.failed_sessions),
            str(c.unfinished_sessions),
        )
    return table


def summary_cells(column: Column | StaticColumn) -> tuple[str, str]:
    """The MRR and Recall cells of a column, each with its interval below it."""
    i = column.intervals
    return (
        cells.cell(f"{100 * column.mrr:.1f}", i.mrr if i else None),
        cells.cell(f"{100 * column.recall:.1f}", i.recall if i else None),
    )


def report_file_names(stem: str, names: Sequence[str]) -> dict[str, str]:
    """Each report file's name (no extension) by what it holds: ``<stem>-<name>``, ``stem``
    the database's name, written once — a ``name`` that already starts with it is not
    prefixed again (``codeif.db``: ``codeif-rounds``, not ``codeif-codeif-rounds``). Where
    that would give two files of one report the same name (a ``static.db`` holding live
    results: its live ``pass-at-turn`` is ``static-pass-at-turn`` already), the name left
    unprefixed gets the prefix after all, so no file overwrites another."""
    full = {name: f"{stem}-{name}" for name in names}
    short = {name: name if name.startswith(f"{stem}-") else full[name] for name in names}
    taken = [value for name, value in short.items() if value == full[name]]
    return {
        name: full[name] if value != full[name] and value in taken else value
        for name, value in short.items()
    }
