"""Imported ConvCodeWorld logs keep BigCodeBench's one ``details`` entry per failing subtest,
in the reference's order: the import files each key under its test
(sessions/exchange/ccw_verdicts.py) so that EF:full renders exactly what the reference showed, and
the entries survive the store, ``sessions show``, the JSONL transcript and an export -> import round
trip.

BigCodeBench keys its details ``test.id().split(".")[-1]`` over unittest's ``failures +
errors`` (bigcode-project/bigcodebench: bigcodebench/eval/__init__.py, ``unsafe_execute``);
ConvCodeWorld's EF:full is ``"\\n".join(f"{tc_id.upper()}\\n{tc_result}\\n")`` over them
(sfc-gh-hhan/convcodeworld: convcodeworld/pot.py, ``get_execution_feedback``). The logs here
are written by the tests: made-up code and tracebacks; the test names are read from the task
catalog at ``CONVTUI_DATA_DIR``."""

from __future__ import annotations

import ast
import functools
import json
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console
from store_values import logged_config, turn
from support.data import DATA

from convtui.benchmarks.commands.records.session_views import session_detail
from convtui.core.catalog.loaders import load_catalog
from convtui.core.catalog.tasks import Task
from convtui.core.execution.types import ExecResult, TestIssue, TestOutcome
from convtui.core.feedback.evaluate import FeedbackSettings, render_execution
from convtui.core.feedback.render import declared_test_names, failure_details
from convtui.core.settings.omega import FeedbackConfig
from convtui.sessions import Store
from convtui.sessions.exchange.ccw_import import import_logs
from convtui.sessions.exchange.ccw_verdicts import result_from_eval
from convtui.sessions.exchange.export import export_convcodebench
from convtui.sessions.exchange.static_logs import MANIFEST
from convtui.sessions.reading.browse import load_session
from convtui.sessions.reading.transcript import session_record

SAMPLES = "bigcodebench/sanitized_calibrated_samples/instruct"
TURN0 = "acme--coder-1b--bigcodebench-instruct--vllm-0-1-sanitized-calibrated"
TURNS = "results/v0.3.6/bigcodebench_acme_coder-1b_CF_EF_FULL"
LENGTHS = (10, 50, 100, 150, 5)  # the order BigCodeBench/1's subtests run in


@functools.cache
def _catalog():
    return load_catalog("bigcodebench", DATA)


def _task(task_id: str) -> Task:
    return _catalog().get(task_id)


def _ccw_full(details: dict[str, str]) -> str:
    """ConvCodeWorld's EF:full over a details dict (convcodeworld/pot.py)."""
    return "\n".join(f"{tc_id.upper()}\n{tc_result}\n" for tc_id, tc_result in details.items())


def _trace(method: str, line: int, last: str) -> str:
    """A traceback as unittest stores it under BigCodeBench: the test's frame, no source line
    (the candidate's module has no file), then the exception."""
    frame = f'  File "__test__.py", line {line}, in {method}\n'
    return f"Traceback (most recent call last):\n{frame}{last}\n"


def _bcb1_details() -> tuple[str, str, dict[str, str]]:
    """BigCodeBench/1's details as BigCodeBench writes them for a candidate that fails all
    five subtests of its subtested test (failures, in the order they ran) and raises the
    wrong exception in another test (an error, after every failure)."""
    subtested, _, raising = declared_test_names(_task("BigCodeBench/1").tests.source)
    details = {
        f"{subtested} (length={n})": _trace(subtested, 41, f"AssertionError: {n + 2} != {n}")
        for n in LENGTHS
    }
    details[raising] = _trace(raising, 57, "TypeError: made-up: not a ValueError")
    return subtested, raising, details


