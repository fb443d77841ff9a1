"""`convtui compare` end to end: real `bench live` runs of scripted models (``mock:``), so what
each side solves is fixed by the script (a task's ground truth, or a reply that fails every
task), never by what a model writes. Side A gathers one run per solved task and a failing
run over the rest; side B fails all ten."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.compare import compare, compared, metric, tasks
from support.data import needs_bigcodebench
from support.live import FAILS, bench
from support.scripted import script

pytestmark = needs_bigcodebench

TASKS = [0, 1, 2, 4, 5, 6, 7, 8, 12, 13]  # standard library only: nothing to install
SOLVED = [0, 1, 2, 4, 5]  # by side A at turn 0
LATE = 6  # by side A at turn 1, after execution feedback


def ids(numbers: list[int]) -> str:
    return ",".join(map(str, numbers))


def run(db: Path, model: str, numbers: list[int]) -> str:
    """A live run of ``model`` on ``numbers`` (turn 0 and one feedback turn); its id."""
    args = ["--ids", ids(numbers), "--turns", "1", "--feedback", "CF,EF:full"]
    done = bench(db, "--model", model, run=[*args, "--protocol", "convtui"])
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)["run_id"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory, bigcodebench) -> tuple[Path, dict[str, list[str]]]:
    folder = tmp_path_factory.mktemp("compare")
    db = folder / "results.db"
    fails = script(folder / "fails.jsonl", [FAILS])

    def truth(n: int, late: bool = False) -> str:
        code = f"```python\n{bigcodebench.get(f'BigCodeBench/{n}').ground_truth}\n```"
        return script(folder / f"truth{n}.jsonl", [FAILS, code] if late else [code])

    solving = {n: run(db, truth(n), [n]) for n in SOLVED}
    late = run(db, truth(LATE, late=True), [LATE])
    rest = run(db, fails, [n for n in TASKS if n not in [*SOLVED, LATE]])
    sides = {
        "A": [*solving.values(), late, rest],
        "B": [run(db, fails, TASKS)],
        # One task more than B: task 0's solving run, and failing runs on the others.
        "one": [solving[0], run(db, fails, [n for n in TASKS if n != 0])],
    }
    return db, sides


def side(name: str, runs: list[str]) -> list[str]:
    return ["--side", f"{name}={','.join(runs)}"]


def test_a_side_solving_six_more_tasks_is_found_higher_with_those_tasks_named(runs) -> None:
    db, sides = runs
    args = ["--db", str(db), *side("A", sides["A"]), *side("B", sides["B"])]
    data = compared(*args)
    assert data["differ_by"] == ["model"]  # each side gathers runs of several scripts
    recall = metric(data, "recall")
    six = tasks(*SOLVED, LATE)
    assert (recall["first"], recall["second"], recall["difference"]["value"]) == (60.0, 0.0, 60.0)
    assert sorted(recall["first_better"]) == sorted(six) and recall["second_better"] == []
    assert recall["p_value"] == 2 / 2**6  # McNemar exact: 6 tasks one way, none the other
    assert recall["difference"]["low"] > 0
    assert recall["verdict"] == "A higher"
    # At turn 0 the late task is not solved yet: five flips are not enough (2/2^5).
    first = metric(data, "pass1-t0")
    assert first["first_better"] == sorted(tasks(*SOLVED))
    assert first["p_value"] == 2 / 2**5 and first["verdict"] == "cannot tell"
    mrr = metric(data, "mrr")
    assert mrr["first"] == 100 * (len(SOLVED) + 1 / 2) / len(TASKS)
    text = compare(*args)
    assert text.returncode == 0, text.stderr
    assert f"A better on 6: {', '.join(sorted(six))}; B better on none" in text.stdout


def test_two_runs_differing_by_one_task_of_ten_are_not_told_apart(runs) -> None:
    db, sides = runs
    data = compared("--db", str(db), *side("A", sides["one"]), *side("B", sides["B"]))
    recall = metric(data, "recall")
    assert recall["difference"]["value"] == 10.0
    assert recall["first_better"] == ["BigCodeBench/0"]
    low, high = recall["difference"]["low"], recall["difference"]["high"]
    assert low <= 0 <= high
    assert recall["p_value"] == 1.0 and recall["verdict"] == "cannot tell"


def test_a_run_compared_with_itself_differs_by_zero_with_p_one(runs) -> None:
    db, sides = runs
    data = compared("--db", str(db), *side("A", sides["B"]), *side("B", sides["B"]))
    assert [m["metric"] for m in data["metrics"]] == ["pass1-t0", "pass1-t1", "mrr", "recall"]
    for m in data["metrics"]:
        (pair,) = m["pairs"]
        assert pair["difference"]["value"] == 0.0
        assert pair["p_value"] == 1.0
        assert pair["first_better"] == [] and pair["second_better"] == []
