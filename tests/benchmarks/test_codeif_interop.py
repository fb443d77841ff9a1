"""CodeIF-Bench's completions layout, both ways: ``sessions export --format codeif`` writes a
recorded conversation as the benchmark's evaluation reads completions (one JSON line per
round: task_id, requirement, completion), and ``bench codeif --score-only`` scores such a
file with our executor, recording rounds that ``report`` reads as it reads a played run.
A static run of CodeIF/11 played by a scripted model (the task's reference code every
round), the real executor and real SQLite files."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest
from support.cli import convtui_argv, env
from support.codeif import TASK, codeif, script
from support.data import DATA

from convtui.core.catalog.loaders import load_catalog
from convtui.core.codeif.data_file import load_codeif_data
from convtui.core.codeif.instructions import BASE, instructions
from convtui.sessions import Store

pytestmark = pytest.mark.skipif(
    not (DATA / "CodeIF-Bench-L1-function.jsonl").exists(), reason=f"no CodeIF data in {DATA}"
)

KEYS = {"task_id", "requirement", "completion", "model"}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        convtui_argv(*args), capture_output=True, text=True, env=env(), timeout=300, check=False
    )


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def codeif_report(db: Path, out: Path) -> dict:
    done = cli("report", "--db", str(db), "--json", "--out", str(out))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["codeif"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A static run of CodeIF/11 and its export: (db, the exported file, the task, model)."""
    folder = tmp_path_factory.mktemp("codeif-interop")
    task = load_catalog("codeif", DATA).get(TASK)
    replies = [f"```python\n{task.ground_truth}\n```"] * len(instructions(task))
    model = script(folder / "m.jsonl", replies)
    db = folder / "played.db"
    done = codeif(db, "--mode", "static", "--model", model)
    assert done.returncode == 0, done.stderr
    out = folder / "completions.jsonl"
    done = cli("sessions", "export", "--format", "codeif", "--db", str(db), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "1 conversation, 8 rounds" in " ".join(done.stdout.split())
    return db, out, task, model


def test_the_export_holds_one_record_per_round_in_the_benchmarks_layout(exported):
    db, out, task, model = exported
    records = lines(out)
    order = [i.category for i in instructions(task)]
    assert len(records) == len(order)
    assert all(set(r) == KEYS for r in records)
    # The dataset's own id (a number), not convtui's CodeIF/11.
    assert [r["task_id"] for r in records] == [11] * len(order)
    assert [r["requirement"] for r in records] == order
    assert order[0] == BASE
    with Store.open(db) as store:
        (session,) = store.run_sessions(_only_run(db))
        codes = [t.code for t in store.load_turns(session.id)]
    assert [r["completion"] for r in records] == codes
    assert all(r["completion"].lstrip().startswith("def remove_occ") for r in records)
    assert {r["model"] for r in records} == {model}
    # stdout holds the same bytes as the file.
    done = cli("sessions", "export", "--format", "codeif", "--db", str(db), "--out", "-")
    assert done.returncode == 0, done.stderr
    assert done.stdout == out.read_text(encoding="utf-8")


def test_scoring_the_export_gives_back_the_played_runs_scores(exported, tmp_path):
    db, out, _, model = exported
    scored_db = tmp_path / "scored.db"
    done = codeif_score(out, scored_db)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["sessions_scored"], summary["rounds"], summary["model"]) == (1, 8, model)
    played = codeif_report(db, tmp_path / "played")
    scored = codeif_report(scored_db, tmp_path / "scored")
    assert _scores(scored) == _scores(played)
    assert [g["model"] for g in scored["groups"]] == [model]
    assert [r["followed"] for r in scored["sessions"][0]["rounds"]] == [
        r["followed"] for r in played["sessions"][0]["rounds"]
    ]
    # The run says what it scored; the same file again scores nothing.
    with sqlite3.connect(scored_db) as conn:
        (selection,) = conn.execute("SELECT selection FROM runs").fetchone()
        calls = conn.execute("SELECT count(*) FROM model_calls").fetchone()
    data = load_codeif_data(DATA)
    assert selection.startswith(
        f"codeif;mode=static;protocol=codeif;data={data.sha256};scored=completions.jsonl;"
    )
    assert calls == (0,)
    again = codeif_score(out, scored_db)
    assert json.loads(again.stdout)["sessions_scored"] == 0


