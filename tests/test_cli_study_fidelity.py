"""``convtui study fidelity`` on the command line, with scripted ``mock:`` models as simulator
and target: the report and its JSON (the control in every table), the errors as one line,
a second run that asks nothing, the sessions' own tables byte-identical under a dump, and a
real process killed with SIGKILL mid-run then run again: nothing asked or executed twice,
nothing lost."""

from __future__ import annotations

import json
import signal
import subprocess
import time
import warnings
from pathlib import Path

import pytest
from support.ccw_turns import SIM_REPLY, UF_EXPERT
from support.cli import assert_one_line_error, convtui_argv, env, invoke
from support.data import needs_bigcodebench
from support.fidelity import count, dump, record_study
from support.scripted import script
from support.sqlite_rows import fetchall
from support.study_play import FAILS

from convtui.core.ccw.template import templates_sha256

pytestmark = needs_bigcodebench

STATES = 4  # two annotators, two feedback turns each (support/fidelity.py)
SOURCES = 3  # none, the person, one simulator


@pytest.fixture
def study(tmp_path, executor, catalog) -> Path:
    db = tmp_path / "study.db"
    record_study(db, executor, catalog, tmp_path / "scripts")
    return db


def _models(folder: Path, delay_s: float = 0.0) -> tuple[str, str]:
    simulator = script(folder / "sim.jsonl", ["unused"], ["Check test_one: it fails."])
    target = script(folder / "target.jsonl", [FAILS], delay_s=delay_s)
    return simulator, target


def _args(db: Path, simulator: str, target: str, *extra: str) -> list[str]:
    return [
        "study", "fidelity", "--db", str(db), "--simulator", simulator, "--target", target,
        "--resamples", "200", *extra,
    ]  # fmt: skip


def test_report_json_and_a_second_run_that_asks_nothing(study: Path, tmp_path: Path) -> None:
    # Kept where real models' files are, in a folder with a long path: the sources' labels
    # (a simulator's names its model) are that long, and the figures must still have room.
    models = tmp_path / "models" / "kept-in-a-folder-named-as-long-as-real-model-paths-get"
    models.mkdir(parents=True)
    simulator, target = _models(models)
    before = dump(study)
    done = invoke(*_args(study, simulator, target, "--json", "--seed", "3"))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    sim = f"simulator:expert:{simulator}"
    # The scripted target writes the same failing code whatever it is told: no source gains.
    assert [r["source"] for r in data["sources"]] == ["none", "person", sim]
    assert all(
        r["pass_rate"] == 0.0 and r["gain_pass"]["difference"]["value"] == 0.0
        for r in data["sources"]
    )
    assert all(rows[0]["source"] == "none" for rows in data["sources_by_task"].values())
    assert [p["other"] for p in data["pairs"]] == ["none", sim]
    assert {a["annotator"] for a in data["annotators"]} == {"ana", "ben"}
    boot = data["bootstrap"]
    assert (boot["unit"], boot["resamples"], boot["seed"], boot["level"]) == (
        "sessions",
        200,
        3,
        0.95,
    )
    assert list(data["by_target"]) == [target]
    [who] = data["simulators"]
    assert (who["model"], who["persona"], who["protocol"]) == (simulator, "expert", "convtui")
    assert [w["source"] for w in data["words"]["sources"]] == ["person", sim]
    assert data["run"] == {"simulator_steps": STATES, "target_turns": STATES * SOURCES}
    assert count(study, "SELECT count(*) FROM fidelity_turns") == STATES * SOURCES
    # Each turn's execution is a row of the shared executions table.
    assert (
        count(
            study,
            "SELECT count(*) FROM fidelity_turns f JOIN executions e ON e.id = f.execution_id",
        )
        == STATES * SOURCES
    )
    assert dump(study) == before

    calls = count(study, "SELECT count(*) FROM fidelity_calls")
    again = invoke(*_args(study, simulator, target, "--json", "--seed", "3"))
    assert again.returncode == 0, again.stderr
    second = json.loads(again.stdout)
    assert second["run"] == {"simulator_steps": 0, "target_turns": 0}
    assert count(study, "SELECT count(*) FROM fidelity_calls") == calls
    assert {k: v for k, v in second.items() if k != "run"} == {
        k: v for k, v in data.items() if k != "run"
    }
    assert dump(study) == before

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        shown = invoke(*_args(study, simulator, target, "--figures", str(tmp_path / "figs")))
    assert shown.returncode == 0, shown.stderr
    # matplotlib says so when the labels leave the axes no room: the figure is then blank.
    said = [str(w.message) for w in caught]
    assert not [w for w in said if "collapsed" in w], said
    assert "bootstrap over sessions" in shown.stdout
    for table in ("Feedback sources, pooled", "What each annotator", "against each other",
                  "What the words are", "Who the simulated sources are"):  # fmt: skip
        assert table in shown.stdout
    assert shown.stdout.count("none (control)") >= 4
    assert sorted(p.name for p in (tmp_path / "figs").iterdir()) == [
        "study-fidelity-gain.png", "study-fidelity-gain.svg",
        "study-fidelity-pairs.png", "study-fidelity-pairs.svg",
    ]  # fmt: skip


