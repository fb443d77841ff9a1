"""``convtui compare``'s output: the lines before the tables (what was left out, first), the
paired table, the tasks that flip, ranks and groups for more than two sides, and JSON.
Numbers are percentages (MRR too, as report prints it); tables fit 120 columns."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from convtui.benchmarks.reports.compare import (
    ALPHA,
    DIMENSION_NAMES,
    KIND_NAMES,
    POWER,
    CompareResult,
    MetricResult,
    PairResult,
    notes,
)
from convtui.core.plural import counted

# The paired tests by the short names the table shows; the caption spells each out.
_SHORT_TESTS = (("McNemar", "McNemar"), ("exact sign", "sign"), ("sign-flip", "sign-flip"))
# Task ids listed per line of flips before "and N more" (JSON lists every one).
FLIPS_SHOWN = 12


def header_lines(result: CompareResult) -> list[str]:
    """What was left out (first, as a reader must know it before any number), what the
    sides are, and how they are paired."""
    shared = f"{result.keys} {result.key_words} keys ({counted(result.tasks, 'task')})"
    if result.left_out:
        per_side = ", ".join(f"{s.label} {s.left_out}" for s in result.sides)
        lines = [
            f"left out: {counted(result.left_out, 'key')} not held by every side ({per_side}); "
            f"compared on the {shared} that every side holds"
        ]
    else:
        lines = [f"compared on {shared}, all that the sides hold"]
    for s in result.sides:
        lines.append(
            f"{s.label}: {s.name} ({counted(s.sessions, 'session')} in {counted(s.runs, 'run')})"
        )
    differ = " and ".join(DIMENSION_NAMES[d] for d in result.differ_by) or "side alone"
    lines.append(
        f"{KIND_NAMES[result.kind]} sessions paired on {result.key_words}, compared across "
        f"{differ}; tests and intervals count each task once (its keys are one cluster)"
    )
    return lines + notes(result)


def comparison_table(result: CompareResult) -> Any:
    """One row per metric (and pair, for more than two sides): each side's value on the
    shared keys, the difference with its paired interval, the exact test's p (Holm-adjusted
    over a metric's pairs when there are several), the tasks that flip each way, d_z, and the
    smallest difference these tasks would detect."""
    from rich import box
    from rich.table import Table

    several = len(result.sides) > 2
    labels = "first − second" if several else f"{result.sides[0].label} − {result.sides[1].label}"
    table = Table(
        title=f"Paired comparison, {labels} (%), over {counted(result.tasks, 'task')}",
        header_style="bold",
        box=box.SIMPLE_HEAD,
        caption=_caption(result),
        caption_justify="left",
    )
    table.add_column("metric")
    if several:
        table.add_column("pair")
    for name in ("first", "second") if several else [s.label for s in result.sides]:
        table.add_column(name, justify="right")
    table.add_column("difference [95%]", justify="right")
    table.add_column("p (Holm)" if several else "p", justify="right")
    table.add_column("test")
    table.add_column("flips", justify="right")
    table.add_column("d_z", justify="right")
    table.add_column("MDE", justify="right")
    table.add_column("verdict")
    for m in result.metrics:
        for p in m.pairs:
            c = p.comparison
            table.add_row(
                m.metric.name,
                *([f"{p.first}−{p.second}"] if several else []),
                f"{100 * c.first:.1f}",
                f"{100 * c.second:.1f}",
                _difference(p),
                _p(p.p_adjusted),
                _short_test(c.test),
                f"{len(c.first_better)}/{len(c.second_better)}",
                "-" if c.effect_size is None else f"{c.effect_size:.2f}",
                _detectable(p),
                p.verdict,
            )
    return table


def _difference(p: PairResult) -> str:
    e = p.comparison.difference
    value = f"{100 * e.value:+.1f}"
    if e.low is None or e.high is None:
        return f"{value} (n/a)"
    return f"{value} [{100 * e.low:+.1f}, {100 * e.high:+.1f}]"


def _p(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3g}"


def _short_test(name: str) -> str:
    return next((short for start, short in _SHORT_TESTS if name.startswith(start)), name)


def _detectable(p: PairResult) -> str:
    if p.comparison.sd == 0 or math.isinf(p.detectable):
        return "n/a"
    return f"{100 * p.detectable:.1f}"


def _caption(result: CompareResult) -> str:
    tests = sorted({p.comparison.test for m in result.metrics for p in m.pairs})
    reasons = sorted(
        {
            p.comparison.difference.reason
            for m in result.metrics
            for p in m.pairs
            if p.comparison.difference.reason
        }
    )
    lines = [
        *(f"{_short_test(t)}: {t}" for t in tests),
        "flips: tasks where the first side does better / where the second does.",
        f"verdict: the exact test at α {ALPHA:g}"
        + (" after Holm's correction over each metric's pairs" if len(result.sides) > 2 else "")
        + "; overlapping intervals of each side alone are not a test.",
        f"MDE: the smallest true difference {counted(result.tasks, 'task')} detect at "
        f"{POWER:.0%} power (two-sided α {ALPHA:g}), from the spread of the per-task "
        "differences seen here (n/a: none differ).",
        *(f"n/a: {r}" for r in reasons),
        f"method: {result.bootstrap.method()}; difference and intervals over tasks, not over "
        "a model's sampling.",
    ]
    return "\n".join(lines)


def flip_lines(result: CompareResult) -> list[str]:
    """For each pair, the tasks each side does better on, metrics with the same tasks on one
    line."""
    lines = []
    for index in range(len(result.metrics[0].pairs) if result.metrics else 0):
        groups: list[tuple[list[str], PairResult]] = []
        for m in result.metrics:
            p = m.pairs[index]
            c = p.comparison
            if not c.first_better and not c.second_better:
                continue
            last = groups[-1][1].comparison if groups else None
            if last and (last.first_better, last.second_better) == (
                c.first_better,
                c.second_better,
            ):
                groups[-1][0].append(m.metric.name)
            else:
                groups.append(([m.metric.name], p))
        several = len(result.sides) > 2  # then each line names its pair
        for names, p in groups:
            pair = f"{p.first}−{p.second} " if several else ""
            lines.append(
                f"{pair}{', '.join(names)}: {_tasks(p.first, p.comparison.first_better)}; "
                f"{_tasks(p.second, p.comparison.second_better)}"
            )
    return lines


def _tasks(label: str, tasks: Sequence[str]) -> str:
    if not tasks:
        return f"{label} better on none"
    shown = ", ".join(tasks[:FLIPS_SHOWN])
    more = (
        f" and {len(tasks) - FLIPS_SHOWN} more (--json lists all)"
        if len(tasks) > FLIPS_SHOWN
        else ""
    )
    return f"{label} better on {len(tasks)}: {shown}{more}"


def ranks_table(result: CompareResult) -> Any:
    """More than two sides: each metric's ranks with their intervals, best first, and the
    groups no exact test (Holm-adjusted) can tell apart."""
    from rich import box
    from rich.table import Table

    table = Table(
        title="Ranks (1 = highest) with 95% intervals, and the sides that cannot be told apart",
        header_style="bold",
        box=box.SIMPLE_HEAD,
        caption=(
            f"ranks resample tasks ({result.bootstrap.method()}); a group: sides no two of "
            f"which differ at α {ALPHA:g} (Holm)"
        ),
        caption_justify="left",
    )
    table.add_column("metric")
    table.add_column("rank [95%], best first", overflow="fold")
    table.add_column("cannot be told apart", overflow="fold")
    for m in result.metrics:
        table.add_row(
            m.metric.name,
            "  ".join(f"{r.side} {r.rank:g} [{r.low:g}, {r.high:g}]" for r in m.ranks),
            "  ".join("{" + ", ".join(g) + "}" for g in m.groups) or "all told apart",
        )
    return table


def compare_json(result: CompareResult) -> dict[str, Any]:
    """The whole comparison for scripts; values in percent, as the tables."""
    return {
        "left_out": {
            "keys": result.left_out,
            "by_side": {s.label: s.left_out for s in result.sides},
        },
        "kind": result.kind,
        "paired_on": list(result.paired_on),
        "differ_by": list(result.differ_by),
        "cluster": "task",
        "compared": {"keys": result.keys, "tasks": result.tasks, "turns": result.turns},
        "sides": [
            {
                "label": s.label,
                "name": s.name,
                "sessions": s.sessions,
                "runs": s.runs,
                "models": list(s.models),
                "keys": s.keys,
                "left_out": s.left_out,
                "replaced": s.replaced,
                "pooled": s.pooled,
                "max_turns": list(s.max_turns),
            }
            for s in result.sides
        ],
        "method": result.bootstrap.method(),
        "bootstrap": result.bootstrap.to_json(),
        "alpha": ALPHA,
        "power": POWER,
        "notes": notes(result),
        "metrics": [_metric_json(m) for m in result.metrics],
    }


def _metric_json(m: MetricResult) -> dict[str, Any]:
    data: dict[str, Any] = {
        "metric": m.metric.key,
        "name": m.metric.name,
        "pairs": [
            {
                "first_side": p.first,
                "second_side": p.second,
                **p.comparison.to_json(),
                "p_adjusted": p.p_adjusted,
                "sd": round(100 * p.comparison.sd, 3),
                "detectable_difference": None
                if math.isinf(p.detectable)
                else round(100 * p.detectable, 1),
                "verdict": p.verdict,
            }
            for p in m.pairs
        ],
    }
    if m.ranks:
        data["ranks"] = [r.to_json() for r in m.ranks]
        data["groups"] = [list(g) for g in m.groups]
    return data