def _write_logs(folder: Path, task_id: str, details: dict[str, str]) -> str:
    """A two-turn log set in ConvCodeWorld's static layout (Ω = CF + EF:full): turn 0 fails
    with ``details``, turn 1 was given their EF:full and passes. Returns that EF."""
    shown = _ccw_full(details)
    code0 = "def task_func(length=100):\n    return {'a': length + 2}\n"
    code1 = "def task_func(length=100):\n    return {'a': length}\n"
    (folder / SAMPLES).mkdir(parents=True)
    (folder / TURNS).parent.mkdir(parents=True)
    (folder / SAMPLES / f"{TURN0}.jsonl").write_text(
        json.dumps({"task_id": task_id, "solution": code0}) + "\n"
    )
    line = {
        "task_id": task_id,
        "solution": code1,
        "compilation_feedback": "No syntax errors",
        "execution_feedback": shown,
        "user_feedback": None,
        "log": "made-up turn 1",
        "iteration": 2,
    }
    (folder / f"{TURNS}.jsonl").write_text(json.dumps(line) + "\n")
    for path, code, status, found in (
        (folder / SAMPLES / f"{TURN0}_eval_results.json", code0, "fail", details),
        (folder / f"{TURNS}_eval_results.json", code1, "pass", {}),
    ):
        entry = {"task_id": task_id, "solution": code, "status": status, "details": found}
        path.write_text(json.dumps({"date": "2024-10-01 12:00", "eval": {task_id: [entry]}}))
    return shown


def test_bigcodebench_1_subtests_import_as_the_reference_showed_them(tmp_path: Path) -> None:
    subtested, raising, details = _bcb1_details()
    shown = _write_logs(tmp_path / "logs", "BigCodeBench/1", details)
    # The keys are not sorted ("(length=100)" before "(length=50)"): comparing keys would
    # take the subtests from the third on for errors and render them after the error.
    assert list(details) != sorted(details)
    with Store.open(tmp_path / "ccb.db") as store:
        (imported,) = import_logs(store, tmp_path / "logs")
        (row,) = store.run_sessions(imported.run_id)
        turns = store.load_turns(row.id)  # through the store and back
        detail = load_session(store, row.id)
        config = store.run(imported.run_id).config
    result = turns[0].execution
    assert result is not None
    assert [(t.name, t.status) for t in result.tests] == [(subtested, "fail"), (raising, "error")]
    assert result.tests[0].issues == tuple(
        TestIssue(key, "fail", text) for key, text in list(details.items())[:5]
    )
    assert result.tests[1].issues == ()
    settings = FeedbackSettings.of(config)
    task = _task("BigCodeBench/1")
    assert render_execution(task, result, settings, trim=None) == shown
    assert turns[0].execution_feedback == shown == turns[1].received.execution

    # `sessions show` lists each failing subtest under its test; the JSONL transcript (and
    # `sessions show --json`) keeps them.
    console = Console(width=200, record=True, color_system=None)
    console.print(session_detail(detail))
    text = console.export_text()
    rows = [line for line in text.splitlines() if subtested in line and "length=" in line]
    assert len(rows) == 5  # the table's rows (the EF names them upper case)
    assert all(f"(length={n})" in rows[i] for i, n in enumerate(LENGTHS))
    record = session_record(detail)["turns"][0]["execution"]["tests"]
    assert [issue["name"] for issue in record[0]["issues"]] == list(details)[:5]
    assert "issues" not in record[1]


# Made-up test names for the rules that need no task.
NAMES = ("test_alpha", "test_beta", "test_gamma")


def _tb(last: str) -> str:
    return _trace("test_x", 9, last)


def _imported(details: dict[str, str]) -> ExecResult:
    return result_from_eval({"status": "fail", "details": details}, test_names=NAMES)


def _shape(result: ExecResult) -> list[tuple[str, str, list[tuple[str, str]]]]:
    return [(t.name, t.status, [(i.name, i.status) for i in t.issues]) for t in result.tests]