def test_convcodeworlds_simulator_prompts_stand_beside_convtuis(
    study: Path, tmp_path: Path, catalog
) -> None:
    """``--simulator-prompts`` both: each state gets the simulator twice, once with convtui's
    prompts and once as ConvCodeWorld's simulator alone (its DSPy prompt as one raw
    completion, its reply cut as the reference cuts the expert's), each its own source."""
    simulator = script(tmp_path / "sim.jsonl", ["unused"], [SIM_REPLY])
    target = script(tmp_path / "target.jsonl", [FAILS])
    both = ("--simulator-prompts", "convtui", "--simulator-prompts", "convcodeworld", "--json")
    before = dump(study)
    done = invoke(*_args(study, simulator, target, *both))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    sim = f"simulator:expert:{simulator}"
    ccw = f"{sim} [convcodeworld]"
    assert [r["source"] for r in data["sources"]] == ["none", "person", sim, ccw]
    who = {w["source"]: w for w in data["simulators"]}
    assert (who[ccw]["protocol"], who[ccw]["prompt_sha256"]) == (
        "convcodeworld",
        templates_sha256(),
    )
    assert who[sim]["protocol"] == "convtui" and who[sim]["prompt_sha256"] != templates_sha256()
    assert data["run"] == {"simulator_steps": 2 * STATES, "target_turns": STATES * 4}
    said = fetchall(
        study,
        "SELECT b.text FROM fidelity_feedback f JOIN blobs b ON b.hash = f.text_blob "
        "WHERE f.protocol = 'convcodeworld'",
    )
    calls = fetchall(
        study,
        "SELECT f.kind, f.purpose, f.messages_json, s.task_id FROM fidelity_calls f "
        "JOIN sessions s ON s.id = f.session_id WHERE f.source = ? AND f.role = 'simulator'",
        (ccw,),
    )
    texts = dict(fetchall(study, "SELECT hash, text FROM blobs"))
    assert [text for (text,) in said] == [UF_EXPERT] * STATES
    # One call per distinct request: each session's two states show the same code.
    assert len(calls) == len({messages for _, _, messages, _ in calls}) == STATES // 2
    for kind, purpose, messages, task_id in calls:
        [(role, blob)] = json.loads(messages)
        assert (kind, purpose, role) == ("text", "simulate", "user")
        prompt = texts[blob]
        # The expert's DSPy signature: the ground truth field, the code fenced as shown.
        assert "Ground Truth Code: Ground truth python code to simulate user intention" in prompt
        assert catalog.get(task_id).ground_truth in prompt
        assert prompt.endswith("Reasoning: Let's think step by step in order to")
    assert dump(study) == before
    again = invoke(*_args(study, simulator, target, *both))
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["run"] == {"simulator_steps": 0, "target_turns": 0}


def test_identical_simulator_requests_in_flight_at_once_are_sent_once(
    study: Path, tmp_path: Path
) -> None:
    """The study's model writes the same failing code at every turn, so each session's two
    states show the simulator the same code and feedback: two distinct requests over four
    states. Asked at once (the delay keeps each call in flight while the others start), each
    distinct request is sent and logged once, and its answer is recorded for both states,
    each linked to that call. Before: one call per state (4 for 2 requests)."""
    simulator = script(tmp_path / "sim.jsonl", ["unused"], ["Check test_one."], delay_s=0.5)
    target = script(tmp_path / "target.jsonl", [FAILS])
    done = invoke(*_args(study, simulator, target, "--json"))
    assert done.returncode == 0, done.stderr
    calls = fetchall(study, "SELECT id, request_hash FROM fidelity_calls WHERE role = 'simulator'")
    requests = {hashed for _id, hashed in calls}
    assert (len(calls), len(requests)) == (2, 2)
    said = fetchall(study, "SELECT call_id, request_hash, status FROM fidelity_feedback")
    assert len(said) == STATES
    assert {(call, hashed) for call, hashed, _ in said} == set(calls)
    assert {status for *_, status in said} == {"said"}
    assert json.loads(done.stdout)["run"] == {"simulator_steps": STATES, "target_turns": 12}


