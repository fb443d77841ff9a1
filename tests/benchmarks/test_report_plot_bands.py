"""`convtui report --plot`: the pass-at-turn curves in shaded bands of their intervals over
tasks (issue 47, point 6), drawn from the report's own estimates; none without intervals."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import invoke
from support.verdicts import live, replay, tasks

from convtui.benchmarks.commands.report import make_report, static_results
from convtui.benchmarks.reports.intervals import report_with_intervals, static_with_intervals
from convtui.core.metrics.stats import Bootstrap
from convtui.sessions import Store

pytest.importorskip("matplotlib")  # the exec extra

PATTERNS = [(True,), (False, True), (False, False, True), (False, False, False)]
TASKS = tasks(20)
VERDICTS = {t: PATTERNS[i * 3 % 7 % 4] for i, t in enumerate(TASKS)}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "results.db"
    with Store.open(path) as store:
        references = live(store, "live-model", VERDICTS)
        replay(store, "target-model", references, {t: VERDICTS[t][::-1] for t in TASKS})
    return path


def bands(db: Path, bootstrap: Bootstrap | None) -> list[list[tuple[float, float, float]]]:
    """Each band of the pass-at-turn figure as (turn, low, high) per turn drawn."""
    from matplotlib.collections import PolyCollection

    from convtui.benchmarks.reports.plots import _pass_figure

    report, static = make_report(db, None), static_results(db, None)
    if bootstrap:
        report = report_with_intervals(report, bootstrap)
        static = static_with_intervals(static, bootstrap)
    (ax,) = [a for a in _pass_figure(report, static).axes if a.get_visible()]
    found = []
    for poly in ax.collections:
        assert isinstance(poly, PolyCollection)
        points = poly.get_paths()[0].vertices
        turns = sorted({round(x, 6) for x, _ in points})
        found.append(
            [
                (x, min(y for px, y in points if round(px, 6) == x),
                 max(y for px, y in points if round(px, 6) == x))
                for x in turns
            ]
        )  # fmt: skip
    return found


def test_each_curve_sits_in_a_band_of_its_intervals(db):
    bootstrap = Bootstrap(resamples=500, seed=1)
    report = report_with_intervals(make_report(db, None), bootstrap)
    (static,) = static_with_intervals(static_results(db, None), bootstrap)
    (column,) = report.columns
    live_band, static_band = bands(db, bootstrap)
    assert column.intervals is not None and static.intervals is not None
    want = [
        (float(t), 100 * e.low, 100 * e.high)
        for t, e in enumerate(column.intervals.pass_at)
        if e.low is not None and e.high is not None
    ]
    assert live_band == pytest.approx(want)
    # Static rows start at turn 1, as their curve does.
    assert static_band[0][0] == 1.0
    assert len(static_band) == sum(e.low is not None for e in static.intervals.pass_at)


def test_without_intervals_there_is_no_band(db):
    assert bands(db, None) == []


def test_report_plot_writes_the_banded_figure(db, tmp_path):
    figures = tmp_path / "figures"
    done = invoke("report", "--db", str(db), "--plot", str(figures), "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    # matplotlib writes each text into the SVG as a comment beside its glyphs.
    svg = (figures / "results-pass-at-turn.svg").read_text()
    assert "bands: 95% intervals over tasks" in svg
    assert svg.count("PolyCollection_") == 2  # the live band and the static one
