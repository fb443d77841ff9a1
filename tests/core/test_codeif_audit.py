"""The audit's rules (core/codeif/audit.py): a placeholder answer of the right signature, and
each instruction test classed from its text and its outcomes on the reference and on the
placeholder. Real tasks from ../shared/data; outcomes as the executor reports them."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.data import data_file

from convtui.core.catalog.loaders import load_codeif
from convtui.core.catalog.tasks import Task
from convtui.core.codeif.audit import TestText, audit_row, classify, instruction_tests, placeholder
from convtui.core.execution.types import TestOutcome
from convtui.core.syntax import parse_python


def _task(name: str, task_id: str) -> Task:
    return next(t for t in load_codeif(data_file(name)) if t.id == task_id)


def _text(task: Task, category: str) -> TestText:
    return next(t for t in instruction_tests(task) if t.category == category)


def _out(status: str, last: str = "") -> TestOutcome:
    return TestOutcome("t", status, traceback=f"Traceback ...\n{last}" if last else "")


def test_placeholder_keeps_the_signature_and_does_nothing() -> None:
    task = _task("CodeIF-Bench-L1-function.jsonl", "CodeIF/11")
    assert placeholder(task) == "def remove_occ(s, ch):\n    pass\n"


@pytest.mark.parametrize("name", ["CodeIF-Bench-L2-repo.jsonl", "CodeIF-Bench-L3-repo.jsonl"])
def test_every_repository_placeholder_parses(name: str) -> None:
    for task in load_codeif(data_file(name)):
        parse_python(placeholder(task))


def test_a_test_the_placeholder_passes_checks_nothing() -> None:
    text = _text(_task("CodeIF-Bench-L1-function.jsonl", "CodeIF/11"), "Exception Handling")
    found = classify(text, _out("fail", "AssertionError"), _out("pass"))
    assert found[:2] == ("passes-any", "no-raise-check")


def test_a_form_instruction_the_placeholder_meets_still_judges() -> None:
    text = _text(_task("CodeIF-Bench-L1-function.jsonl", "CodeIF/11"), "Code Complexity")
    assert classify(text, _out("fail", "AssertionError"), _out("pass"))[0] == "judges"
    assert classify(text, _out("pass"), _out("pass"))[0] == "unconfirmed"


def test_the_same_name_error_on_both_answers_is_a_missing_import() -> None:
    text = _text(_task("CodeIF-Bench-L1-function.jsonl", "CodeIF/11"), "Edge Case Handling")
    error = "NameError: name 'inspect' is not defined"
    found = classify(text, _out("error", error), _out("error", error))
    assert found == ("cannot-pass", "missing-import", error)


def test_a_test_that_does_not_parse_cannot_pass() -> None:
    task = _task("CodeIF-Bench-L1-function-v0.jsonl", "CodeIF/11")
    broken = TestText(task, "Exception Handling", "x", "try: f(); assert False except E: pass")
    row = audit_row("v0", broken, _out("error"), _out("error"))
    assert (row.verdict, row.defect, row.convtui) == ("cannot-pass", "syntax-error", "left out")


def test_repository_defects_are_read_from_the_text_where_the_project_is_missing() -> None:
    found = {}
    for task in load_codeif(data_file("CodeIF-Bench-L2-repo.jsonl")):
        for text in instruction_tests(task):
            row = audit_row("L2", text, None, None)
            found.setdefault(row.defect, row)
    assert found["indented-source"].convtui == "dedent-source"
    assert found["id-names-no-test"].convtui == "renamed to its id"
    assert found[""].verdict == "not-run"


def test_the_committed_errata_name_the_tests_they_repair() -> None:
    from convtui.core.codeif.repairs import ERRATA, errata

    assert Path(ERRATA).is_file()
    repairs = {e.action for e in errata().values()}
    assert "else-raise" in repairs


def test_an_audit_selects_tasks_of_every_level_in_todays_and_the_first_files() -> None:
    from convtui.benchmarks.runs.codeif_audit import audit_tasks

    data_file("CodeIF-Bench-L2-repo-v0.jsonl")
    found = audit_tasks(None, "CodeIF/29,CodeIF/2008")
    assert sorted(found) == sorted(
        (f"CodeIF-Bench-{name}.jsonl", task)
        for name in ("L1-function", "L1-function-v0", "L2-repo", "L2-repo-v0")
        for task in load_codeif(data_file(f"CodeIF-Bench-{name}.jsonl"))
        if task.id in ("CodeIF/29", "CodeIF/2008")
    )


def test_a_repository_test_that_does_not_parse_leaves_its_module_to_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Put into its module, a test whose text does not compile stops pytest from collecting
    it, and every other test there would never run (CodeIF/1018, /2020, /3006 in their
    projects). The audit runs the others without it and classes it from its text."""
    from dataclasses import replace

    from support.projects import ADD, TASK, make_project

    from convtui.benchmarks.runs.codeif_audit import run_audit
    from convtui.core.catalog.tasks import Requirement, TestSpec
    from convtui.core.execution.executor import Executor

    make_project(tmp_path)
    monkeypatch.setenv("CONVTUI_PROJECTS_DIR", str(tmp_path))
    broken = "tests/test_core.py::CounterTest::test_add_broken"
    judging = "tests/test_core.py::CounterTest::test_add_returns"
    judging_text = "def test_add_returns(self):\n    assert Counter().add(0) == 0\n"

    def requirement(category: str, name: str, text: str) -> Requirement:
        return Requirement(category, "words", TestSpec("pytest", snippets=((name, text),)))

    task = replace(
        TASK,
        ground_truth=ADD,
        requirements=(
            requirement("Code Standard", broken, "def test_add_broken(self):\n    (\n"),
            requirement("Edge Case Handling", judging, judging_text),
        ),
    )
    with Executor(jobs=1) as running:
        rows = {r.test: r for r in run_audit([("tiny.jsonl", task)], running)}
    assert (rows[broken].verdict, rows[broken].defect) == ("cannot-pass", "syntax-error")
    found = rows[judging]
    assert (found.verdict, found.reference, found.placeholder) == ("judges", "pass", "fail")
