"""`convtui report --correlate`'s ρ and τ with bootstrap intervals over tasks (issue 47,
point 2): the tasks every model holds live and static are resampled together, each model's
per-task terms (reciprocal rank for MRR, solved for Recall) paired by task; checked against
stats.correlation_intervals on the terms written here, holding the point values."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import pytest
from support.cli import invoke
from support.columns import live_column, static_column
from support.verdicts import live, replay, tasks

from convtui.benchmarks.reports.correlate import (
    INTERVAL_UNIT,
    correlate_columns,
    correlation_json,
    correlation_table,
)
from convtui.benchmarks.reports.report import TaskScores
from convtui.core.metrics.stats import Bootstrap, correlation_intervals
from convtui.sessions import Store

pytest.importorskip("scipy")  # the exec extra: the point values

BOOT = Bootstrap(resamples=1000, seed=5)
TASKS = tasks(24)
# Per model, the turn at which each task is first solved live and static (None: never):
# model a solves most and earliest, c least, both ways, with some tasks swapping.
SOLVED = {
    "a": ([0, 0, 1, None, 0, 2] * 4, [0, 1, 0, 0, None, 1] * 4),
    "b": ([1, None, 0, 2, None, 1] * 4, [1, 0, None, 2, 1, None] * 4),
    "c": ([None, 2, None, None, 1, None] * 4, [2, None, None, 1, None, None] * 4),
}


def scores(firsts: list[int | None]) -> tuple[TaskScores, ...]:
    return tuple(
        TaskScores(t, (), 0.0 if k is None else 1 / (k + 1), float(k is not None))
        for t, k in zip(TASKS, firsts, strict=True)
    )


def columns(tasks_kept: int = len(TASKS)):
    """A live and a static column per model, their MRR and Recall the means of their terms."""
    lives, statics = [], []
    for model, (own, replayed) in SOLVED.items():
        for made, firsts, out in (
            (live_column, own, lives),
            (static_column, replayed, statics),
        ):
            terms = scores(firsts)[:tasks_kept]
            mrr = sum(s.mrr for s in terms) / len(terms)
            recall = sum(s.recall for s in terms) / len(terms)
            out.append(replace(made(model, "CF", mrr, recall), scores=terms, tasks=len(terms)))
    return lives, statics


def test_intervals_equal_the_estimate_on_the_per_task_terms_and_hold_the_points():
    lives, statics = columns()
    rows = {r.metric: r for r in correlate_columns(lives, statics, BOOT)}
    for metric, term in (("MRR", "mrr"), ("Recall", "recall")):
        row = rows[metric]
        assert row.result.computed and row.interval is not None

        # The shared tasks in the order of their ids, as every estimate takes them.
        def terms(firsts: list[int | None], term: str = term) -> list[float]:
            return [getattr(s, term) for s in sorted(scores(firsts), key=lambda s: s.task_id)]

        want = correlation_intervals(
            {m: terms(own) for m, (own, _) in SOLVED.items()},
            {m: terms(rep) for m, (_, rep) in SOLVED.items()},
            BOOT,
        )
        assert row.interval.spearman == want["spearman"]
        assert row.interval.kendall == want["kendall"]
        assert row.interval.tasks == len(TASKS)
        low, high = row.interval.spearman
        assert low <= row.result.spearman_rho <= high
        low, high = row.interval.kendall
        assert low <= row.result.kendall_tau <= high


def test_the_json_and_the_table_say_the_unit_and_the_method():
    lives, statics = columns()
    rows = correlate_columns(lives, statics, BOOT)
    data = correlation_json(rows, len(statics), BOOT)
    assert data["uncertainty"]["unit"] == INTERVAL_UNIT
    mrr = next(r for r in data["rows"] if r["metric"] == "MRR")
    assert mrr["spearman_interval"]["units"] == len(TASKS)
    assert (
        mrr["spearman_interval"]["low"] <= mrr["spearman_rho"] <= mrr["spearman_interval"]["high"]
    )
    assert set(mrr) >= {"spearman_rho", "spearman_p", "kendall_tau", "kendall_p", "reason"}
    from rich.console import Console

    console = Console(width=120, record=True, file=io.StringIO())
    console.print(correlation_table(rows, BOOT.method(INTERVAL_UNIT)))
    text = " ".join(console.export_text().split())
    assert (
        "[low,high]: 95% percentile bootstrap over the tasks shared by every model's live and "
        "static results (1000 resamples, seed 5)." in text
    )
    row = next(r for r in rows if r.metric == "MRR")
    assert row.interval and row.interval.spearman
    assert f"[{row.interval.spearman[0]:+.2f},{row.interval.spearman[1]:+.2f}]" in text
    without = correlation_json(correlate_columns(lives, statics), len(statics))
    assert without["uncertainty"] is None
    assert not any(k.endswith("_interval") for r in without["rows"] for k in r)


def test_too_few_shared_tasks_give_a_reason_instead_of_an_interval():
    lives, statics = columns(tasks_kept=6)
    row = next(r for r in correlate_columns(lives, statics, BOOT) if r.metric == "MRR")
    assert row.interval is not None and row.interval.spearman is None
    assert row.interval.reason == "6 shared tasks are too few for an interval (at least 10)"
    assert row.to_json()["spearman_interval"]["reason"] == row.interval.reason


def test_a_row_without_a_coefficient_has_no_interval_either():
    lives, statics = columns()
    two = [c for c in lives if c.model != "c"], [c for c in statics if c.model != "c"]
    row = next(r for r in correlate_columns(*two, BOOT) if r.metric == "MRR")
    assert not row.result.computed
    assert row.interval is not None and row.interval.spearman is None
    assert row.interval.reason == row.result.reason


def test_report_correlate_from_a_store_holds_the_points_in_its_intervals(tmp_path: Path):
    path = tmp_path / "three.db"

    def verdicts(firsts: list[int | None]) -> dict[str, tuple[bool, ...]]:
        return {
            t: tuple(k == turn for turn in range(3)) if k is not None else (False,) * 3
            for t, k in zip(TASKS, firsts, strict=True)
        }

    with Store.open(path) as store:
        references = live(store, "ref-model", verdicts([None] * len(TASKS)))
        for model, (own, replayed) in SOLVED.items():
            live(store, model, verdicts(own))
            replay(store, model, references, verdicts(replayed))
    done = invoke("report", "--db", str(path), "--correlate", "--json", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)["correlation"]
    assert data["uncertainty"]["seed"] == 0 and data["uncertainty"]["resamples"] == 2000
    for row in data["rows"]:
        for name, value in (("spearman", row["spearman_rho"]), ("kendall", row["kendall_tau"])):
            interval = row[f"{name}_interval"]
            assert interval["units"] == len(TASKS)
            assert interval["low"] <= round(value, 4) <= interval["high"]
