"""`convtui report` on CodeIF-Bench runs: the paper's tables, CSV and JSON, and no CodeIF run
mistaken for a ConvCodeWorld live column. The runs are played by a scripted model (``mock:``,
so the verdicts do not depend on what a model writes) alternating the task's reference code
and a function that ignores its input, with the real executor and a real SQLite file."""

from __future__ import annotations

import csv
import json
import subprocess

import pytest
from support.cli import convtui_argv, env
from support.codeif import TASK, codeif, report, script
from support.data import DATA

from convtui.core.catalog.loaders import load_catalog
from convtui.core.codeif.instructions import BASE, FUNCTIONALITY_EXTENSION, instructions

pytestmark = pytest.mark.skipif(
    not (DATA / "CodeIF-Bench-L1-function.jsonl").exists(), reason=f"no CodeIF data in {DATA}"
)

BROKEN = "```python\ndef remove_occ(s, ch):\n    return s\n```"


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """One database with a static run of CodeIF/11 (--protocol codeif) and a dynamic one by
    convtui's rules (--protocol convtui; the authors' dynamic script's report is
    test_codeif_bench_authors_dynamic.py's)."""
    folder = tmp_path_factory.mktemp("codeif-report")
    task = load_catalog("codeif", DATA).get(TASK)
    good = f"```python\n{task.ground_truth}\n```"
    model = script(folder / "m.jsonl", [good, BROKEN] * 20)
    db = folder / "c.db"
    for mode, protocol in (("static", "codeif"), ("dynamic", "convtui")):
        done = codeif(db, "--mode", mode, "--protocol", protocol, "--model", model)
        assert done.returncode == 0, done.stderr
    return db, task


def paper_rounds(session: dict) -> list[dict]:
    """A session's rounds with the paper's per-round scores beside them."""
    scores = session["scores"]
    assert scores["metrics"] == "paper"
    return [r | s for r, s in zip(session["rounds"], scores["rounds"], strict=True)]


def test_the_json_holds_every_round_and_the_tables_follow_from_it(played, tmp_path):
    db, task = played
    done = report(db, "--json", "--out", str(tmp_path), "--metrics", "paper")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["columns"] == []  # not a ConvCodeWorld live column
    groups = {g["mode"]: g for g in data["codeif"]["groups"]}
    assert set(groups) == {"static", "dynamic"}
    assert {g["metrics"] for g in groups.values()} == {"paper"}
    sessions = {s["mode"]: s for s in data["codeif"]["sessions"]}
    static = paper_rounds(sessions["static"])
    order = [i.category for i in instructions(task)]
    assert [r["instruction"] for r in static] == order
    # Round 1: the reference code follows the initial instruction. Round 2: the function
    # that ignores its input follows nothing, and forgets what round 1 followed.
    assert static[0]["followed"] == {BASE: True}
    assert (static[0]["ia"], static[0]["ca"], static[0]["ifr"]) == (1.0, 1.0, 0.0)
    assert set(static[1]["followed"]) == set(order[:2])
    assert not any(static[1]["followed"].values())
    assert (static[1]["ia"], static[1]["ca"], static[1]["ifr"]) == (0.0, 0.0, 1.0)
    # Every round's scores, recomputed by hand from the recorded followed maps.
    for i, r in enumerate(static):
        counted = [ok for c, ok in r["followed"].items() if c != FUNCTIONALITY_EXTENSION]
        assert r["ca"] == pytest.approx(sum(counted) / len(counted))
        assert r["ia"] == float(r["followed"][r["instruction"]])
        kept = [c for c, ok in (static[i - 1]["followed"] if i else {}).items() if ok]
        lost = [c for c in kept if not r["followed"][c]]
        assert r["ifr"] == pytest.approx(len(lost) / len(kept) if kept else 0.0)
    # One task per group: the group's round averages are that session's scores.
    for mode, group in groups.items():
        own = paper_rounds(sessions[mode])
        assert [g["ia"] for g in group["rounds"]] == [r["ia"] for r in own]
        assert [g["ca"] for g in group["rounds"]] == [r["ca"] for r in own]
        assert ("ife" in group["rounds"][0]) == (mode == "dynamic")
    # Dynamic: round 2 gives an instruction the reference code does not follow; the next
    # answer (input ignored) misses it, so a feedback round repeats it.
    dynamic = paper_rounds(sessions["dynamic"])
    assert dynamic[2]["kind"] == "feedback"
    assert dynamic[2]["instruction"] == dynamic[1]["instruction"]
    # The feedback round's answer is the reference code again, which (round 2 chose so) does
    # not follow it: missed in its round and its feedback round, it is dropped.
    assert dynamic[2]["ia"] == 0.0
    assert dynamic[1]["instruction"] in dynamic[2]["dropped"]

    def written(suffix: str) -> str:
        return next(f for f in data["files"] if f.endswith(suffix))

    with open(written("-codeif-rounds.csv"), encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle) if r["mode"] == "static"]
    assert [(r["round"], r["ia"], r["ifr"]) for r in rows[:2]] == [
        ("1", "1.0000", "0.0000"),
        ("2", "0.0000", "1.0000"),
    ]
    with open(written("-codeif-categories.csv"), encoding="utf-8") as handle:
        categories = {(r["mode"], r["category"]): r for r in csv.DictReader(handle)}
    assert categories[("static", BASE)]["ia"] == "1.0000"
    assert categories[("static", order[1])]["ia"] == "0.0000"


