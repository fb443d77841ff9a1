"""`convtui report`'s intervals over tasks (issue 47, point 1): every Pass@1 row, MRR and
Recall of live and static columns, in text, JSON and CSV, equal to core/metrics/stats.py's
estimate on the per-task terms worked out here from the verdicts, seeded, and absent with
--no-intervals. The stores are written by hand (support/verdicts.py): no model, no executor."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import env, invoke
from support.verdicts import live, replay, tasks

from convtui.core.metrics.stats import Bootstrap, Clusters, estimate_means
from convtui.sessions import Store

TASKS = tasks(30)
# Each task's verdicts at turns 0, 1, 2 under convtui's protocol: a pattern per task, so
# tasks are solved at turn 0, 1, 2 or never, in uneven shares.
PATTERNS = [(True,), (False, True), (False, False, True), (False, False, False)]
LIVE = {t: PATTERNS[(i * 7) % 11 % 4] for i, t in enumerate(TASKS)}
# The target replays the live model's logs; its own verdicts per task.
TARGET = {t: PATTERNS[(i * 5) % 7 % 4] for i, t in enumerate(TASKS)}


def live_terms(verdicts: tuple[bool, ...], turns: int = 3) -> list[float]:
    """By hand, convtui's cumulative rule: solved by turn t (t = 0..2), 1/(k+1), solved."""
    first = verdicts.index(True) if True in verdicts else None
    passes = [float(first is not None and first <= t) for t in range(turns)]
    return [*passes, 0.0 if first is None else 1 / (first + 1), float(first is not None)]


def static_terms(target: tuple[bool, ...], reference: tuple[bool, ...]) -> list[float]:
    """By hand, print_results' static rule over three turns (the verdicts carried forward):
    rows t = 1, 2 pass when the target's turn t or the reference's turn 0 passed; MRR scans
    from the target's own turn 0 (compensate_init)."""
    t = [*target, *[target[-1]] * (3 - len(target))]
    r = [*reference, *[reference[-1]] * (3 - len(reference))]
    rows = [float(t[k] or r[0]) for k in (1, 2)]
    if r[0]:
        return [*rows, 1.0, 1.0]
    for k in range(3):
        if k > 0 and r[k - 1]:
            return [*rows, 1 / k, 1.0]
        if t[k]:
            return [*rows, 1 / (k + 1), 1.0]
    return [*rows, 0.0, 0.0]


def expected(rows: dict[str, list[float]], seed: int = 0) -> list[dict]:
    """stats.estimate_means on ``rows`` (task -> terms), as the report's JSON rounds it."""
    clusters = Clusters.from_rows(rows.items())
    found = estimate_means(clusters, Bootstrap(resamples=2000, seed=seed))
    return [{k: v for k, v in e.to_json().items() if k != "value"} for e in found]


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("intervals") / "results.db"
    with Store.open(path) as store:
        references = live(store, "live-model", LIVE)
        replay(store, "target-model", references, TARGET)
    return path


def report(db: Path, *args: str):
    done = invoke("report", "--db", str(db), *args)
    assert done.returncode == 0, done.stderr
    return done


def words(text: str) -> str:
    """``text`` with its lines joined: a caption wraps at its table's width."""
    return " ".join(text.split())


def test_live_json_intervals_equal_the_estimate_over_tasks_from_the_verdicts(db, tmp_path):
    data = json.loads(report(db, "--json", "--out", str(tmp_path)).stdout)
    (column,) = data["columns"]
    want = expected({t: live_terms(v) for t, v in LIVE.items()})
    assert column["pass_at_turn_interval"] == want[:3]
    assert column["mrr_interval"] == want[3]
    assert column["recall_interval"] == want[4]
    assert all(e["units"] == 30 and "reason" not in e for e in want)
    # The values beside them are the report's as before, inside their intervals.
    for value, interval in zip(column["pass_at_turn"], want[:3], strict=True):
        assert interval["low"] <= value <= interval["high"]
    assert data["uncertainty"] == {
        "method": "percentile bootstrap",
        "unit": "tasks",
        "level": 0.95,
        "resamples": 2000,
        "seed": 0,
        "min_units": 10,
    }


