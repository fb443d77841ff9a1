"""``convtui report --plot DIR``: the report's figures as PNG and SVG, drawn on matplotlib's
Agg canvas (no display needed; pyplot and its global figure state are never touched).
Imported only for ``--plot``: matplotlib is slow to import.

- ``<stem>-pass-at-turn.{png,svg}``: Pass@1 (%) after each turn, one panel per feedback
  configuration Ω, one line per model (and protocol); live solid, static (replayed) dashed;
  where the report drew intervals, each line in a shaded band of its 95% intervals over
  tasks (turns without one, too few tasks or no spread, are left out of the band).
- ``<stem>-live-vs-static-mrr.{png,svg}``: one point per model, live MRR against static MRR,
  the Spearman and Kendall correlation in the title; only when some model has both.
- ``<stem>-codeif-rounds.{png,svg}``: CodeIF-Bench IA, CA and IFR (%) per round, a panel
  each, one line per model (static conversations solid, dynamic dashed); the authors' dynamic
  rows (report.py's pairs of turns) are drawn at each pair's middle ("1-2" at 1.5), their
  "avg" row left out; only when CodeIF results exist."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from matplotlib import rcParams
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from convtui.benchmarks.reports.codeif_report import CodeifGroup
from convtui.benchmarks.reports.correlate import CorrelationRow
from convtui.benchmarks.reports.report import Report, StaticColumn, report_file_names
from convtui.core.codeif.authors import Cell
from convtui.core.codeif.authors_dynamic import AVERAGE
from convtui.core.settings.omega import ALL_CONFIGS

if TYPE_CHECKING:
    from convtui.core.metrics.stats import Estimate

# Every panel is this size in inches at DPI dots per inch, and figures are saved without
# tight cropping, so a figure of R x C panels is exactly C*PANEL_W*DPI x R*PANEL_H*DPI pixels.
PANEL_W, PANEL_H, DPI = 4.8, 3.6, 100
MAX_COLUMNS = 3
NO_SCATTER = "live-vs-static MRR scatter not written: no static (replayed) results to compare"
NO_PAIRS = (
    "live-vs-static MRR scatter not written: no model has both live and static (replayed) "
    "results under one Ω and protocol"
)
_ORDER = {c.label: i for i, c in enumerate(ALL_CONFIGS)}
# The longest label a legend shows whole, about a panel's width in its small type: model
# specs are paths and URLs, and a wider label is clipped at both ends of the figure.
LABEL_CHARS = 60


def _cut_middle(label: str, most: int) -> str:
    """``label`` cut in its middle to ``most`` characters, so that both ends stay: a model's
    path keeps its root and its checkpoint's name, a URL its host and its route."""
    if len(label) <= most:
        return label
    keep = (most - 1) // 2
    return label[:keep] + "…" + label[len(label) - (most - 1 - keep) :]


def short_labels(labels: Iterable[str], most: int = LABEL_CHARS) -> dict[str, str]:
    """Each of ``labels`` cut in its middle to ``most`` characters, except those that would
    then read alike (two checkpoints that differ only in the middle of their paths): those
    stay whole, since a legend keeps one entry per label."""
    cut = {label: _cut_middle(label, most) for label in labels}
    seen = Counter(cut.values())
    return {label: short if seen[short] == 1 else label for label, short in cut.items()}


def grid(panels: int) -> tuple[int, int]:
    """(rows, columns) for ``panels`` panels, at most MAX_COLUMNS a row."""
    columns = max(1, min(panels, MAX_COLUMNS))
    return max(1, math.ceil(panels / columns)), columns


def write_plots(
    report: Report,
    static: Sequence[StaticColumn],
    correlations: Sequence[CorrelationRow],
    folder: Path,
    stem: str,
    codeif_groups: Sequence[CodeifGroup] = (),
) -> tuple[list[Path], list[str]]:
    """Write the figures under ``folder``, named ``<stem>-<figure>`` with the database's name
    ``stem`` written once (benchmarks/reports/report.py ``report_file_names``); return the paths
    written and one line for each figure left out, saying why."""
    folder.mkdir(parents=True, exist_ok=True)
    names = report_file_names(stem, ["codeif-rounds", "pass-at-turn", "live-vs-static-mrr"])
    written: list[Path] = []
    notes: list[str] = []
    if codeif_groups:
        written += save_figure(_codeif_figure(codeif_groups), folder / names["codeif-rounds"])
    if not report.columns and not static:  # CodeIF-Bench results only
        return written, notes
    written += save_figure(_pass_figure(report, static), folder / names["pass-at-turn"])
    if not static:
        return written, [NO_SCATTER]
    if not _pairs(report, static):  # static results only: the axes would be empty
        return written, [NO_PAIRS]
    scatter = _scatter_figure(report, static, correlations)
    written += save_figure(scatter, folder / names["live-vs-static-mrr"])
    return written, notes


