"""ConvCodeWorld's static layout: a hand-written folder (tests/fixtures/ccw_static, see its
README) imports into a real store as the files say, and a store exported to that layout and
imported back keeps every code, feedback text and verdict."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from store_values import logged_config, turn
from support.cli import invoke
from support.data import DATA

from convtui.core.catalog.loaders import load_catalog
from convtui.core.feedback.evaluate import FeedbackSettings, render_execution
from convtui.core.feedback.render import failure_details
from convtui.core.settings.omega import FeedbackConfig
from convtui.sessions import Store
from convtui.sessions.database.errors import ImportFormatError
from convtui.sessions.exchange.ccw_files import parse_turn_file
from convtui.sessions.exchange.ccw_import import import_logs
from convtui.sessions.exchange.ccw_verdicts import result_from_eval
from convtui.sessions.exchange.export import export_convcodebench
from convtui.sessions.exchange.static_logs import MANIFEST

FIXTURE = Path(__file__).parents[1] / "fixtures" / "ccw_static"


def test_turn_file_names_parse_as_convcodeworld_writes_them() -> None:
    name, turn_no = parse_turn_file("bigcodebench_a_b_CF_EF_UNIT_SEF_by_gpt-4o_ITER=7.jsonl")
    assert (name.model, name.feedback, name.by, turn_no) == (
        "a_b",
        FeedbackConfig("partial", "expert"),
        "gpt-4o",
        7,
    )
    assert name.turn_file(1) == "bigcodebench_a_b_CF_EF_UNIT_SEF_by_gpt-4o.jsonl"
    assert parse_turn_file("bigcodebench_m_CF.jsonl")[0].feedback == FeedbackConfig()
    assert parse_turn_file("bigcodebench_m_CF_eval_results.json") is None


def test_the_hand_written_folder_imports_as_its_files_say(tmp_path: Path) -> None:
    with Store.open(tmp_path / "ccb.db") as store:
        (imported,) = import_logs(store, FIXTURE)
        assert (imported.model, imported.feedback, imported.sessions) == (
            "acme/coder-1b",
            "CF,EF:full,VF:novice",
            2,
        )
        run = store.run(imported.run_id)
        assert run.kind == "live" and run.origin.startswith("imported from ")
        assert run.config.protocol == "convcodeworld" and run.config.simulator == "gpt-4o"
        rows = {row.task_id: row for row in store.run_sessions(imported.run_id)}
        t3 = store.load_turns(rows["BigCodeBench/3"].id)
        t8 = store.load_turns(rows["BigCodeBench/8"].id)
        # /3: three turns, the last passes; /8 solved at turn 1, its "Already solved" line
        # is not a turn.
        assert [t.passed for t in t3] == [False, False, True]
        assert [t.passed for t in t8] == [False, True]
        assert rows["BigCodeBench/3"].status == "solved"
        assert t3[1].received.user == "Return a dictionary keyed by the letters, not a list."
        assert t3[1].received.user_source == "simulator:novice:gpt-4o"
        assert t8[0].code.startswith("def task_func")  # turn 0: the sanitized solution
        # The verdicts render back into the execution feedback the next line recorded, as
        # pot.py's get_execution_feedback renders the eval's details.
        settings = FeedbackSettings.of(run.config)
        catalog = load_catalog("bigcodebench", DATA)
        task = catalog.get("BigCodeBench/3")
        for k in (0, 1):
            rendered = render_execution(task, t3[k].execution, settings, trim=None)
            assert rendered == t3[k + 1].received.execution
        task8 = catalog.get("BigCodeBench/8")
        assert render_execution(task8, t8[0].execution, settings, trim=None) == (
            t8[1].received.execution
        )
        # Importing again adds nothing.
        (again,) = import_logs(store, FIXTURE)
        assert again.already and again.run_id == imported.run_id


def test_failures_then_errors_keep_their_order() -> None:
    entry = {"status": "fail", "details": {"test_b": "tb\n", "test_c": "tc\n", "test_a": "ta\n"}}
    result = result_from_eval(entry)
    assert [(t.name, t.status) for t in result.tests] == [
        ("test_b", "fail"),
        ("test_c", "fail"),
        ("test_a", "error"),
    ]


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        ("drop-turn0", "not its turn-0 file"),
        ("drop-eval", "_eval_results.json is missing"),
        ("drop-iter1", "turn file 1 missing"),
        ("empty", "holds no ConvCodeWorld turn file"),
    ],
)
def test_a_folder_not_in_the_layout_is_one_clear_error(
    tmp_path: Path, damage: str, expected: str
) -> None:
    folder = tmp_path / "logs"
    shutil.copytree(FIXTURE, folder)
    results = folder / "results" / "v0.3.6"
    stem = "bigcodebench_acme_coder-1b_CF_EF_FULL_SNF_by_gpt-4o"
    if damage == "drop-turn0":
        shutil.rmtree(folder / "bigcodebench")
    elif damage == "drop-eval":
        (results / f"{stem}_ITER=2_eval_results.json").unlink()
    elif damage == "drop-iter1":
        (results / f"{stem}.jsonl").unlink()
    else:
        shutil.rmtree(results)
    with Store.open(tmp_path / "x.db") as store, pytest.raises(ImportFormatError) as raised:
        import_logs(store, folder)
    assert expected in str(raised.value)
    assert "\n" not in str(raised.value)


def test_export_then_import_loses_no_code_feedback_or_verdict(tmp_path: Path) -> None:
    """Store values written by hand (tests/sessions/store_values.py); the round trip goes
    through ConvCodeWorld's files, where feedback sits with the turn it feeds."""
    source = tmp_path / "live.db"
    cfg = logged_config()
    with Store.open(source) as store:
        run_id = store.create_run("live", cfg, "ids=3,8", ["BigCodeBench/3", "BigCodeBench/8"])
        patterns = {"BigCodeBench/3": (False, False, False, False), "BigCodeBench/8": (False, True)}
        for row in store.run_sessions(run_id):
            verdicts = patterns[row.task_id]
            for idx, passed in enumerate(verdicts):
                last = idx + 1 == len(verdicts)
                status = ("solved" if passed else "exhausted") if last else "running"
                store.save_turn(row.id, turn(idx, passed=passed), status)
        original = {row.task_id: store.load_turns(row.id) for row in store.run_sessions(run_id)}
        export_convcodebench(store, [r.id for r in store.run_sessions(run_id)], tmp_path / "out")
    files = sorted(
        p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*")
    )
    assert (
        "results/v0.3.6/bigcodebench_acme_coder-1b_CF_EF_FULL_SNF_by_gpt-4o_ITER=3.jsonl" in files
    )
    assert (
        "bigcodebench/sanitized_calibrated_samples/instruct/"
        "acme--coder-1b--bigcodebench-instruct--vllm-0-1-sanitized-calibrated.jsonl"
    ) in files
    # Every turn file holds every task: /8, solved at turn 1, is handed on as "Already solved".
    last = (
        tmp_path
        / "out/results/v0.3.6/bigcodebench_acme_coder-1b_CF_EF_FULL_SNF_by_gpt-4o_ITER=3.jsonl"
    )
    lines = {json.loads(x)["task_id"]: json.loads(x) for x in last.read_text().splitlines()}
    assert lines["BigCodeBench/8"]["compilation_feedback"] is None
    # The files alone, as ConvCodeWorld's scripts read them: with our manifest beside them the
    # sessions come back as recorded instead (test_ccw_restore.py).
    (tmp_path / "out" / MANIFEST).unlink()
    with Store.open(tmp_path / "back.db") as store:
        (imported,) = import_logs(store, tmp_path / "out")
        back = {
            row.task_id: store.load_turns(row.id) for row in store.run_sessions(imported.run_id)
        }
    for task_id, turns in original.items():
        assert [t.code for t in back[task_id]] == [t.code for t in turns]
        assert [t.passed for t in back[task_id]] == [t.passed for t in turns]
        for k in range(1, len(turns)):
            got = back[task_id][k].received
            # Our protocol records the feedback about turn k-1 with turn k-1.
            assert (got.compilation, got.execution, got.user) == (
                turns[k - 1].compile_feedback,
                turns[k - 1].execution_feedback,
                turns[k - 1].verbal_feedback,
            )
            assert failure_details(back[task_id][k - 1].execution) == failure_details(
                turns[k - 1].execution
            )


def test_the_command_line_imports_then_shows_an_imported_session(tmp_path: Path) -> None:
    db = tmp_path / "ccb.db"
    done = invoke("sessions", "import", str(FIXTURE), "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    (imported,) = json.loads(done.stdout)
    assert imported["log_set"] == "bigcodebench_acme_coder-1b_CF_EF_FULL_SNF_by_gpt-4o"
    with Store.open(db) as store:
        sid = {r.task_id: r.id for r in store.run_sessions(imported["run_id"])}["BigCodeBench/8"]
    shown = invoke("sessions", "show", sid, "--db", str(db))
    assert shown.returncode == 0, shown.stderr
    assert "You forgot to import Counter." in shown.stdout
    # A BigCodeBench report names failing tests only: no made-up test counts.
    assert "imported verdict" in shown.stdout and "tests passed" not in shown.stdout