def test_static_json_intervals_equal_the_estimate_over_tasks_from_the_verdicts(db, tmp_path):
    data = json.loads(report(db, "--json", "--out", str(tmp_path)).stdout)
    (static,) = data["static"]
    want = expected({t: static_terms(TARGET[t], LIVE[t]) for t in TASKS})
    assert static["pass_at_turn_interval"] == want[:2]
    assert static["mrr_interval"] == want[2]
    assert static["recall_interval"] == want[3]


def test_the_csv_files_hold_the_bounds_after_the_values(db, tmp_path):
    report(db, "--out", str(tmp_path))
    want = expected({t: live_terms(v) for t, v in LIVE.items()})
    (row,) = csv.DictReader(io.StringIO((tmp_path / "results-mrr-recall.csv").read_text()))
    assert list(row)[:6] == ["model", "feedback", "protocol", "tasks", "mrr", "recall"]
    assert [float(row[k]) for k in ("mrr_low", "mrr_high", "recall_low", "recall_high")] == [
        want[3]["low"],
        want[3]["high"],
        want[4]["low"],
        want[4]["high"],
    ]
    assert row["interval_reason"] == ""
    rows = list(csv.reader(io.StringIO((tmp_path / "results-pass-at-turn.csv").read_text())))
    name = "live-model CF,EF:full convtui"
    assert rows[0] == ["turn", name, f"{name} low", f"{name} high"]
    assert [[float(v) for v in r[2:]] for r in rows[1:]] == [
        [w["low"], w["high"]] for w in want[:3]
    ]
    text = (tmp_path / "results-static-pass-at-turn.csv").read_text()
    static = list(csv.reader(io.StringIO(text)))
    name = "target-model CF,EF:full static (live-model, markov) convtui"
    assert static[0] == ["turn", name, f"{name} low", f"{name} high"]
    want = expected({t: static_terms(TARGET[t], LIVE[t]) for t in TASKS})
    assert [[float(v) for v in r[2:]] for r in static[1:]] == [
        [w["low"], w["high"]] for w in want[:2]
    ]


def test_the_text_tables_show_each_interval_and_name_the_method(db, tmp_path):
    text = report(db, "--out", str(tmp_path)).stdout
    want = expected({t: live_terms(v) for t, v in LIVE.items()})
    mrr = want[3]
    assert f"{mrr['low']:.1f}–{mrr['high']:.1f}" in text
    method = "low–high: 95% percentile bootstrap over tasks (2000 resamples, seed 0)."
    # Under each table that shows intervals: live and static, Pass@1 and MRR/Recall.
    assert words(text).count(method) == 4


