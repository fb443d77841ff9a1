"""CodeIF-Bench's numbers in `convtui report` with their intervals over tasks (issue 47,
point 1): IA, CA, IFR per round, IFE, IA by category (a task's rounds of one category are one
cluster) and the authors' dynamic "avg" row, on sessions built by hand, so each interval is
checked against stats.estimate_means on the verdicts written here. The end-to-end run (a
scripted model, one task) shows the reason instead of an interval."""

from __future__ import annotations

import csv
import io
import json

import pytest
from rich.console import Console

from convtui.benchmarks.reports.codeif_report import (
    AUTHORS,
    PAPER,
    CodeifSession,
    build_groups,
    categories_csv,
    codeif_tables,
    rounds_csv,
)
from convtui.benchmarks.reports.intervals import codeif_with_intervals
from convtui.benchmarks.runs.codeif import AUTHORS_CONVERSATION
from convtui.core.codeif.authors_dynamic import ScriptTurn, task_pairs
from convtui.core.codeif.instructions import BASE
from convtui.core.codeif.metrics import Round
from convtui.core.metrics.stats import Bootstrap, Clusters, estimate_mean_of_means, estimate_means

BOOT = Bootstrap(resamples=400, seed=2)
IO, EXC, EDGE = "Input-Output Conditions", "Exception Handling", "Edge Case Handling"
TASKS = [f"CodeIF/{i}" for i in range(14)]


def verdict(task: int, k: int) -> bool:
    """A fixed, uneven pattern of followed (True) and not, by task and round."""
    return (task * 3 + k * 5) % 7 < 4


def rounds_of(task: int) -> tuple[Round, ...]:
    """Base, then IO, EXC and IO again (two rounds of one category in one task); the first
    eight tasks stop after two follow-ups, so round 4 is held by fewer tasks."""
    given = [BASE, IO, EXC, IO][: 3 if task < 8 else 4]
    rounds = []
    for k, instruction in enumerate(given):
        ok = {c: verdict(task, k + j) for j, c in enumerate(dict.fromkeys(given[: k + 1]))}
        rounds.append(Round(k + 1, "instruction", instruction, ok, own=ok))
    return tuple(rounds)


def session(task: int, metrics: str, mode: str = "static") -> CodeifSession:
    return CodeifSession(
        session_id=f"s{task}",
        run_id="r",
        task_id=TASKS[task],
        model="m",
        mode=mode,
        protocol="codeif",
        status="exhausted",
        rounds=rounds_of(task),
        metrics=metrics,
    )


def alone(rows: list[tuple[str, float | None]]) -> dict:
    """One metric's estimate from its own rows over every task of the group: the draws are
    the same for the same number of tasks, so it must equal the group's one call."""
    padded = rows + [(t, None) for t in TASKS]
    (found,) = estimate_means(Clusters.from_rows((t, [v]) for t, v in padded), BOOT)
    return {"low": found.low, "high": found.high, "units": found.units, "reason": found.reason}


def shown(estimate) -> dict:
    return {
        "low": estimate.low,
        "high": estimate.high,
        "units": estimate.units,
        "reason": estimate.reason,
    }


def test_authors_ia_per_round_and_by_category_equal_the_estimate_on_the_verdicts():
    (group,) = build_groups([session(i, AUTHORS) for i in range(len(TASKS))])
    group = codeif_with_intervals(group, BOOT)
    assert group.intervals is not None
    # IA at round k+1: the k-th instruction's own verdict, over the tasks that reached it.
    for k in range(4):
        rows = [
            (TASKS[i], float(rounds_of(i)[k].own[rounds_of(i)[k].instruction]))
            for i in range(len(TASKS))
            if k < len(rounds_of(i))
        ]
        assert shown(group.intervals.rounds[k]["ia"]) == alone(rows)
        assert group.intervals.rounds[k]["ia"].value == pytest.approx(group.rounds[k]["ia"].value)
    # IA of IO pools both of a task's IO rounds into one cluster.
    io_rows = [
        (TASKS[i], float(r.own[r.instruction]))
        for i in range(len(TASKS))
        for r in rounds_of(i)
        if r.instruction == IO
    ]
    assert len(io_rows) > len(TASKS)  # some tasks hold two items
    assert shown(group.intervals.categories[IO]) == alone(io_rows)
    assert group.intervals.categories[IO].units == len(TASKS)
    assert group.intervals.categories[IO].value == pytest.approx(group.categories[IO][1])