def test_keys_cut_at_a_dot_go_with_the_test_of_the_key_before() -> None:
    fail, error = _tb("AssertionError: made-up"), _tb("KeyError: 'made-up'")
    details = {
        "test_alpha (x=1)": fail,
        "5)": fail,  # test_alpha (x=2.5), cut at its dot
        "test_beta": fail,
        "0]": error,  # test_alpha [made-up 3.0]: filed under test_beta, the key before
        "test_gamma (n=2)": error,
    }
    result = _imported(details)
    assert _shape(result) == [
        ("test_alpha", "fail", [("test_alpha (x=1)", "fail"), ("test_alpha ...5)", "fail")]),
        ("test_beta", "fail", [("test_beta", "fail"), ("test_beta ...0]", "error")]),
        ("test_gamma", "error", [("test_gamma (n=2)", "error")]),
    ]
    # Rendered with BigCodeBench's keys, the dict comes back entry for entry, in order.
    assert list(failure_details(result, bcb_messages=True).items()) == list(details.items())

    # Cut keys before any key naming a test go with the first that does; when none does,
    # the first key stands for a test. A key only shaped like a subtest of something that
    # is not a test of the task is a cut key too.
    leading = {"5)": fail, "y (z)')": fail, "test_beta (k=1)": fail}
    assert _shape(_imported(leading)) == [
        (
            "test_beta",
            "fail",
            [
                ("test_beta ...5)", "fail"),
                ("test_beta ...y (z)')", "fail"),
                ("test_beta (k=1)", "fail"),
            ],
        )
    ]
    only_cut = {"0, 'b': 2})": fail, "25)": error}
    result = _imported(only_cut)
    assert _shape(result) == [
        ("0, 'b': 2})", "fail", [("0, 'b': 2})", "fail"), ("0, 'b': 2}) ...25)", "error")])
    ]
    for found in (leading, only_cut):
        back = failure_details(_imported(found), bcb_messages=True)
        assert list(back.items()) == list(found.items())


def test_failures_end_where_test_names_go_down_then_where_tracebacks_say() -> None:
    # Test names, not keys, decide: an error test that sorts before a failing one starts the
    # errors, whatever its tracebacks say (none here).
    details = {"test_gamma (n=1)": "tb\n", "test_alpha (x=10)": "tb\n", "test_alpha (x=9)": "tb\n"}
    assert _shape(_imported(details)) == [
        ("test_gamma", "fail", [("test_gamma (n=1)", "fail")]),
        ("test_alpha", "error", [("test_alpha (x=10)", "error"), ("test_alpha (x=9)", "error")]),
    ]
    # Names that never go down leave the split to the last exception of each traceback: an
    # AssertionError (qualified or not, its message over several lines) is a failure, a
    # chained traceback counts by its last exception.
    chained = (
        'Traceback (most recent call last):\n  File "__test__.py", line 3, in f\n'
        "AssertionError: made-up\n\nDuring handling of the above exception, another "
        "exception occurred:\n\n" + _tb("ValueError: made-up")
    )
    details = {
        "test_alpha (x=1)": _tb("AssertionError: 3 != 4\n- made-up\n+ lines"),
        "test_alpha (x=2)": _tb("builtins.AssertionError"),
        "test_beta": chained,
        "test_gamma (n=1)": _tb("numpy.linalg.LinAlgError: made-up"),
    }
    assert [(t.name, t.status) for t in _imported(details).tests] == [
        ("test_alpha", "fail"),
        ("test_beta", "error"),
        ("test_gamma", "error"),
    ]
    for key, text in list(details.items())[:2]:
        one = _imported({key: text, "test_beta": chained})
        assert [(t.name, t.status) for t in one.tests] == [
            ("test_alpha", "fail"),
            ("test_beta", "error"),
        ]