def test_errors_are_one_line(tmp_path: Path) -> None:
    simulator, target = _models(tmp_path)
    missing = invoke(*_args(tmp_path / "none.db", simulator, target))
    assert_one_line_error(missing, "no database")
    empty = tmp_path / "empty.db"
    from convtui.sessions import Store

    Store.open(empty).close()
    nothing = invoke(*_args(empty, simulator, target))
    assert_one_line_error(nothing, "no turn where a person gave verbal feedback")
    assert "convtui session --user human" in nothing.stderr


def test_an_unknown_model_spec_is_one_line(study: Path, tmp_path: Path) -> None:
    simulator, _ = _models(tmp_path)
    bad = invoke(*_args(study, simulator, "nonsense-model"))
    assert_one_line_error(bad, "unknown model spec")
    assert count(study, "SELECT count(*) FROM fidelity_calls") == 0


def test_killed_mid_run_and_run_again_asks_and_runs_nothing_twice(
    study: Path, tmp_path: Path
) -> None:
    simulator, target = _models(tmp_path, delay_s=0.4)
    before = dump(study)
    argv = convtui_argv(*_args(study, simulator, target, "--json", "--concurrency", "1"))
    quiet = subprocess.DEVNULL
    process = subprocess.Popen(argv, stdout=quiet, stderr=quiet, env=env())
    deadline = time.monotonic() + 120
    while process.poll() is None and time.monotonic() < deadline:
        if _done_turns(study) >= 2:
            break
        time.sleep(0.05)
    assert process.poll() is None, "the run ended before it could be killed"
    process.send_signal(signal.SIGKILL)
    process.wait(30)
    kept = _done_turns(study)
    assert 2 <= kept < STATES * SOURCES

    done = subprocess.run(argv, capture_output=True, text=True, env=env(), timeout=300)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["run"]["target_turns"] == STATES * SOURCES - kept
    assert count(study, "SELECT count(*) FROM fidelity_turns") == STATES * SOURCES
    assert count(study, "SELECT count(*) FROM fidelity_feedback") == STATES
    # Nothing answered was asked again: one answered call per request.
    assert (
        count(
            study,
            "SELECT count(*) FROM (SELECT request_hash FROM fidelity_calls WHERE status = 'ok' "
            "GROUP BY request_hash, purpose, seq HAVING count(*) > 1)",
        )
        == 0
    )
    # Nothing run was run again: one execution per cache key.
    assert (
        count(
            study,
            "SELECT count(*) FROM (SELECT cache_key FROM executions GROUP BY cache_key "
            "HAVING count(*) > 1)",
        )
        == 0
    )
    assert count(study, "SELECT count(*) FROM fidelity_calls WHERE status = 'started'") == 0
    assert dump(study) == before
    with subprocess.Popen(argv, stdout=subprocess.PIPE, env=env(), text=True) as third:
        out, _ = third.communicate(timeout=300)
    assert json.loads(out)["run"] == {"simulator_steps": 0, "target_turns": 0}


def _done_turns(db: Path) -> int:
    try:
        return count(db, "SELECT count(*) FROM fidelity_turns")
    except Exception:  # the migration may not be committed yet
        return 0


def test_the_export_card_has_the_fidelity_section_and_it_loads_with_datasets(
    study: Path, tmp_path: Path, offline_hub: Path
) -> None:
    import datasets

    simulator, target = _models(tmp_path)
    done = invoke(*_args(study, simulator, target, "--json"))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    out = tmp_path / "dataset"
    exported = invoke("study", "export", "--db", str(study), "--out", str(out), "--json")
    assert exported.returncode == 0, exported.stderr
    assert json.loads(exported.stdout)["files"] == [
        str(out / "data/transcripts.parquet"),
        str(out / "data/fidelity.parquet"),
        str(out / "README.md"),
    ]
    card = (out / "README.md").read_text()
    assert "## Simulated user fidelity" in card
    assert "| `none (control)` |" in card
    sim = f"simulator:expert:{simulator}"
    assert f"| `{sim}` | `{simulator}` | expert | convtui | `" in card
    turns = datasets.load_dataset(str(out), split="train", cache_dir=str(offline_hub))
    assert len(turns) == 6  # two sessions of three turns
    rows = datasets.load_dataset(
        str(out), "fidelity", split="train", cache_dir=str(offline_hub)
    ).to_list()
    assert len(rows) == STATES * SOURCES
    assert {r["source"] for r in rows} == {"none", "person", sim}
    assert {r["simulator_model"] for r in rows if r["source"] == sim} == {simulator}
    assert all(r["feedback"] is None for r in rows if r["source"] == "none")
    # The card's numbers are the report's (same seed 0 and 2000 resamples as the default).
    person = next(r for r in report["sources"] if r["source"] == "person")
    assert f"| `person` | {person['states']} | {100 * person['pass_rate']:.1f} |" in card