def new_figure(width: float, height: float) -> Figure:
    """A figure of ``width`` x ``height`` inches on its own Agg canvas (every report figure's
    look: ``convtui study report --plot`` draws on these too)."""
    # Constrained layout fits labels inside the figure without changing its size.
    figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def save_figure(figure: Figure, base: Path) -> list[Path]:
    """``figure`` written as ``base``.png and ``base``.svg; the paths written."""
    paths = [base.with_suffix(".png"), base.with_suffix(".svg")]
    for path in paths:
        figure.savefig(path, dpi=DPI)
    return paths


def save_figures(figures: Mapping[str, Figure], folder: Path, stem: str) -> list[Path]:
    """Each of ``figures`` written under ``folder`` as ``<stem>-<name>`` (``report_file_names``),
    PNG and SVG, in their order; the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    names = report_file_names(stem, list(figures))
    written: list[Path] = []
    for name, figure in figures.items():
        written += save_figure(figure, folder / names[name])
    return written


def _pass_figure(report: Report, static: Sequence[StaticColumn]) -> Figure:
    feedbacks = sorted(
        {c.feedback for c in report.columns} | {s.feedback for s in static},
        key=lambda f: (_ORDER.get(f, 99), f),
    )
    rows, columns = grid(len(feedbacks))
    figure = new_figure(columns * PANEL_W, rows * PANEL_H)
    axes = figure.subplots(rows, columns, squeeze=False)
    protocols = {c.protocol for c in report.columns} | {s.protocol for s in static}
    turns = max([report.max_turns, *(len(s.pass_at) + 1 for s in static)])
    colours: dict[str, str] = {}
    palette = rcParams["axes.prop_cycle"].by_key()["color"]
    names = short_labels([c.model for c in report.columns] + [s.model for s in static])

    def colour(model: str) -> str:
        return colours.setdefault(model, palette[len(colours) % len(palette)])

    for i, feedback in enumerate(feedbacks):
        ax = axes[i // columns][i % columns]
        for c in report.columns:
            if c.feedback == feedback:
                model = names[c.model]
                label = model if len(protocols) == 1 else f"{model} ({c.protocol})"
                _curve(ax, c.pass_at, colour(c.model), "-", f"{label} live")
                _band(ax, c.intervals.pass_at if c.intervals else (), colour(c.model))
        for s in static:
            if s.feedback == feedback:
                by = f", {s.feedback_by}" if s.feedback_by else ""
                label = f"{names[s.model]} static ({s.reference}, {s.context}{by})"
                # print_results' static rows start at turn 1.
                _curve(ax, s.pass_at, colour(s.model), "--", label, first_turn=1)
                _band(ax, s.intervals.pass_at if s.intervals else (), colour(s.model), 1)
        ax.set_xticks(range(turns))
        ax.set_title(feedback, fontsize=10)
        ax.set_xlabel("turn")
        ax.set_ylabel("Pass@1 (%)")
        ax.set_ylim(0, 100)
        ax.grid(alpha=0.3)
    for j in range(len(feedbacks), rows * columns):
        axes[j // columns][j % columns].set_visible(False)
    # One legend below the panels, outside every axes: inside one it hid the curves that sit
    # on the 0 % line, where weak models are. Each model's line looks alike in every panel.
    shown: dict[str, Artist] = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            shown.setdefault(label, handle)
    if shown:
        figure.legend(
            list(shown.values()),
            list(shown),
            loc="outside lower center",
            # A column of the legend per column of panels: each has a panel's width.
            ncols=min(len(shown), columns),
            fontsize=7,
        )
    banded = any(c.intervals for c in report.columns) or any(s.intervals for s in static)
    bands = ", bands: 95% intervals over tasks" if banded else ""
    figure.suptitle(f"Pass@1 after each turn (live solid, static dashed{bands})", fontsize=11)
    return figure


def _band(ax, estimates: Sequence[Estimate], colour: str, first_turn: int = 0) -> None:
    """A curve's intervals as a shaded band; a turn without one (n/a) breaks the band there
    rather than drawing a width it does not have."""
    if not estimates:
        return
    turns = list(range(first_turn, first_turn + len(estimates)))
    nan = float("nan")
    low = [nan if e.low is None else 100 * e.low for e in estimates]
    high = [nan if e.high is None else 100 * e.high for e in estimates]
    ax.fill_between(turns, low, high, color=colour, alpha=0.15, linewidth=0)


def _curve(
    ax, pass_at: Sequence[float], colour: str, style: str, label: str, first_turn: int = 0
) -> None:
    turns = list(range(first_turn, first_turn + len(pass_at)))
    ax.plot(turns, [100 * v for v in pass_at], style, color=colour, marker="o", ms=3, label=label)


def _pairs(report: Report, static: Sequence[StaticColumn]) -> list[tuple[float, StaticColumn]]:
    """(live MRR, static column) for each static column whose model has a live column under
    the same Ω and protocol: the scatter's points."""
    live = {(c.model, c.feedback, c.protocol): c.mrr for c in report.columns}
    return [(live[key], s) for s in static if (key := (s.model, s.feedback, s.protocol)) in live]


