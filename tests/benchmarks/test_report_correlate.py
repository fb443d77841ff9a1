"""`convtui report --correlate` and `--plot` on plain values (no store): live and static
columns meet per Ω, and the figures are real PNG and SVG files of a known size."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from support.columns import live_column, static_column

from convtui.benchmarks.reports.correlate import NO_STATIC, correlate_columns, correlation_json
from convtui.benchmarks.reports.report import Report

pytest.importorskip("scipy")  # the exec extra

CF_EF = "CF,EF:full"
CF = "CF"
# (model, Ω) -> its live (MRR, Recall) and its static (MRR, Recall): the pairs correlated.
SCORES = {
    ("a", CF_EF): ((0.9, 1.0), (0.8, 1.0)),
    ("b", CF_EF): ((0.7, 0.75), (0.6, 0.75)),
    ("c", CF_EF): ((0.5, 0.5), (0.7, 0.5)),
    ("a", CF): ((0.4, 0.5), (0.5, 0.5)),
    ("b", CF): ((0.2, 0.25), (0.3, 0.5)),
}
LIVE = tuple(live_column(*key, *scores) for key, (scores, _) in SCORES.items())
STATIC = tuple(static_column(*key, *scores) for key, (_, scores) in SCORES.items())


def test_each_feedback_setting_is_correlated_over_its_own_models():
    rows = {(r.feedback, r.metric): r for r in correlate_columns(LIVE, STATIC)}
    assert set(rows) == {(f, m) for f in (CF_EF, CF) for m in ("MRR", "Recall")}
    mrr = rows[(CF_EF, "MRR")].result
    assert mrr.models == ("a", "b", "c")
    # live ranks a=3 b=2 c=1, static a=3 b=1 c=2: sum d^2 = 2, rho = 1 - 12 / 24.
    assert mrr.spearman_rho == pytest.approx(0.5)
    assert rows[(CF_EF, "Recall")].result.spearman_rho == pytest.approx(1.0)
    assert rows[(CF, "MRR")].result.reason == (
        "needs at least 3 models with both live and static results; found 2"
    )
    data = correlation_json(correlate_columns(LIVE, STATIC), len(STATIC))
    assert data["note"] is None
    assert {row["reference"] for row in data["rows"]} == {"ref-model"}


def test_without_static_results_every_row_says_there_is_nothing_to_compare():
    rows = correlate_columns(LIVE, ())
    assert {(r.feedback, r.metric) for r in rows} == {
        (f, m) for f in (CF_EF, CF) for m in ("MRR", "Recall")
    }
    assert {r.result.reason for r in rows} == {NO_STATIC}
    data = correlation_json(rows, 0)
    assert data["note"] == NO_STATIC
    assert all(row["spearman_rho"] is None and row["reason"] == NO_STATIC for row in data["rows"])


def test_plots_with_static_results_include_the_scatter(tmp_path):
    pytest.importorskip("matplotlib")
    from matplotlib.image import imread

    from convtui.benchmarks.reports.plots import DPI, PANEL_H, PANEL_W, write_plots

    report = Report(columns=LIVE, max_turns=3)
    written, notes = write_plots(
        report, STATIC, correlate_columns(LIVE, STATIC), tmp_path / "figs", "results"
    )
    assert notes == []
    assert [p.name for p in written] == [
        "results-pass-at-turn.png",
        "results-pass-at-turn.svg",
        "results-live-vs-static-mrr.png",
        "results-live-vs-static-mrr.svg",
    ]
    for path in written:
        assert path.stat().st_size > 0
    # Two Ω, so one row of two panels.
    height, width = imread(written[0]).shape[:2]
    assert (width, height) == (round(2 * PANEL_W * DPI), round(PANEL_H * DPI))
    svg = ET.parse(written[3]).getroot()
    assert svg.tag.endswith("svg")
    assert "Spearman" in written[3].read_text()  # the correlation is in the title


def test_plots_without_static_results_skip_the_scatter_and_say_why(tmp_path):
    pytest.importorskip("matplotlib")
    from convtui.benchmarks.reports.plots import NO_SCATTER, write_plots

    written, notes = write_plots(Report(columns=LIVE, max_turns=3), (), (), tmp_path, "r")
    assert [p.name for p in written] == ["r-pass-at-turn.png", "r-pass-at-turn.svg"]
    assert notes == [NO_SCATTER]


@pytest.mark.parametrize(("panels", "grid"), [(1, (1, 1)), (3, (1, 3)), (4, (2, 3)), (9, (3, 3))])
def test_panels_are_laid_out_at_most_three_a_row(panels, grid):
    pytest.importorskip("matplotlib")
    from convtui.benchmarks.reports.plots import grid as layout

    assert layout(panels) == grid


def test_plots_of_static_results_only_skip_the_scatter_and_say_why(tmp_path):
    """No live column to pair with: the scatter would be empty axes, so it is not drawn."""
    pytest.importorskip("matplotlib")
    from convtui.benchmarks.reports.plots import NO_PAIRS, write_plots

    written, notes = write_plots(Report((), 0), STATIC, (), tmp_path, "r")
    assert [p.name for p in written] == ["r-pass-at-turn.png", "r-pass-at-turn.svg"]
    assert notes == [NO_PAIRS]


def test_the_pass_at_turn_legend_covers_no_panel():
    """Curves of weak models lie on the 0 % line: no legend may sit on any panel."""
    pytest.importorskip("matplotlib")
    from convtui.benchmarks.reports.plots import _pass_figure

    nothing = (live_column("z", CF_EF, 0.0, 0.0), live_column("z", CF, 0.0, 0.0))
    figure = _pass_figure(Report(columns=LIVE + nothing, max_turns=3), STATIC)
    figure.canvas.draw()
    panels = [ax for ax in figure.axes if ax.get_visible()]
    legends = [*figure.legends, *(ax.get_legend() for ax in panels if ax.get_legend())]
    assert legends
    for legend in legends:
        box = legend.get_window_extent()
        for ax in panels:
            assert not box.overlaps(ax.get_window_extent()), ax.get_title()


def test_a_model_named_by_a_long_path_keeps_its_legend_inside_the_figure():
    """A model's spec is often a path or a URL: its label is cut in the middle, both ends
    kept, and the legend stays within the figure instead of being clipped at both edges."""
    pytest.importorskip("matplotlib")
    from convtui.benchmarks.reports.plots import _pass_figure

    path = (
        "/models/kept-in-a-folder-named-as-long-as-real-model-paths-get/"
        "and-deeper-still/checkpoint-1200.gguf"
    )
    columns = (live_column(path, CF_EF, 0.2, 0.5), live_column("b", CF_EF, 0.5, 0.5))
    figure = _pass_figure(Report(columns=columns, max_turns=3), ())
    figure.canvas.draw()
    [legend] = figure.legends
    box = legend.get_window_extent()
    assert box.x0 >= 0 and box.x1 <= figure.bbox.width, (box, figure.bbox)
    [label] = [t.get_text() for t in legend.get_texts() if t.get_text() != "b live"]
    assert label.startswith("/models/kept-in") and label.endswith("checkpoint-1200.gguf live")
    assert "…" in label


def test_two_long_paths_that_differ_only_in_the_middle_keep_an_entry_each():
    """Cut in the middle they would read alike, and a legend keeps one entry per label: such
    names stay whole, every other long one is still cut."""
    pytest.importorskip("matplotlib")
    from convtui.benchmarks.reports.plots import _pass_figure

    folder = "/models/kept-in-a-folder-named-as-long-as-real-model-paths-get"
    tail = "checkpoints/final-after-the-last-epoch/model-q4.gguf"
    small, large = (f"{folder}/llama-{size}/{tail}" for size in ("7b", "13b"))
    other = f"{folder}/and-deeper-still/another-checkpoint.gguf"
    columns = tuple(live_column(m, CF_EF, 0.2, 0.5) for m in (small, large, other))
    figure = _pass_figure(Report(columns=columns, max_turns=3), ())
    [legend] = figure.legends
    labels = [t.get_text() for t in legend.get_texts()]
    assert f"{small} live" in labels and f"{large} live" in labels
    [cut] = [label for label in labels if "…" in label]
    assert cut.endswith("another-checkpoint.gguf live")