def test_a_file_as_the_benchmarks_inference_writes_it_scores_the_same(exported, tmp_path):
    """Base answers without a requirement, replies with their markdown fences, no model."""
    db, out, _, _ = exported
    theirs = tmp_path / "result.jsonl"
    with theirs.open("w", encoding="utf-8") as handle:
        for r in lines(out):
            record = {"task_id": r["task_id"], "completion": f"```python\n{r['completion']}\n```"}
            if r["requirement"] != BASE:
                record["requirement"] = r["requirement"]
            handle.write(json.dumps(record) + "\n")
    scored_db = tmp_path / "theirs.db"
    done = codeif_score(theirs, scored_db, "--protocol", "codeif")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["model"] == "scored:result"
    scored = codeif_report(scored_db, tmp_path / "r")
    assert _scores(scored) == _scores(codeif_report(db, tmp_path / "p"))


def test_a_database_of_static_and_dynamic_runs_exports_one_set_of_files_per_run(exported, tmp_path):
    """The default export is a folder in the authors' layout: a static run's base answers in
    base.jsonl and follow-ups in n_round.jsonl (what their evaluation.py reads, way 1 and ways
    3 to 7), a dynamic run's rounds in rounds.jsonl; one stream (-) holds one conversation
    per task, so there a mixed database needs --run."""
    db, out, task, model = exported
    both = tmp_path / "both.db"
    with sqlite3.connect(db) as source, sqlite3.connect(both) as copy:
        source.backup(copy)
    played = _only_run(both)
    done = codeif(both, "--mode", "dynamic", "--model", model)
    assert done.returncode == 0, done.stderr
    done = cli("sessions", "export", "--format", "codeif", "--db", str(both))
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "both-codeif"
    manifest = json.loads((folder / "convtui-export.json").read_text(encoding="utf-8"))
    sets = {s["mode"]: s for s in manifest["codeif"]}
    assert set(sets) == {"static", "dynamic"}
    assert sets["static"]["run_id"] == played
    static = folder / sets["static"]["folder"]
    assert sets["static"]["files"] == ["base.jsonl", "n_round.jsonl"]
    base, follow_ups = lines(static / "base.jsonl"), lines(static / "n_round.jsonl")
    # Their zero-shot base file: no requirement; then every follow-up in the task's order.
    assert [set(r) for r in base] == [{"task_id", "completion", "model"}]
    order = [i.category for i in instructions(task)]
    assert [r["requirement"] for r in follow_ups] == order[1:]
    # Together they are the single-file export, base first.
    single = lines(out)
    assert [r["completion"] for r in base + follow_ups] == [r["completion"] for r in single]
    dynamic = lines(folder / sets["dynamic"]["folder"] / "rounds.jsonl")
    assert {r["kind"] for r in dynamic} <= {"instruction", "feedback"}
    assert dynamic[0]["requirement"] == BASE
    refused = cli("sessions", "export", "--format", "codeif", "--db", str(both), "--out", "-")
    assert refused.returncode == 2
    assert "two conversations of CodeIF/11" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert refused.stdout == ""
    chosen = cli(
        "sessions", "export", "--format", "codeif", "--db", str(both), "--run", played, "--out", "-"
    )
    assert chosen.returncode == 0, chosen.stderr
    assert chosen.stdout == out.read_text(encoding="utf-8")
    # The folder scores as the single file does.
    scored_db = tmp_path / "folder.db"
    done = codeif_score(static, scored_db)
    assert done.returncode == 0, done.stderr
    assert _scores(codeif_report(scored_db, tmp_path / "f")) == _scores(
        codeif_report(db, tmp_path / "p")
    )


def test_export_without_a_codeif_conversation_is_one_line(tmp_path):
    db = tmp_path / "empty.db"
    Store.open(db).close()
    done = cli("sessions", "export", "--format", "codeif", "--db", str(db))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: no CodeIF-Bench conversation to export in this selection: record some with "
        "convtui bench codeif"
    ]


