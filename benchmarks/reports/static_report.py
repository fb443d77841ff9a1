"""``convtui report``'s static (replayed, ConvCodeBench) results: one column per target model
and log set, scored as ConvCodeBench's ``print_results`` scores them (core/metrics/scores.py,
"static"): the reference's successes count, MRR scans from the target's own turn 0
(``compensate_init``, the reference CLI's default and the published tables' setting).

A column is one target model replaying one kind of log set: the same Ω, protocol, reference
model, context mode and source of the recorded feedback (a simulator, or people: every
annotator's sessions form one column, labelled "human feedback (n annotators, m sessions)").
When a database holds several replays of one task in a column, the newest run's wins, as for
live runs."""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from convtui.benchmarks.reports import interval_cells as cells
from convtui.benchmarks.reports.report import (
    STATIC_PASS_RULE,
    SUMMARY_BOUNDS,
    StaticColumn,
    TaskScores,
    add_body,
    pass_cell,
    summary_bounds,
    summary_cells,
)
from convtui.core.metrics import scores as metrics
from convtui.core.plural import counted

COMPENSATE_INIT = True  # print_results' CLI default, with which its tables were published


@dataclass(frozen=True)
class Replayed:
    """One replayed session with the verdicts its score needs: ``target`` the turns the
    target recorded, ``reference`` those of the reference session it replayed."""

    run_id: str
    model: str
    feedback: str
    protocol: str
    context: str
    task_id: str
    reference_model: str
    user_kind: str
    simulator: str | None
    annotator: str | None
    max_turns: int
    target: tuple[bool, ...]
    reference: tuple[bool, ...]
    reference_session_id: str = ""

    @property
    def source(self) -> str:
        """Who gave the recorded feedback, as a grouping key."""
        if self.user_kind in ("human", "assist"):
            return "human"
        if self.user_kind == "simulator":
            return f"simulated by {self.simulator}"
        return ""


def build_static_columns(replayed: Iterable[Replayed]) -> tuple[StaticColumn, ...]:
    """The static columns, sorted by model, Ω and log set."""
    newest: dict[tuple, Replayed] = {}
    for r in sorted(replayed, key=lambda r: r.run_id):
        key = (r.model, r.feedback, r.protocol, r.reference_model, r.context, r.source)
        newest[(*key, r.task_id)] = r
    groups: dict[tuple, list[Replayed]] = defaultdict(list)
    for key, r in newest.items():
        groups[key[:-1]].append(r)
    return tuple(_column(group) for _, group in sorted(groups.items()))


def _column(group: Sequence[Replayed]) -> StaticColumn:
    first = group[0]
    turns = max(r.max_turns for r in group)
    # A reference may have played more turns than the replay asked for (--turns): the
    # replay's turns are the ones scored.
    targets = [metrics.carry_forward(r.target[:turns], turns) for r in group]
    references = [metrics.carry_forward(r.reference[:turns], turns) for r in group]
    scores = tuple(
        TaskScores.of(
            r.task_id,
            metrics.static_task_terms(target, reference, compensate_init=COMPENSATE_INIT),
        )
        for r, target, reference in zip(group, targets, references, strict=True)
    )
    return StaticColumn(
        model=first.model,
        feedback=first.feedback,
        protocol=first.protocol,
        reference=first.reference_model,
        context=first.context,
        tasks=len(group),
        pass_at=tuple(metrics.static_pass_at_turn(targets, references)),
        mrr=metrics.static_mrr(targets, references, compensate_init=COMPENSATE_INIT),
        recall=metrics.static_recall(targets, references),
        feedback_by=_feedback_by(group),
        compensate_init=COMPENSATE_INIT,
        scores=scores,
    )


def _feedback_by(group: Sequence[Replayed]) -> str:
    source = group[0].source
    if source != "human":
        return source
    annotators = {r.annotator or "unnamed" for r in group}
    n, m = len(annotators), len(group)
    return f"human feedback ({counted(n, 'annotator')}, {counted(m, 'session')})"


def static_pass_csv(columns: Sequence[StaticColumn]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    names = [f"{c.model} {c.label} {c.protocol}" for c in columns]
    # The bounds come after every value column, so no column's place moves.
    shown = [(n, c.intervals) for n, c in zip(names, columns, strict=True) if c.intervals]
    writer.writerow(["turn", *names, *cells.bound_headers([n for n, _ in shown])])
    for t in range(max((len(c.pass_at) for c in columns), default=0)):
        values = [_cell(c.pass_at, t) for c in columns]
        # A column of fewer turns has blank bounds past its last, as its values are.
        row = [i.pass_at[t] if t < len(i.pass_at) else None for _, i in shown]
        bounds = [b for e in row for b in cells.csv_bounds(e)]
        writer.writerow([t + 1, *values, *bounds])
    return out.getvalue()


def static_summary_csv(columns: Sequence[StaticColumn]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    with_bounds = any(c.intervals for c in columns)
    writer.writerow(
        [
            "model",
            "feedback",
            "protocol",
            "reference",
            "context",
            "feedback_by",
            "tasks",
            "mrr",
            "recall",
            "compensate_init",
        ]
        + (SUMMARY_BOUNDS if with_bounds else [])
    )
    for c in columns:
        writer.writerow(
            [
                c.model,
                c.feedback,
                c.protocol,
                c.reference,
                c.context,
                c.feedback_by,
                c.tasks,
                f"{100 * c.mrr:.1f}",
                f"{100 * c.recall:.1f}",
                c.compensate_init,
            ]
            + (summary_bounds(c.intervals) if with_bounds else [])
        )
    return out.getvalue()


def _cell(values: Sequence[float], t: int) -> str:
    return f"{100 * values[t]:.1f}" if t < len(values) else ""


def static_pass_table(columns: Sequence[StaticColumn], method: str = ""):
    from rich.table import Table

    estimates = [e for c in columns if c.intervals for e in c.intervals.pass_at]
    table = Table(
        title="Static (replayed) Pass@1 (%) after each turn",
        header_style="bold",
        min_width=30,
        caption=cells.caption([f"Pass@1 {STATIC_PASS_RULE}", *cells.notes(method, estimates)]),
    )
    cells.compact(table, bool(estimates))
    headings = [f"{c.label}\n{c.model}\n{c.protocol}" for c in columns]
    turns = max((len(c.pass_at) for c in columns), default=0)
    rows = [[str(t + 1), *(pass_cell(c, t) for c in columns)] for t in range(turns)]
    add_body(table, "turn", headings, rows, bool(estimates))
    return table


def static_summary_table(columns: Sequence[StaticColumn], method: str = ""):
    from rich.table import Table

    estimates = [e for c in columns if c.intervals for e in (c.intervals.mrr, c.intervals.recall)]
    rule = (
        "As ConvCodeBench's print_results: a task whose reference passed at turn t-1 "
        "scores as solved at turn t (the target is handed that code); MRR scans from "
        f"the target's own turn 0 (compensate_init={COMPENSATE_INIT})."
    )
    table = Table(
        title="Static (replayed) MRR and Recall (%)",
        header_style="bold",
        caption=cells.caption([rule, *cells.notes(method, estimates)]),
    )
    names = ("feedback", "model", "reference", "context", "feedback by", "protocol")
    for name in names:
        table.add_column(name, overflow="fold")
    for name in ("tasks", "MRR", "Recall"):
        table.add_column(name, justify="right")
    for c in columns:
        table.add_row(
            c.feedback,
            c.model,
            c.reference,
            c.context,
            c.feedback_by or "-",
            c.protocol,
            str(c.tasks),
            *summary_cells(c),
        )
    return table
