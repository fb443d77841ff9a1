"""`convtui report --correlate` and `--plot` on a real SQLite store from a scripted
`bench live` run (no static results exist in it: `bench static` does not write any yet)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from support.cli import env, invoke
from support.data import needs_bigcodebench
from support.live import FAILS, benched
from support.scripted import script

pytestmark = needs_bigcodebench

NO_STATIC_LINE = (
    "live vs static rank correlation: no static (replayed, ConvCodeBench) results in this "
    "database: there is nothing to correlate the live scores with"
)


@pytest.fixture(scope="module")
def two_settings_db(tmp_path_factory) -> Path:
    """One scripted model, two tasks, two feedback settings (so two panels)."""
    folder = tmp_path_factory.mktemp("flags")
    model = script(folder / "fails.jsonl", [FAILS])
    db = folder / "results.db"
    for feedback in ("CF,EF:full", "CF"):
        run = ["--ids", "2,3", "--turns", "1", "--feedback", feedback, "--protocol", "convtui"]
        benched(db, "--model", model, run=run)
    return db


def convtui(*args: str) -> subprocess.CompletedProcess[str]:
    return invoke(*args, environ={"COLUMNS": "200"})


def test_correlate_without_static_results_says_so_and_exits_0(two_settings_db):
    done = convtui("report", "--db", str(two_settings_db), "--correlate")
    assert done.returncode == 0, done.stderr
    assert NO_STATIC_LINE in done.stdout.splitlines()
    assert "nan" not in done.stdout.lower()


def test_correlate_json_puts_one_reason_per_setting_and_metric(two_settings_db):
    done = convtui("report", "--db", str(two_settings_db), "--correlate", "--json")
    assert done.returncode == 0, done.stderr
    correlation = json.loads(done.stdout)["correlation"]
    assert correlation["static_columns"] == 0
    rows = correlation["rows"]
    assert {(r["feedback"], r["metric"]) for r in rows} == {
        (f, m) for f in ("CF,EF:full", "CF") for m in ("MRR", "Recall")
    }
    for row in rows:
        assert row["spearman_rho"] is None and row["kendall_tau"] is None and row["n"] == 0
        assert row["reason"] == correlation["note"]


def test_plot_writes_the_pass_curves_and_says_why_there_is_no_scatter(two_settings_db, tmp_path):
    from matplotlib.image import imread

    from convtui.benchmarks.reports.plots import DPI, NO_SCATTER, PANEL_H, PANEL_W

    figures = tmp_path / "figures"
    done = convtui("report", "--db", str(two_settings_db), "--plot", str(figures))
    assert done.returncode == 0, done.stderr
    png, svg = figures / "results-pass-at-turn.png", figures / "results-pass-at-turn.svg"
    assert sorted(figures.iterdir()) == [png, svg]
    assert f"plots: {png}, {svg}" in done.stdout
    assert NO_SCATTER in done.stdout
    assert png.stat().st_size > 0 and svg.stat().st_size > 0
    height, width = imread(png).shape[:2]  # two feedback settings: two panels in a row
    assert (width, height) == (round(2 * PANEL_W * DPI), round(PANEL_H * DPI))
    assert ET.parse(svg).getroot().tag.endswith("svg")


def test_plot_paths_are_in_the_json_output(two_settings_db, tmp_path):
    done = convtui("report", "--db", str(two_settings_db), "--plot", str(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [Path(p).name for p in data["plots"]] == [
        "results-pass-at-turn.png",
        "results-pass-at-turn.svg",
    ]
    assert len(data["plots_skipped"]) == 1 and "correlation" not in data


def test_report_without_plot_never_imports_matplotlib(two_settings_db):
    probe = (
        "import sys\nfrom pathlib import Path\n"
        "from convtui.benchmarks.commands.report import report_command\n"
        f"report_command(Path({str(two_settings_db)!r}), None, None, True, correlate=True)\n"
        "assert 'matplotlib' not in sys.modules, 'matplotlib was imported'\n"
    )
    # A process of its own: what this process imported says nothing.
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env(), check=False
    )
    assert done.returncode == 0, done.stderr


def test_a_report_on_the_embedded_model_says_in_a_line_why_it_solves_nothing(
    two_settings_db, tmp_path
):
    """The README's first command reports on local:smollm2; its zeros are expected, and the
    report says so (here the scripted run, renamed: what is reported is the model's name)."""
    plain = convtui("report", "--db", str(two_settings_db), "--out", str(tmp_path))
    assert plain.returncode == 0, plain.stderr
    assert "local:smollm2" not in plain.stdout
    db = tmp_path / "results.db"
    with sqlite3.connect(two_settings_db) as source, sqlite3.connect(db) as conn:
        source.backup(conn)
        conn.execute("UPDATE sessions SET model = 'local:smollm2'")
    done = convtui("report", "--db", str(db))
    assert done.returncode == 0, done.stderr
    [line] = [line for line in done.stdout.splitlines() if "local:smollm2 is" in line]
    assert line.startswith("note: local:smollm2 is the embedded 135M-parameter model")
    assert "far too small to solve these tasks" in line and "--model" in line
    assert done.stdout.index(line) < done.stdout.index("Pass@1")
