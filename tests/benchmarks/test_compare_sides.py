"""`convtui compare` on stores whose verdicts are written by hand: how sides are paired, what
is left out and said first, more than two sides, Ω against Ω, static replays, and every
refusal. Each expected number is worked out from the verdict patterns (and the exact tests'
formulas: McNemar on k flips one way and none the other is 2/2^k)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.compare import (
    EF_FULL,
    compare,
    compared,
    live_run,
    metric,
    solved_at,
    static_run,
    tasks,
)

from convtui.core.metrics.stats import holm
from convtui.core.settings.omega import FeedbackConfig
from convtui.sessions import Store

CF_ONLY = FeedbackConfig("none", "none")
NEVER = solved_at(None)


def pattern(solved: range | list[int], among: range | list[int]) -> dict[str, tuple[bool, ...]]:
    """Verdicts over ``among``: the tasks of ``solved`` pass at turn 0, the rest never."""
    return {f"BigCodeBench/{n}": solved_at(0) if n in solved else NEVER for n in among}


def test_sides_that_share_part_of_their_tasks_are_compared_on_those_and_say_first_what_is_left(
    tmp_path: Path,
) -> None:
    db = tmp_path / "results.db"
    with Store.open(db) as store:
        live_run(store, "model-x", pattern(range(6), range(12)))
        live_run(store, "model-y", pattern(range(3), range(10)))
    done = compare("--db", str(db), "--by", "model")
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("left out: 2 keys not held by every side (A 2, B 0)"), first
    data = compared("--db", str(db), "--by", "model")
    assert next(iter(data)) == "left_out"
    assert data["left_out"] == {"keys": 2, "by_side": {"A": 2, "B": 0}}
    assert data["compared"]["tasks"] == 10
    assert data["paired_on"] == ["task", "feedback", "protocol"]
    recall = metric(data, "recall")
    # On the 10 shared tasks X solves 0-5, Y 0-2: X better on 3, 4 and 5.
    assert (recall["first"], recall["second"]) == (60.0, 30.0)
    assert recall["difference"]["value"] == 30.0
    assert recall["first_better"] == tasks(3, 4, 5) and recall["second_better"] == []
    assert recall["p_value"] == 2 / 2**3
    assert recall["test"].startswith("McNemar exact")


def test_more_than_two_sides_give_holm_adjusted_pairs_ranks_and_the_groups_not_told_apart(
    tmp_path: Path,
) -> None:
    db = tmp_path / "results.db"
    with Store.open(db) as store:
        live_run(store, "model-x", pattern(range(12), range(12)))
        live_run(store, "model-y", pattern(range(11), range(12)))
        live_run(store, "model-z", pattern([], range(12)))
    data = compared("--db", str(db), "--metric", "recall")
    (recall,) = data["metrics"]
    raw = {(p["first_side"], p["second_side"]): p["p_value"] for p in recall["pairs"]}
    assert raw == {("A", "B"): 1.0, ("A", "C"): 2 / 2**12, ("B", "C"): 2 / 2**11}
    adjusted = dict(zip(raw, holm(list(raw.values())), strict=True))
    assert {(p["first_side"], p["second_side"]): p["p_adjusted"] for p in recall["pairs"]} == (
        adjusted
    )
    assert [(r["side"], r["rank"]) for r in recall["ranks"]] == [("A", 1), ("B", 2), ("C", 3)]
    assert recall["groups"] == [["A", "B"]]  # X and Y differ by one task; Z stands apart
    assert [p["verdict"] for p in recall["pairs"]] == ["cannot tell", "A higher", "B higher"]
    done = compare("--db", str(db), "--metric", "recall")
    assert done.returncode == 0, done.stderr
    assert "p (Holm)" in done.stdout
    assert "cannot be told apart" in done.stdout and "{A, B}" in done.stdout
    # Each pair's flips on a line of its own, named: C is better on no task.
    assert "A−C Recall: A better on 12: BigCodeBench/0," in done.stdout


def test_the_same_model_under_two_feedback_settings_pairs_on_task_and_model_clustered_by_task(
    tmp_path: Path,
) -> None:
    db = tmp_path / "results.db"
    with Store.open(db) as store:
        for model in ("model-x", "model-y"):
            live_run(store, model, pattern(range(8), range(10)), feedback=(EF_FULL,))
            live_run(store, model, pattern(range(2), range(10)), feedback=(CF_ONLY,))
    data = compared("--db", str(db), "--by", "feedback", "--metric", "pass1-t0")
    assert data["paired_on"] == ["task", "model", "protocol"]
    assert data["compared"] == {"keys": 20, "tasks": 10, "turns": 3}
    row = metric(data, "pass1-t0")
    # A is CF (sorted first), B is CF,EF:full: B better on tasks 2-7, both models alike.
    assert row["pairs"] == 20 and row["units"] == 10
    assert row["second_better"] == tasks(2, 3, 4, 5, 6, 7)
    assert row["difference"]["value"] == -60.0
    # Two pairs per task: no McNemar; the sign flips of the six task means of -1 reach
    # |sum| 6 only all alike, 2 of 2^6.
    assert row["test"] == "sign-flip permutation test over tasks (exact)"
    assert row["p_value"] == 2 / 2**6


REFERENCE = {
    "BigCodeBench/1": (False, False, True),
    "BigCodeBench/2": (True,),
    "BigCodeBench/3": (False, False, False),
    "BigCodeBench/4": (False, False, False),
}
GOOD_TARGET = {
    "BigCodeBench/1": (False, False, True),  # own pass at turn 2: 1/3
    "BigCodeBench/2": (False, True),  # the reference's turn 0 passed: 1
    "BigCodeBench/3": (False, True),  # own pass at turn 1: 1/2
    "BigCodeBench/4": (True,),  # own turn 0: 1
}
POOR_TARGET = {t: (False, False, False) for t in REFERENCE}  # only task 2's 1 (the reference)


def test_static_replays_are_compared_with_convcodebench_scores_and_say_what_they_include(
    tmp_path: Path,
) -> None:
    db = tmp_path / "results.db"
    with Store.open(db) as store:
        references = store.run_sessions(live_run(store, "ref-model", REFERENCE))
        static_run(store, "target-good", references, GOOD_TARGET)
        static_run(store, "target-poor", references, POOR_TARGET)
    data = compared("--db", str(db), "--kind", "static", "--by", "model")
    assert [m["metric"] for m in data["metrics"]] == ["pass1-t1", "pass1-t2", "mrr", "recall"]
    assert data["paired_on"] == ["task", "feedback", "log_set", "protocol"]
    mrr = metric(data, "mrr")
    assert mrr["first"] == round(100 * (1 / 3 + 1 + 1 / 2 + 1) / 4, 1)
    assert mrr["second"] == 25.0
    assert mrr["first_better"] == tasks(1, 3, 4)
    assert mrr["test"] == "sign-flip permutation test over tasks (exact)"
    assert any("include the reference's successes" in n for n in data["notes"])
    # The reference's live run is there too, and said to be left aside.
    assert data["also_held"] == [
        "also held: 4 sessions of live BigCodeBench, not compared here (--kind live)"
    ]


def test_one_target_replaying_two_log_sets_is_compared_across_the_log_set(tmp_path: Path) -> None:
    db = tmp_path / "results.db"
    with Store.open(db) as store:
        for reference in ("ref-a", "ref-b"):
            never = {t: NEVER for t in REFERENCE}
            references = store.run_sessions(live_run(store, reference, never))
            static_run(store, "target", references, GOOD_TARGET if reference == "ref-a" else never)
    data = compared("--db", str(db), "--kind", "static", "--by", "log-set", "--metric", "recall")
    assert data["paired_on"] == ["task", "model", "feedback", "protocol"]
    assert [s["name"] for s in data["sides"]] == [
        "log set ref-a, markov",
        "log set ref-b, markov",
    ]
    recall = metric(data, "recall")
    # Replaying ref-a's log set the target solves every task (own passes); ref-b's, none.
    assert (recall["first"], recall["second"]) == (100.0, 0.0)
    assert recall["first_better"] == tasks(1, 2, 3, 4)


@pytest.fixture
def refusable(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    db = tmp_path / "data" / "results.db"
    db.parent.mkdir()
    with Store.open(db) as store:
        runs = {
            "x": live_run(store, "model-x", pattern(range(5), range(10))),
            "y": live_run(store, "model-y", pattern(range(3), range(10))),
            "w": live_run(store, "model-w", pattern([], range(20, 25))),
        }
        references = store.run_sessions(runs["x"])
        runs["static"] = static_run(
            store, "target", references, {r.task_id: NEVER for r in references}
        )
    return db, runs


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--db", "{dir}/missing.db"], "no results database at {dir}/missing.db"),
        (["--db", "{db}", "--db", "{dir}/other.db"], "no results database at {dir}/other.db"),
        (["--db", "{db}", "--model", "model-x"], "compare needs two sides or more"),
        (["--db", "{db}", "--metric", "ia"], "no metric ia for live BigCodeBench sessions"),
        (["--db", "{db}", "--metric", "pass1-t3"], "no metric pass1-t3 for live"),
        (
            ["--db", "{db}", "--model", "model-x", "--model", "model-w"],
            "the sides share no (task, feedback, protocol) to pair on (each holds: A 5, B 10)",
        ),
        (
            ["--db", "{db}", "--side", "A={x}", "--side", "B={static}"],
            "side B (runs {static}) holds no live BigCodeBench session",
        ),
        (["--db", "{db}", "--side", "A={x}", "--side", "B=nosuchrun"], "no run 'nosuchrun'"),
        (["--db", "{db}", "--side", "A={x}", "--by", "model"], "give --by or --side, not both"),
        (["--db", "{db}", "--tasks", "40"], "add --plan"),
        (["--db", "{db}", "--by", "annotator"], "--by annotator: no live BigCodeBench session"),
        (
            ["--db", "{db}", "--model", "no-such-model"],
            "convtui report gives CodeIF-Bench's metrics with their intervals",
        ),
    ],
)
def test_each_refusal_is_one_line_exit_2_and_writes_nothing(
    refusable: tuple[Path, dict[str, str]], args: list[str], message: str
) -> None:
    db, runs = refusable
    names = {"db": str(db), "dir": str(db.parent), **runs}
    before = sorted(p.name for p in db.parent.iterdir())
    done = compare(*(a.format(**names) for a in args))
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: ") and message.format(**names) in line, line
    assert sorted(p.name for p in db.parent.iterdir()) == before


def test_a_seed_gives_the_same_bytes_and_the_method_is_named(
    refusable: tuple[Path, dict[str, str]],
) -> None:
    db, _ = refusable
    args = ("--db", str(db), "--model", "model-x", "--model", "model-y", "--seed", "3")
    first = compare(*args, "--resamples", "500", "--json")
    assert first.returncode == 0, first.stderr
    assert compare(*args, "--resamples", "500", "--json").stdout == first.stdout
    text = compare(*args, "--resamples", "500")
    assert "95% percentile bootstrap over tasks (500 resamples, seed 3)" in text.stdout.replace(
        "\n", " "
    )


def test_plot_draws_each_pairs_differences_with_their_intervals(
    refusable: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    pytest.importorskip("matplotlib")  # the exec extra
    db, _ = refusable
    args = ("--db", str(db), "--model", "model-x", "--model", "model-y")
    data = compared(*args, "--metric", "pass1-t0,mrr", "--plot", str(tmp_path / "figs"))
    png, svg = (Path(p) for p in data["plots"])
    assert png.read_bytes().startswith(b"\x89PNG") and png.stat().st_size > 5000
    drawn = svg.read_text()
    # A row per metric, named; and the pair in the title.
    assert "Pass@1 t0" in drawn and "MRR" in drawn and "A − B" in drawn
    shown = compare(*args, "--plot", str(tmp_path / "figs"))
    assert f"plots: {png}" in shown.stdout.replace("\n", "")
