"""``convtui compare --plot DIR``: each pair's differences as a figure, a metric a row, the
point at the difference and a bar across its 95% interval over tasks, a line at zero, so a
reader sees at once which differences the tasks can tell from none. Drawn on the report's
figures (benchmarks/reports/plots.py); imported only for ``--plot``: matplotlib is slow to
import."""

from __future__ import annotations

from pathlib import Path

from convtui.benchmarks.reports.compare import CompareResult, PairResult
from convtui.benchmarks.reports.plots import PANEL_H, PANEL_W, new_figure, save_figure

ROW_INCHES = 0.32


def write_compare_plot(result: CompareResult, folder: Path, stem: str) -> list[Path]:
    """``DIR/<stem>-compare.png`` and ``.svg``: a panel per pair of sides (first − second);
    the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    pairs = _pairs(result)
    rows = len(result.metrics)
    height = max(PANEL_H, 1.2 + ROW_INCHES * rows)
    figure = new_figure(PANEL_W * 1.4, height * len(pairs))
    axes = figure.subplots(len(pairs), 1, squeeze=False)
    for ax, (first, second) in zip(axes[:, 0], pairs, strict=True):
        found = [_pair_of(m.pairs, first, second) for m in result.metrics]
        names = [m.metric.name for m in result.metrics]
        for y, pair in enumerate(found):
            difference = pair.comparison.difference
            value = 100 * difference.value
            if difference.low is not None and difference.high is not None:
                low, high = 100 * difference.low, 100 * difference.high
                ax.plot([low, high], [y, y], color="tab:blue", linewidth=2)
            told = pair.verdict != "cannot tell"
            ax.plot([value], [y], "o", color="tab:red" if told else "tab:gray")
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_yticks(range(len(names)), names)
        ax.invert_yaxis()
        ax.set_xlabel(f"{first} − {second} (points), 95% interval over tasks")
        ax.set_title(f"{_name(result, first)} − {_name(result, second)}", fontsize="small")
    figure.suptitle(
        f"Paired differences over {result.tasks} tasks (red: the exact test tells them apart)",
        fontsize="small",
    )
    return save_figure(figure, folder / f"{stem}-compare")


def _pairs(result: CompareResult) -> list[tuple[str, str]]:
    first = result.metrics[0]
    return [(p.first, p.second) for p in first.pairs]


def _pair_of(pairs: tuple[PairResult, ...], first: str, second: str) -> PairResult:
    return next(p for p in pairs if (p.first, p.second) == (first, second))


def _name(result: CompareResult, label: str) -> str:
    side = next(s for s in result.sides if s.label == label)
    return f"{label}: {side.name}" if len(side.name) <= 40 else label
