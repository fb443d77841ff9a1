"""``convtui report``: ConvCodeWorld's two tables from a results database.

Table 1: Pass@1 after each turn (rows 0..n-1), one column per feedback configuration.
Table 2: MRR and Recall per configuration. Metric definitions live in core/metrics.py."""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from convtui.core import metrics
from convtui.core.isolation import verdict_warning
from convtui.core.omega import ALL_CONFIGS

_ORDER = {c.label: i for i, c in enumerate(ALL_CONFIGS)}


@dataclass(frozen=True)
class Outcome:
    """One session's result as the report needs it."""

    model: str
    feedback: str
    task_id: str
    first_pass_turn: int | None
    max_turns: int
    status: str


@dataclass(frozen=True)
class Column:
    model: str
    feedback: str
    tasks: int
    pass_at: tuple[float, ...]
    mrr: float
    recall: float
    failed_sessions: int
    unfinished_sessions: int

    @property
    def label(self) -> str:
        return self.feedback


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
            f"run{'s' if len(ids) > 1 else ''} {', '.join(ids)}: {warning}"
            for warning, ids in runs.items()
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
                    "pass_at_turn": [round(100 * v, 1) for v in c.pass_at],
                    "mrr": round(100 * c.mrr, 1),
                    "recall": round(100 * c.recall, 1),
                    "failed_sessions": c.failed_sessions,
                    "unfinished_sessions": c.unfinished_sessions,
                }
                for c in self.columns
            ],
        }

    def pass_csv(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["turn", *(f"{c.model} {c.feedback}" for c in self.columns)])
        for t in range(self.max_turns):
            writer.writerow([t, *(f"{100 * c.pass_at[t]:.1f}" for c in self.columns)])
        return out.getvalue()

    def summary_csv(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["model", "feedback", "tasks", "mrr", "recall"])
        for c in self.columns:
            writer.writerow(
                [c.model, c.feedback, c.tasks, f"{100 * c.mrr:.1f}", f"{100 * c.recall:.1f}"]
            )
        return out.getvalue()


_FINAL = {"solved", "exhausted", "stalled"}


def build_report(outcomes: Iterable[Outcome]) -> Report:
    """Group sessions by (model, feedback) and compute each column's metrics. Sessions that
    have not finished (or failed on model errors) count as unsolved and are reported."""
    groups: dict[tuple[str, str], list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        groups[(outcome.model, outcome.feedback)].append(outcome)
    max_turns = max((o.max_turns for group in groups.values() for o in group), default=0)
    columns = []
    for (model, feedback), group in sorted(
        groups.items(), key=lambda item: (item[0][0], _ORDER.get(item[0][1], 99), item[0][1])
    ):
        first = [o.first_pass_turn for o in group]
        columns.append(
            Column(
                model=model,
                feedback=feedback,
                tasks=len(group),
                pass_at=tuple(metrics.pass_at_turn(first, max_turns)),
                mrr=metrics.mrr(first),
                recall=metrics.recall(first),
                failed_sessions=sum(o.status == "failed" for o in group),
                unfinished_sessions=sum(o.status not in _FINAL | {"failed"} for o in group),
            )
        )
    return Report(tuple(columns), max_turns)


def pass_table(report: Report):
    from rich.table import Table

    table = Table(title="Pass@1 (%) after each turn", header_style="bold", min_width=30)
    table.add_column("turn", justify="right")
    for c in report.columns:
        table.add_column(f"{c.feedback}\n{c.model}", justify="right")
    for t in range(report.max_turns):
        table.add_row(str(t), *(f"{100 * c.pass_at[t]:.1f}" for c in report.columns))
    return table


def summary_table(report: Report, notes: Sequence[str] = ()):
    from rich.table import Table

    table = Table(title="MRR and Recall (%)", header_style="bold", caption="\n".join(notes) or None)
    for name in ("feedback", "model", "tasks", "MRR", "Recall", "failed", "unfinished"):
        table.add_column(name, justify="left" if name in ("feedback", "model") else "right")
    for c in report.columns:
        table.add_row(
            c.feedback,
            c.model,
            str(c.tasks),
            f"{100 * c.mrr:.1f}",
            f"{100 * c.recall:.1f}",
            str(c.failed_sessions),
            str(c.unfinished_sessions),
        )
    return table
