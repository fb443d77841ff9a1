"""``convtui study fidelity --figures DIR``: the report's figures as PNG and SVG, drawn as
``convtui report``'s are (benchmarks/reports/plots.py: figure size, canvas, file naming).
Imported only for ``--figures``: matplotlib is slow to import.

- ``<stem>-fidelity-gain.{png,svg}``: each source's gain over no feedback (the control, at
  0), pooled over targets, in points of pass rate and of tests passed, with its bootstrap
  interval over sessions (none under core/metrics/stats.py's minimum of sessions);
- ``<stem>-fidelity-pairs.{png,svg}``: per task, the person minus each other source in
  points of tests passed, with its interval (the control among them)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from matplotlib import rcParams
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from convtui.benchmarks.commands.study.fidelity_result import FidelityResult
from convtui.benchmarks.reports.plots import (
    PANEL_H,
    PANEL_W,
    new_figure,
    save_figures,
    short_labels,
)
from convtui.core.metrics.stats import Comparison
from convtui.core.studies.fidelity_rows import UNIT

# Tick labels are slanted under their points, side by side; the legend sits inside the
# axes, and one wider than them squeezes them out: both shorter than a figure legend's.
TICK_CHARS = 28
LEGEND_CHARS = 44


def write_fidelity_plots(result: FidelityResult, folder: Path) -> list[Path]:
    """Write both figures under ``folder``; the paths written."""
    figures = {"fidelity-gain": _gain_figure(result), "fidelity-pairs": _pairs_figure(result)}
    return save_figures(figures, folder, result.db.stem)


def _errorbars(
    ax: Axes,
    found: Sequence[Comparison | None],
    shift: float = 0.0,
    **style: object,
) -> None:
    """A point at each mean difference with its interval, in points (x100), at x = position
    + ``shift``; a point without a bar where the sessions are too few for an interval, a gap
    where nothing was matched."""
    xs = [i + shift for i in range(len(found))]
    means = [math.nan if d is None else 100 * d.difference.value for d in found]
    below = [100 * _reach(d, "low") for d in found]
    above = [100 * _reach(d, "high") for d in found]
    ax.errorbar(xs, means, yerr=[below, above], fmt="o", capsize=4, **style)  # type: ignore[arg-type]


def _reach(found: Comparison | None, side: str) -> float:
    """How far the interval reaches from the mean on ``side`` (0 without an interval)."""
    if found is None:
        return 0.0
    d = found.difference
    bound = d.low if side == "low" else d.high
    return 0.0 if bound is None else abs(bound - d.value)


def _axis(ax: Axes, labels: Sequence[str]) -> None:
    ax.axhline(0, color="grey", lw=0.8)
    # A simulator's identity names its model spec (a path or URL): labels that long squeeze
    # the axes to nothing.
    names = short_labels(labels, TICK_CHARS)
    ticks = [names[label] for label in labels]
    ax.set_xticks(range(len(labels)), ticks, rotation=20, ha="right", fontsize=7)
    ax.grid(alpha=0.3, axis="y")


def _gain_figure(result: FidelityResult) -> Figure:
    rows = result.report.sources
    labels = [r.source for r in rows]
    figure = new_figure(2 * PANEL_W * 1.2, PANEL_H * 1.2)
    left, right = figure.subplots(1, 2, squeeze=True)
    for ax, found, what in (
        (left, [r.gain_pass for r in rows], "pass rate"),
        (right, [r.gain_share for r in rows], "tests passed"),
    ):
        _errorbars(ax, found)
        _axis(ax, labels)
        ax.set_title(f"gain in {what} over no feedback", fontsize=9)
        ax.set_ylabel("points")
    boot = result.report.bootstrap
    figure.suptitle(
        f"Gain per feedback source, pooled over targets ({boot.level:.0%} bootstrap "
        f"interval over {UNIT})",
        fontsize=11,
    )
    return figure


def _pairs_figure(result: FidelityResult) -> Figure:
    by_task = result.report.pairs_by_task
    tasks = list(by_task)
    others = list(dict.fromkeys(p.other for pairs in by_task.values() for p in pairs))
    figure = new_figure(max(PANEL_W, 0.9 * len(tasks) + 2), PANEL_H * 1.2)
    ax = figure.subplots()
    palette = rcParams["axes.prop_cycle"].by_key()["color"]
    names = short_labels(others, LEGEND_CHARS)
    width = 0.8 / max(1, len(others))
    for k, other in enumerate(others):
        diffs = [next((p.share_diff for p in by_task[t] if p.other == other), None) for t in tasks]
        shift = (k - (len(others) - 1) / 2) * width
        _errorbars(ax, diffs, shift, label=names[other], color=palette[k % len(palette)])
    _axis(ax, tasks)
    ax.set_ylabel("person minus other, tests passed (points)")
    if others:
        ax.legend(fontsize=7)
    ax.set_title("The person against each other source, per task", fontsize=9)
    return figure
