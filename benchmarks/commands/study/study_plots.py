"""``convtui study report --plot DIR``: the report's figures as PNG and SVG, drawn as
``convtui report``'s are (benchmarks/reports/plots.py: its figure size, canvas and file
naming). Imported only for ``--plot``: matplotlib is slow to import.

- ``<stem>-study-scores.{png,svg}``: MRR and Recall (%) per annotator, a row of panels per
  model (the study's own, then each target), the simulated users' on the same tasks beside
  each annotator's (hatched);
- ``<stem>-study-solved.{png,svg}``: annotators x tasks, whether each finished session
  solved its task and in how many turns, blank where there is none; the agreement in the
  title."""

from __future__ import annotations

import math
from pathlib import Path

from matplotlib import rcParams
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap

from convtui.benchmarks.commands.study.study_report_result import StudyReport
from convtui.benchmarks.commands.study.study_scores import Scoring
from convtui.benchmarks.reports.plots import (
    PANEL_H,
    PANEL_W,
    new_figure,
    save_figures,
    short_labels,
)
from convtui.core.plural import counted
from convtui.core.studies.agreement import Alpha, outcome_matrix
from convtui.core.studies.outcomes import Scores

_METRICS = (("mrr", "MRR"), ("recall", "Recall"))
# Unsolved, solved; a cell with no finished session is left blank (NaN).
_SOLVED_COLOURS = ListedColormap(["#d9735b", "#6aa56a"])


def write_study_plots(report: StudyReport, folder: Path) -> list[Path]:
    """Write both figures under ``folder``; the paths written."""
    figures = {"study-scores": _scores_figure(report), "study-solved": _solved_figure(report)}
    return save_figures(figures, folder, report.db.stem)


def _scores_figure(report: StudyReport):
    scorings = report.scorings
    figure = new_figure(2 * PANEL_W * 1.2, len(scorings) * PANEL_H)
    axes = figure.subplots(len(scorings), len(_METRICS), squeeze=False)
    for row, scoring in zip(axes, scorings, strict=True):
        for ax, (metric, name) in zip(row, _METRICS, strict=True):
            _bars(ax, scoring, metric)
            how = f"replayed against {scoring.model}" if scoring.replayed else "own sessions"
            ax.set_title(f"{name}, {how}", fontsize=9)
            ax.set_ylabel(f"{name} (%)")
            ax.set_ylim(0, 100)
            ax.grid(alpha=0.3, axis="y")
    handles, labels = axes[0][0].get_legend_handles_labels()
    if handles:
        figure.legend(handles, labels, loc="outside lower center", ncols=2, fontsize=7)
    figure.suptitle(f"Study {report.study.name!r}: MRR and Recall per annotator", fontsize=11)
    return figure


def _bars(ax: Axes, scoring: Scoring, metric: str) -> None:
    rows = [*scoring.rows, scoring.everyone]
    series: list[tuple[str, list[Scores | None], str]] = [
        ("annotator", [r.scores for r in rows], "")
    ]
    names = short_labels(sim.name for sim in scoring.simulated)
    for i, sim in enumerate(scoring.simulated):
        series.append((f"{names[sim.name]} (same tasks)", [r.simulated[i] for r in rows], "//"))
    palette = rcParams["axes.prop_cycle"].by_key()["color"]
    width = 0.8 / len(series)
    for k, (label, values, hatch) in enumerate(series):
        xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(rows))]
        heights = [math.nan if v is None else 100 * getattr(v, metric) for v in values]
        ax.bar(xs, heights, width, label=label, color=palette[k % len(palette)], hatch=hatch)
    ax.set_xticks(range(len(rows)), [r.annotator for r in rows], fontsize=7)


def _solved_figure(report: StudyReport):
    people = list(report.outcomes)
    tasks = report.tasks
    # The first passing turn, -1 when none; NaN where the annotator has no finished session.
    first = outcome_matrix(
        report.outcomes, tasks, lambda o: -1.0 if o.first_pass is None else float(o.first_pass)
    )
    solved = [[v if math.isnan(v) else float(v >= 0) for v in row] for row in first]
    figure = new_figure(
        max(PANEL_W, 0.6 * len(tasks) + 1.5), max(PANEL_H * 0.6, 0.4 * len(people) + 1.5)
    )
    ax = figure.subplots()
    ax.imshow(solved, cmap=_SOLVED_COLOURS, vmin=0, vmax=1, aspect="auto")
    for i, row in enumerate(first):
        for j, value in enumerate(row):
            if not math.isnan(value):
                text = f"T{int(value)}" if value >= 0 else "✗"
                ax.text(j, i, text, ha="center", va="center", fontsize=7)
    ax.set_xticks(range(len(tasks)), tasks, rotation=45, ha="right", fontsize=7)
    ax.set_yticks(range(len(people)), people, fontsize=8)
    found = report.agreement
    ax.set_title(
        "solved (first passing turn) or ✗ unsolved; blank: no finished session\n"
        f"alpha solved: {_alpha(found.solved)} · alpha turns: {_alpha(found.turns)} "
        f"({counted(len(found.tasks), 'overlapped task')}, {counted(found.pairs, 'pair')})",
        fontsize=8,
    )
    return figure


def _alpha(alpha: Alpha) -> str:
    return "undefined" if alpha.value is None else f"{alpha.value:.2f}"