def test_the_same_seed_gives_the_same_bytes_and_another_seed_other_bounds(db, tmp_path):
    first, again, other = (tmp_path / name for name in ("a", "b", "c"))
    report(db, "--out", str(first), "--seed", "7")
    report(db, "--out", str(again), "--seed", "7")
    report(db, "--out", str(other), "--seed", "8")
    for name in ("results-report.json", "results-pass-at-turn.csv", "results-mrr-recall.csv"):
        assert (first / name).read_bytes() == (again / name).read_bytes()
    a = json.loads((first / "results-report.json").read_text())
    c = json.loads((other / "results-report.json").read_text())
    assert a["uncertainty"]["seed"] == 7 and c["uncertainty"]["seed"] == 8
    assert a["columns"][0]["mrr"] == c["columns"][0]["mrr"]  # the values never move
    bounds = [
        [e["low"], e["high"]]
        for data in (a, c)
        for col in data["columns"]
        for e in [*col["pass_at_turn_interval"], col["mrr_interval"]]
    ]
    assert bounds[: len(bounds) // 2] != bounds[len(bounds) // 2 :]
    assert (
        a["columns"][0]["mrr_interval"]
        == expected({t: live_terms(v) for t, v in LIVE.items()}, seed=7)[3]
    )


def test_resamples_are_the_ones_asked_for(db, tmp_path):
    data = json.loads(report(db, "--json", "--out", str(tmp_path), "--resamples", "50").stdout)
    assert data["uncertainty"]["resamples"] == 50
    rows = {t: live_terms(v) for t, v in LIVE.items()}
    found = estimate_means(Clusters.from_rows(rows.items()), Bootstrap(resamples=50))
    assert data["columns"][0]["mrr_interval"]["low"] == round(100 * found[3].low, 1)


def test_no_intervals_prints_and_writes_none_and_keeps_every_value(db, tmp_path):
    with_intervals = json.loads(report(db, "--json", "--out", str(tmp_path / "a")).stdout)
    plain = json.loads(report(db, "--json", "--no-intervals", "--out", str(tmp_path / "b")).stdout)
    assert plain["uncertainty"] is None
    for key in ("columns", "static"):
        for bare, full in zip(plain[key], with_intervals[key], strict=True):
            assert not any(k.endswith("_interval") for k in bare)
            # Every existing key keeps its value; intervals only add keys.
            assert {k: v for k, v in full.items() if not k.endswith("_interval")} == bare
    text = report(db, "--no-intervals", "--out", str(tmp_path / "c")).stdout
    assert "bootstrap" not in text and "–" not in text
    header = (tmp_path / "c" / "results-mrr-recall.csv").read_text().splitlines()[0]
    assert header == "model,feedback,protocol,tasks,mrr,recall"


def test_too_few_tasks_give_n_a_and_the_reason_once(tmp_path):
    path = tmp_path / "few.db"
    with Store.open(path) as store:
        live(store, "m", {t: LIVE[t] for t in TASKS[:4]})
    text = words(report(path, "--out", str(tmp_path)).stdout)
    reason = "n/a: 4 tasks are too few for an interval (at least 10)."
    assert text.count(reason) == 2  # under the Pass@1 table and the MRR/Recall table
    pass_table, summary = text.split("MRR and Recall (%)")
    assert pass_table.count(" n/a ") == 3  # the three turns' cells
    assert summary.split(reason)[0].count(" n/a ") == 2  # MRR's and Recall's
    data = json.loads(report(path, "--json", "--out", str(tmp_path)).stdout)
    interval = data["columns"][0]["mrr_interval"]
    assert interval == {
        "low": None,
        "high": None,
        "units": 4,
        "reason": "4 tasks are too few for an interval (at least 10)",
    }


@pytest.mark.parametrize("args", [("--seed", "-1"), ("--resamples", "0")])
def test_a_bad_seed_or_resample_count_is_one_line_and_exit_2(db, args):
    done = invoke("report", "--db", str(db), *args)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and done.stderr.startswith("error:")
    assert args[0] in done.stderr and "no such option" not in done.stderr


def test_nine_settings_with_intervals_fit_120_columns(tmp_path):
    """Nine Ω columns of a long model name: no line past 120 characters, and every bound
    whole on its line (none folded mid-number)."""
    from support.omegas import omegas

    path = tmp_path / "nine.db"
    with Store.open(path) as store:
        for feedback in omegas("all"):
            live(store, "some-org/a-rather-long-model-name-7b-instruct", LIVE, feedback)
    text = report(path, "--out", str(tmp_path)).stdout.split("written:")[0]
    assert max(len(line) for line in text.splitlines()) <= 120
    table = text.split("Pass@1 (%) after each turn")[1].split("Pass@1 cumulative")[0]
    want = expected({t: live_terms(v) for t, v in LIVE.items()})[:3]
    for e in want:
        assert table.count(f"{e['low']:.1f}–{e['high']:.1f}") >= 9


def test_no_intervals_never_imports_numpy(db, tmp_path):
    """--no-intervals costs what the report cost before: stats (numpy) is never imported."""
    probe = (
        "import sys\nfrom pathlib import Path\n"
        "from convtui.benchmarks.commands.report import Uncertainty, report_command\n"
        f"report_command(Path({str(db)!r}), None, Path({str(tmp_path)!r}), True,"
        " uncertainty=Uncertainty(intervals=False))\n"
        "assert 'numpy' not in sys.modules, 'numpy was imported'\n"
    )
    # A process of its own: what this process imported says nothing.
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env(), check=False
    )
    assert done.returncode == 0, done.stderr


def test_a_narrow_tables_notes_are_whole_lines_from_the_left_edge(tmp_path: Path) -> None:
    """One Ω of one model makes a narrow table: its notes stood as a thin centred block of
    broken lines (rich centres a caption within the table). Each is now a line of its own."""
    db = tmp_path / "one.db"
    with Store.open(db) as store:
        live(store, "m", {t: (False, True) for t in tasks(3)})
    done = invoke("report", "--db", str(db), "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for note in (
        "low–high: 95% percentile bootstrap over tasks (2000 resamples, seed 0).",
        "n/a: 3 tasks are too few for an interval (at least 10).",
        "Pass@1 cumulative: passed at any turn up to t",
    ):
        assert note in lines, done.stdout