def _scatter_figure(
    report: Report, static: Sequence[StaticColumn], correlations: Sequence[CorrelationRow]
) -> Figure:
    figure = new_figure(PANEL_W * 1.25, PANEL_H * 1.25)
    ax = figure.subplots()
    palette = rcParams["axes.prop_cycle"].by_key()["color"]
    models = sorted({s.model for s in static})
    for x, s in _pairs(report, static):
        ax.scatter(100 * x, 100 * s.mrr, color=palette[models.index(s.model) % len(palette)])
        ax.annotate(f"{s.model} · {s.feedback}", (100 * x, 100 * s.mrr), fontsize=6)
    ax.set_xlabel("live MRR (%)")
    ax.set_ylabel("static MRR (%)")
    ax.set_title(_scatter_title(correlations), fontsize=8)
    ax.grid(alpha=0.3)
    return figure


def _scatter_title(correlations: Sequence[CorrelationRow]) -> str:
    lines = ["live vs static MRR"]
    for row in correlations:
        if row.metric != "MRR" or not row.reference:
            continue
        r = row.result
        if r.spearman_rho is None or r.kendall_tau is None:
            lines.append(f"{row.feedback}: {r.reason}")
        else:
            lines.append(
                f"{row.feedback}: Spearman ρ={r.spearman_rho:+.2f}, "
                f"Kendall τ={r.kendall_tau:+.2f} (n={r.n})"
            )
    return "\n".join(lines)


def _codeif_figure(groups: Sequence[CodeifGroup]) -> Figure:
    metrics = (("ia", "IA"), ("ca", "CA"), ("ifr", "IFR"))
    figure = new_figure(len(metrics) * PANEL_W, PANEL_H)
    axes = figure.subplots(1, len(metrics), squeeze=False)[0]
    palette = rcParams["axes.prop_cycle"].by_key()["color"]
    models = sorted({g.model for g in groups})
    names = short_labels(models)
    protocols = {g.protocol for g in groups}
    definitions = {g.metrics for g in groups}
    most = max(math.ceil(x) for g in groups for x, _ in _codeif_points(g))
    for ax, (metric, name) in zip(axes, metrics, strict=True):
        for g in groups:
            label = f"{names[g.model]} {g.mode}"
            label += f" ({g.protocol})" if len(protocols) > 1 else ""
            label += f" [{g.metrics}]" if len(definitions) > 1 else ""
            label += " (pairs of turns)" if g.labels else ""
            shown = [(x, cells[metric]) for x, cells in _codeif_points(g) if metric in cells]
            ax.plot(
                [number for number, _ in shown],
                [100 * cell.value for _, cell in shown],
                {"static": "-", "dynamic": "--"}.get(g.mode, ":"),
                color=palette[models.index(g.model) % len(palette)],
                marker="o",
                ms=3,
                label=label,
            )
        ax.set_xticks(range(1, most + 1))
        ax.set_title(f"{name} per round", fontsize=10)
        ax.set_xlabel("round")
        ax.set_ylabel(f"{name} (%)")
        ax.set_ylim(0, 100)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    named = ", ".join(sorted(definitions))
    figure.suptitle(
        f"CodeIF-Bench, metrics: {named} (static solid, dynamic dashed, replay dotted)",
        fontsize=11,
    )
    return figure


def _codeif_points(group: CodeifGroup) -> list[tuple[float, Mapping[str, Cell]]]:
    """Where each of a group's rows is drawn: round i at i; a pair of turns "a-b" at its
    middle; report.py's "avg" row nowhere."""
    if not group.labels:
        return [(i + 1, cells) for i, cells in enumerate(group.rounds)]
    return [
        (int(label.split("-")[0]) + 0.5, cells)
        for label, cells in zip(group.labels, group.rounds, strict=True)
        if label != AVERAGE
    ]
