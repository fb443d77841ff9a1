"""``convtui compare --plan``: size a comparison before paying for it, with no database. For a
solve rate shared by both sides and the correlation of their per-task outcomes, the smallest
difference n tasks detect at 80% power, and the tasks a given difference needs
(core/metrics/stats.py: binary_difference_sd, detectable_difference, units_needed)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from convtui.benchmarks.reports.compare import ALPHA, POWER
from convtui.core.errors import ConvtuiError
from convtui.core.metrics.stats import binary_difference_sd, detectable_difference, units_needed


@dataclass(frozen=True)
class Plan:
    tasks: int | None
    baseline: float
    correlation: float
    difference: float | None
    sd: float
    detectable: float | None  # by ``tasks``
    needed: int | None  # for ``difference``


def plan(tasks: int | None, baseline: float, correlation: float, difference: float | None) -> Plan:
    """The plan for ``tasks`` tasks and/or a ``difference`` to detect (rates in [0, 1])."""
    if tasks is None and difference is None:
        raise ConvtuiError(
            "--plan needs --tasks (what that many tasks detect) or --difference (the tasks "
            "it needs), or both"
        )
    if difference is not None and difference <= 0:
        raise ConvtuiError(f"--difference {difference:g}: the difference to detect must be above 0")
    sd = binary_difference_sd(baseline, correlation)
    if sd == 0:
        raise ConvtuiError(
            f"a baseline of {baseline:g} with correlation {correlation:g} leaves no task "
            "whose outcome can differ: nothing to detect"
        )
    return Plan(
        tasks=tasks,
        baseline=baseline,
        correlation=correlation,
        difference=difference,
        sd=sd,
        detectable=None
        if tasks is None
        else detectable_difference(tasks, sd, alpha=ALPHA, power=POWER),
        needed=None
        if difference is None
        else units_needed(difference, sd, alpha=ALPHA, power=POWER),
    )


def plan_lines(p: Plan) -> list[str]:
    lines = [
        f"both sides solving {100 * p.baseline:g}% of tasks, their per-task outcomes "
        f"correlated {p.correlation:g}: a task's difference has sd {100 * p.sd:.1f} points",
    ]
    if p.detectable is not None:
        lines.append(
            f"{p.tasks:,} tasks detect a difference of {100 * p.detectable:.1f} points at "
            f"{POWER:.0%} power (two-sided α {ALPHA:g})"
        )
    if p.needed is not None and p.difference is not None:
        lines.append(
            f"a difference of {100 * p.difference:g} points needs {p.needed:,} tasks at "
            f"{POWER:.0%} power (two-sided α {ALPHA:g})"
        )
    lines.append(
        "normal approximation for solved/not solved (Pass@1, Recall), paired on each task; "
        "models that find the same tasks hard correlate more, and need fewer tasks"
    )
    return lines


def plan_json(p: Plan) -> dict[str, Any]:
    return {
        "tasks": p.tasks,
        "baseline": p.baseline,
        "correlation": p.correlation,
        "difference": p.difference,
        "alpha": ALPHA,
        "power": POWER,
        "sd": p.sd,
        "detectable_difference": p.detectable,
        "tasks_needed": p.needed,
    }
