"""CodeIF-Bench's repository-level rows as tasks: ids, levels, where the function sits, the
tests that check it and the context the model is given."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from convtui.core.catalog.loaders import load_catalog
from convtui.core.catalog.repo_rows import RepoRowError, parse_repo_row
from convtui.core.codeif.data_file import load_codeif_data
from convtui.core.codeif.instructions import instructions
from convtui.core.codeif.programs import project_round_tests
from convtui.core.projects.splice import named_as

DATA_DIR = Path(os.environ.get("CONVTUI_DATA_DIR", "../shared/data"))
FILES = {
    1: "CodeIF-Bench-L1-repo.jsonl",
    2: "CodeIF-Bench-L2-repo.jsonl",
    3: "CodeIF-Bench-L3-repo.jsonl",
}


def _rows(level: int, suffix: str = "") -> list[dict]:
    name = FILES[level].replace(".jsonl", f"{suffix}.jsonl")
    return [json.loads(line) for line in (DATA_DIR / name).read_text().splitlines()]


def test_the_suite_holds_every_level_with_ids_by_level() -> None:
    catalog = load_catalog("codeif", DATA_DIR)
    assert len(catalog) == 124
    by_level: dict[object, list[str]] = {}
    for task in catalog:
        by_level.setdefault(task.site.level if task.site else "function", []).append(task.id)
    assert len(by_level["function"]) == 50
    assert by_level[1] == [f"CodeIF/{1000 + n}" for n in range(1, 21)]
    assert by_level[2] == [f"CodeIF/{2000 + n}" for n in range(1, 41)]
    assert by_level[3] == [f"CodeIF/{3000 + n}" for n in range(1, 15)]
    # A range selects one level.
    assert [t.id for t in catalog.select("3001-3999")] == by_level[3]


@pytest.mark.parametrize("level", [1, 2, 3])
def test_a_row_becomes_a_task_that_says_where_its_function_sits(level: int) -> None:
    rows = _rows(level)
    catalog = load_catalog("codeif", DATA_DIR / FILES[level])
    assert len(catalog) == len(rows)
    for place, (row, task) in enumerate(zip(rows, catalog, strict=True), start=1):
        site = task.site
        assert site is not None and site.level == level
        assert task.id == f"CodeIF/{level * 1000 + place}"
        assert site.namespace == row["namespace"]
        assert site.completion_path == site.project_path + "/" + site.file_in_project
        assert (site.signature_line, site.body_end) == (
            row["signature_position"][0],
            row["body_position"][1],
        )
        assert site.indent == row["indent"]
        assert task.entry_point == row["namespace"].rsplit(".", 1)[1]
        assert task.tests.kind == "pytest"
        assert [name for name, _ in task.tests.snippets] == list(dict.fromkeys(row["tests"]))
        assert task.prompt == row["prompt"].replace("\r\n", "\n")
        # Every follow-up instruction runs one test under the id the row gives it.
        for requirement in task.requirements:
            spec = row["requirements"][requirement.category]
            ((test_id, code),) = requirement.tests.snippets
            assert test_id == spec["test"].strip("'") and code.strip()
            assert test_id.startswith("tests/") or "/" in test_id.split("::")[0]
    if level == 2:
        assert all(
            t.site and t.site.context == r["context"] for t, r in zip(catalog, rows, strict=True)
        )
    if level == 3:
        task, row = next(iter(catalog)), rows[0]
        assert task.site and task.site.intra_context == row["intra_context"]
        assert [name for name, _ in task.site.cross_context] == [
            name for entry in row["cross_context"] for name in entry
        ]


def test_context_instructions_are_first_class_on_levels_2_and_3() -> None:
    catalog = load_catalog("codeif", DATA_DIR)
    l2 = instructions(catalog.get("CodeIF/2001"))
    categories = [i.category for i in l2]
    assert "Context Usage Verification" in categories
    assert "Context Usage Correctness Verification" in categories
    # L-3 has no multi-turn order: its instructions come in the file's order.
    l3 = catalog.get("CodeIF/3001")
    assert l3.instruction_order == ()
    assert [i.category for i in instructions(l3)][1:] == list(_rows(3)[0]["requirements"])


def test_a_test_written_under_another_name_runs_under_its_id_only_in_convtuis_protocol() -> None:
    source = "def test_written_name(self):\n    assert 1\n"
    renamed = named_as(source, "tests/t.py::Case::test_id_name")
    assert renamed.startswith("def test_id_name(self):")
    assert named_as(source, "tests/t.py::Case::test_written_name") == source
    # The catalog keeps each test as written: 80 of them are not named as their ids.
    catalog = load_catalog("codeif", DATA_DIR)
    task = catalog.get("CodeIF/1017")
    (requirement,) = [r for r in task.requirements if r.category == "Exception Handling"]
    ((test_id, code),) = requirement.tests.snippets
    assert test_id.endswith("::test_force_bytes_raises_error_with_message")
    assert code.startswith("def test_force_bytes_with_empty_string(")
    # convtui's protocol runs it under its id; the authors' harness found no such test.
    given = [
        instructions(task)[0],
        *(i for i in instructions(task) if i.category == "Exception Handling"),
    ]
    written = {}
    for preprocess in (False, True):
        tests = project_round_tests(task, given, preprocess=preprocess)
        written[preprocess] = dict(tests.snippets)[test_id]
    assert written[False].startswith("def test_force_bytes_raises_error_with_message(")
    assert written[True] == code


def test_the_v0_files_number_their_tasks_the_same_way() -> None:
    for level in (1, 2, 3):
        current = load_codeif_data(DATA_DIR / FILES[level]).catalog
        v0 = load_codeif_data(DATA_DIR / FILES[level].replace(".jsonl", "-v0.jsonl")).catalog
        assert [t.site.namespace for t in v0 if t.site] == [
            t.site.namespace for t in current if t.site
        ]
        assert v0.ids == current.ids


def test_the_default_data_records_every_file() -> None:
    data = load_codeif_data()
    recorded = data.settings()["data"]
    assert [Path(f["path"]).name for f in recorded["files"]] == [
        "CodeIF-Bench-L1-function.jsonl",
        *FILES.values(),
    ]
    one = load_codeif_data(DATA_DIR / FILES[2])
    assert "files" not in one.settings()["data"] and one.sha256 != data.sha256


def test_a_malformed_row_is_refused_in_one_line() -> None:
    row = dict(_rows(1)[0])
    row["signature_position"] = [0, 3]
    with pytest.raises(RepoRowError, match="signature_position is not two 1-based line numbers"):
        parse_repo_row(row, 1)
    row = dict(_rows(1)[0], completion_path="elsewhere/x.py")
    with pytest.raises(RepoRowError, match="completion_path is not inside project_path"):
        parse_repo_row(row, 1)


def test_tasks_list_and_show_name_the_level_project_file_and_context() -> None:
    from rich.console import Console

    from convtui.benchmarks.commands.catalog.task_views import task_detail, task_table

    catalog = load_catalog("codeif", DATA_DIR)
    shown = Console(width=80, record=True)
    shown.print(task_table(catalog.select("60,1006,2001,3014")))
    text = shown.export_text()
    for line in ("CodeIF/60", "L-1 function", "L-1 repository", "L-2 ", "L-3 "):
        assert line in text
    assert "sqlitedict" in text and "boltons" in text
    wide = Console(width=200, record=True)
    wide.print(task_detail(catalog.get("CodeIF/2001")))
    detail = wide.export_text()
    assert "Utilities/boltons · boltons/socketutils.py, lines 667-669 · L-2" in detail
    assert "context (L-2)" in detail and "class NetstringSocket(object):" in detail
    assert "tests/test_socketutils.py::test_socketutils_netstring (the project's own)" in detail
    l3 = Console(width=200, record=True)
    l3.print(task_detail(catalog.get("CodeIF/3001")))
    l3_text = l3.export_text()
    assert "intra-file context" in l3_text
    assert "cross-file context · mrjob.logs.mixin.LogInterpretationMixin._read_logs" in l3_text


def test_the_authors_protocol_runs_the_test_their_copy_held_under_an_id() -> None:
    """discord.py's L-1 tasks 13 and 14 both write module-level tests of the same names into
    tests/test_utils.py; the authors' copy held task 14's (the later), so task 13's ids run
    task 14's tests there. convtui's protocol runs each task's own."""
    catalog = load_catalog("codeif", DATA_DIR)
    first, second = catalog.get("CodeIF/1013"), catalog.get("CodeIF/1014")
    assert first.site.project_path == second.site.project_path
    held = dict(first.site.authors_tests)
    test_id = "tests/test_utils.py::test_input_output_conditions"
    (later,) = [c for r in second.requirements for i, c in r.tests.snippets if i == test_id]
    (own,) = [c for r in first.requirements for i, c in r.tests.snippets if i == test_id]
    assert held[test_id] == later != own
    assert second.site.authors_tests == ()  # the last to write them keeps its own
    given = [i for i in instructions(first) if i.category in ("Base", "Input-Output Conditions")]
    assert dict(project_round_tests(first, given, preprocess=True).snippets)[test_id] == later
    assert dict(project_round_tests(first, given, preprocess=False).snippets)[test_id] == own
    # Within a class no published verdict tells which of two methods was held: each keeps its own.
    assert all(
        "::" not in i.rsplit("::", 1)[0]
        for t in catalog
        for i, _ in (t.site.authors_tests if t.site else ())
    )