def test_paper_ca_ifr_and_ife_equal_the_estimate_and_dynamic_groups_get_ife():
    (group,) = build_groups([session(i, PAPER, "dynamic") for i in range(len(TASKS))])
    group = codeif_with_intervals(group, BOOT)
    assert group.intervals is not None
    for k, cells in enumerate(group.rounds):
        assert set(group.intervals.rounds[k]) == set(cells) == {"ia", "ca", "ifr", "ife"}
        for metric, cell in cells.items():
            assert group.intervals.rounds[k][metric].value == pytest.approx(cell.value)
    # CA at round 2 by hand: the share of the instructions so far (base, IO) followed.
    rows = [(TASKS[i], sum(rounds_of(i)[1].followed.values()) / 2) for i in range(len(TASKS))]
    assert shown(group.intervals.rounds[1]["ca"]) == alone(rows)


def test_the_authors_dynamic_avg_row_is_a_mean_of_the_pairs_means_with_its_interval():
    def turns(task: int) -> tuple[ScriptTurn, ...]:
        count = 3 if task % 2 else 4  # pairs 1-2 and 3 (alone) or 3-4
        return tuple(
            ScriptTurn(
                n + 1, "instruction", BASE, *(float(verdict(task, n + j)) for j in range(4)), ()
            )
            for n in range(count)
        )

    sessions = [
        CodeifSession(
            f"s{i}",
            "r",
            TASKS[i],
            "m",
            "dynamic",
            "codeif",
            "exhausted",
            rounds_of(i),
            conversation=AUTHORS_CONVERSATION,
            script_turns=turns(i),
        )
        for i in range(len(TASKS))
    ]
    (group,) = build_groups(sessions)
    assert group.labels == ("1-2", "3-4", "avg")  # "3-4" pairs turn 3 alone where no 4
    group = codeif_with_intervals(group, BOOT)
    assert group.intervals is not None
    avg = group.intervals.rounds[-1]["ia"]
    assert avg.value == pytest.approx(group.rounds[-1]["ia"].value)
    # The same estimate from the pairs' IA terms alone: one column per pair.
    labels = group.labels[:-1]
    rows = []
    for s in sessions:
        pairs = {name: values["ia"] for name, values in task_pairs(s.script_turns)}
        rows.append((s.task_id, [pairs.get(label) for label in labels]))
    want = estimate_mean_of_means(Clusters.from_rows(rows), range(len(labels)), BOOT)
    assert shown(avg) == shown(want) and avg.low is not None
    text = render(codeif_tables([group], BOOT.method()))
    assert f"{100 * avg.low:.1f}–{100 * avg.high:.1f}" in text


def render(tables: list) -> str:
    console = Console(width=120, record=True, file=io.StringIO())
    for table in tables:
        console.print(table)
    return " ".join(console.export_text().split())


def test_tables_csv_and_json_carry_the_intervals_and_no_intervals_leaves_them_as_before():
    (plain,) = build_groups([session(i, AUTHORS) for i in range(len(TASKS))])
    group = codeif_with_intervals(plain, BOOT)
    assert group.intervals is not None
    ia = group.intervals.rounds[0]["ia"]
    text = render(codeif_tables([group], BOOT.method()))
    assert f"{100 * ia.low:.1f}–{100 * ia.high:.1f}" in text
    assert "low–high: 95% percentile bootstrap over tasks (400 resamples, seed 2)." in text
    assert "–" not in render(codeif_tables([plain]))

    rows = list(csv.DictReader(io.StringIO(rounds_csv([group]))))
    assert float(rows[0]["ia_low"]) == pytest.approx(ia.low, abs=5e-5)
    assert rows[0]["ife_low"] == ""  # static: no IFE
    assert "ia_low" not in rounds_csv([plain])
    (io_row,) = [
        r for r in csv.DictReader(io.StringIO(categories_csv([group]))) if r["category"] == IO
    ]
    assert float(io_row["ia_high"]) == pytest.approx(group.intervals.categories[IO].high, abs=5e-5)
    assert "ia_low" not in categories_csv([plain])

    data, before = group.to_json(), plain.to_json()
    assert data["rounds"][0]["ia_interval"]["low"] == round(ia.low, 4)
    assert data["ia_by_category"][IO]["ia_interval"]["units"] == len(TASKS)
    # Every key of the report without intervals is there with its value.
    for row, old in zip(data["rounds"], before["rounds"], strict=True):
        assert {k: v for k, v in row.items() if not k.endswith("_interval")} == old
    assert json.dumps(before).count("_interval") == 0


def test_too_few_tasks_give_the_reason_below_each_table():
    (group,) = build_groups([session(i, AUTHORS) for i in range(4)])
    group = codeif_with_intervals(group, BOOT)
    text = render(codeif_tables([group], BOOT.method()))
    assert "n/a: 4 tasks are too few for an interval (at least 10)." in text
    assert group.to_json()["rounds"][0]["ia_interval"]["reason"].startswith("4 tasks")