def test_by_default_static_rounds_are_scored_as_the_authors_scripts_score_them(played, tmp_path):
    """The default definition is the authors' (their scripts made the published numbers);
    dynamic conversations by convtui's rules keep the paper's and say so. The authors'
    positional rows are recomputed here from each round's own-assert verdicts, as IA_CA.py
    and IFR.py do."""
    db, _ = played
    done = report(db, "--json", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)["codeif"]
    groups = {g["mode"]: g for g in data["groups"]}
    assert groups["static"]["metrics"] == "authors"
    assert groups["dynamic"]["metrics"] == "paper"  # convtui's rules: the paper's formulas
    assert set(data["metrics"]) == {"authors", "paper"}
    static = next(s for s in data["sessions"] if s["mode"] == "static")
    rounds = static["rounds"]
    assert rounds[0]["own"] == {BASE: True}  # the reference code passes the base asserts
    ia = [float(r["own"][r["instruction"]]) for r in rounds]
    counted = [r for r in rounds[1:] if r["instruction"] != FUNCTIONALITY_EXTENSION]
    ca = [ia[0]] + [
        float(all(r["own"][c] for c in r["followed"] if c != FUNCTIONALITY_EXTENSION))
        for r in counted
    ]
    assert static["scores"]["ia"] == ia
    assert static["scores"]["ca"] == ca
    assert len(ca) == len(rounds) - 1  # CodeIF/11 has a Functionality Extension round
    group_rounds = groups["static"]["rounds"]
    assert [r["ia"] for r in group_rounds] == ia
    assert [r.get("ca") for r in group_rounds] == [*ca, None]
    assert "ifr" not in group_rounds[0]
    done = report(db, "--out", str(tmp_path))
    assert "metrics: authors" in done.stdout and "metrics: paper" in done.stdout
    assert "authors' scripts" in done.stdout


def test_the_text_report_prints_the_papers_tables_and_plots_them(played, tmp_path):
    done = report(played[0], "--out", str(tmp_path), "--plot", str(tmp_path / "plots"))
    assert done.returncode == 0, done.stderr
    for title in ("IA per round", "CA per round", "IFR per round", "IFE per round", "category"):
        assert title in done.stdout
    assert "Pass@1" not in done.stdout  # no ConvCodeWorld table for CodeIF runs
    png = tmp_path / "plots" / f"{played[0].stem}-codeif-rounds.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "plots" / f"{played[0].stem}-codeif-rounds.svg").stat().st_size > 1000


def test_sessions_list_names_instructions_and_the_benchmark_as_the_user(played):
    done = subprocess.run(
        convtui_argv("sessions", "list", "--db", str(played[0])),
        capture_output=True,
        text=True,
        env={**env(), "COLUMNS": "120"},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if TASK in line]
    assert len(rows) == 2
    assert all("instructions" in r and "benchmark" in r for r in rows)