def test_export_then_import_keeps_subtest_issues_and_their_order(tmp_path: Path) -> None:
    subtested, zero, raising = declared_test_names(_task("BigCodeBench/1").tests.source)
    names = [f"{subtested} (length={n})" for n in LENGTHS]
    names[2] = f"{subtested} (length=2.5)"  # a dot: convtui's protocol keeps the whole name
    issues = (
        *(
            TestIssue(name, "fail", _trace(subtested, 41, f"AssertionError: {i}"))
            for i, name in enumerate(names)
        ),
        TestIssue(subtested, "fail", _trace(subtested, 44, "AssertionError: own")),
    )
    execution = ExecResult(
        "fail",
        tests=(
            TestOutcome(subtested, "fail", 0.5, issues[0].traceback, issues=issues),
            TestOutcome(zero, "pass", 0.1),
            TestOutcome(raising, "error", 0.1, _trace(raising, 57, "TypeError: made-up")),
        ),
        isolation="landlock",
    )
    cfg = logged_config(feedback=FeedbackConfig("full"), simulator=None, turns=2)
    task = _task("BigCodeBench/1")
    settings = FeedbackSettings.of(cfg)
    source = tmp_path / "live.db"
    with Store.open(source) as store:
        run_id = store.create_run("live", cfg, "ids=1", ["BigCodeBench/1"])
        (row,) = store.run_sessions(run_id)
        first = replace(
            turn(0),
            execution=execution,
            execution_feedback=render_execution(task, execution, settings, trim=None),
        )
        store.save_turn(row.id, first, "running")
        store.save_turn(row.id, turn(1, passed=True), "solved")
        original = store.load_turns(row.id)[0]
        export_convcodebench(store, [row.id], tmp_path / "out")
    assert original.execution == execution
    # BigCodeBench's details alone, as ConvCodeWorld's scripts read them: with our manifest
    # beside them the verdict comes back whole instead (test_ccw_restore.py).
    (tmp_path / "out" / MANIFEST).unlink()
    with Store.open(tmp_path / "back.db") as store:
        (imported,) = import_logs(store, tmp_path / "out")
        (back_row,) = store.run_sessions(imported.run_id)
        back = store.load_turns(back_row.id)
    got = back[0].execution
    assert got is not None
    failing = [t for t in execution.tests if t.status != "pass"]
    assert [(t.name, t.status, t.traceback, t.issues) for t in got.tests] == [
        (t.name, t.status, t.traceback, t.issues) for t in failing
    ]
    assert list(failure_details(got).items()) == list(failure_details(execution).items())
    assert back[1].received.execution == original.execution_feedback


def _subtested(source: str) -> set[str]:
    """The tests of ``source``'s ``TestCases`` whose body opens a ``self.subTest``."""
    module = ast.parse(source)
    found = set()
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef) and "self.subTest(" in ast.unparse(node):
            found.add(node.name)
    return found


@pytest.mark.parametrize("number", [1, 377, 463, 488, 512, 516, 663])
def test_every_subtest_task_renders_back_as_written(number: int) -> None:
    """For each BigCodeBench task whose tests use ``self.subTest``: a result shaped as the
    executor records one (every subtested test with failing subtests, some described with
    a dot, one an error, then its own failure; every other test failing or raising), its
    details as BigCodeBench keys them, imported back: EF:full gives the same text, and each
    entry's kind follows its traceback."""
    task = _task(f"BigCodeBench/{number}")
    names = declared_test_names(task.tests.source)
    subtested = _subtested(task.tests.source)
    assert subtested and subtested <= set(names)
    fail, error = "AssertionError: made-up", "TypeError: made-up"
    tests = []
    for i, name in enumerate(names):
        if name in subtested:
            issues = (
                TestIssue(f"{name} (x=3)", "fail", _trace(name, 20, fail)),
                TestIssue(f"{name} (x={i}.5)", "fail", _trace(name, 21, fail)),
                TestIssue(f"{name} [made-up] (x=1)", "error", _trace(name, 22, error)),
                TestIssue(f"{name} (x=10)", "fail", _trace(name, 23, fail)),
                TestIssue(name, "fail", _trace(name, 24, fail)),
            )
            tests.append(TestOutcome(name, "fail", 0.1, issues[0].traceback, issues=issues))
        else:
            status, last = ("fail", fail) if i % 2 else ("error", error)
            tests.append(TestOutcome(name, status, 0.1, _trace(name, 30, last)))  # type: ignore[arg-type]
    details = failure_details(ExecResult("fail", tests=tuple(tests)), bcb_messages=True)
    imported = result_from_eval({"status": "fail", "details": details}, test_names=names)
    assert list(failure_details(imported, bcb_messages=True).items()) == list(details.items())
    config = logged_config("convcodeworld", FeedbackConfig("full"), None, turns=1)
    settings = FeedbackSettings.of(config)
    assert render_execution(task, imported, settings, trim=None) == _ccw_full(details)
    for test in imported.tests:
        for issue in test.issues or (test,):
            assert issue.status == ("fail" if fail in issue.traceback else "error")