BASE_LINE = {"task_id": 11, "requirement": BASE, "completion": "def remove_occ(s, ch):\n  pass"}


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("missing.jsonl", None, "no completions file at"),
        ("bad.jsonl", [BASE_LINE, "{not json"], "bad.jsonl line 2: not valid JSON"),
        ("task.jsonl", [{**BASE_LINE, "task_id": 99}], "line 1: unknown task id 99"),
        (
            "requirement.jsonl",
            [BASE_LINE, {**BASE_LINE, "requirement": "Telepathy"}],
            "line 2: unknown requirement 'Telepathy' for task 11",
        ),
        (
            "first.jsonl",
            [{**BASE_LINE, "requirement": "Code Standard"}],
            "line 1: task 11's first completion answers 'Code Standard'",
        ),
    ],
)
def test_a_bad_completions_file_is_one_line_and_exit_2(tmp_path, name, content, says):
    path = tmp_path / name
    if content is not None:
        path.write_text(
            "".join((c if isinstance(c, str) else json.dumps(c)) + "\n" for c in content),
            encoding="utf-8",
        )
    db = tmp_path / "never.db"
    done = codeif_score(path, db)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: ") and says in line
    assert not db.exists()  # refused before anything was created


def codeif_score(path: Path, db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return cli("bench", "codeif", "--score-only", str(path), "--db", str(db), "--json", *args)


def _scores(codeif_json: dict) -> list:
    (group,) = codeif_json["groups"]
    # Every metric of every round, with the tasks it averages over, and the definition.
    return [group["metrics"], group["rounds"], group["ia_by_category"]]


def _only_run(db: Path) -> str:
    with sqlite3.connect(db) as conn:
        ((run_id,),) = conn.execute("SELECT id FROM runs").fetchall()
    return run_id


V0 = DATA / "CodeIF-Bench-L1-function-v0.jsonl"


@pytest.mark.skipif(not V0.exists(), reason=f"no v0 CodeIF data in {DATA}")
def test_a_run_scored_on_other_data_records_that_file_and_report_reads_it(tmp_path):
    """--data picks the tests (the published verdicts were graded on v0); the file's digest
    is part of the run, its path and digest are recorded with it, report rebuilds the rounds
    against it and names it, and says in one line when it has gone."""
    v0 = load_codeif_data(V0)
    current = load_codeif_data(DATA)
    assert v0.sha256 != current.sha256
    task = v0.catalog.get(TASK)
    code = task.ground_truth.replace("\r\n", "\n")
    moved = tmp_path / "data" / V0.name
    moved.parent.mkdir()
    moved.write_bytes(V0.read_bytes())
    path = tmp_path / "v0.jsonl"
    path.write_text(
        "".join(
            json.dumps({"task_id": 11, "requirement": i.category, "completion": code}) + "\n"
            for i in instructions(task)
        ),
        encoding="utf-8",
    )
    db = tmp_path / "v0.db"
    done = codeif_score(path, db, "--data", str(moved))
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(db) as conn:
        selection, settings = conn.execute("SELECT selection, settings_json FROM runs").fetchone()
    assert f";data={v0.sha256};" in selection
    recorded = json.loads(settings)
    assert recorded["data"] == {"path": str(moved.resolve()), "sha256": v0.sha256}
    assert recorded["metrics"] == "authors"
    got = codeif_report(db, tmp_path / "r")
    (group,) = got["groups"]
    assert group["data_sha256"] == v0.sha256
    # v0's instructions for CodeIF/11, not today's (its multi-turn order differs).
    rounds = got["sessions"][0]["rounds"]
    assert [r["instruction"] for r in rounds] == [i.category for i in instructions(task)]
    text = cli("report", "--db", str(db), "--out", str(tmp_path / "t"))
    assert f"data {v0.sha256}" in " ".join(text.stdout.split())
    moved.unlink()
    gone = cli("report", "--db", str(db), "--out", str(tmp_path / "g"))
    assert gone.returncode == 2
    (line,) = gone.stderr.strip().splitlines()
    assert line.startswith("error: ") and str(moved.resolve()) in line
