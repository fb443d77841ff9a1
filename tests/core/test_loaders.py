"""Parsing BigCodeBench and CodeIF-Bench rows into tasks, and selecting among them.

Runs against the real data files (``$CONVTUI_DATA_DIR``, by default ``../shared/data`` beside
the repository).
"""

from __future__ import annotations

import ast
import gzip
import json
import sys
import time
from pathlib import Path

import pytest
from support.data import BIGCODEBENCH as BCB_FILE
from support.data import DATA as DATA_DIR

from convtui.core.catalog.loaders import (
    BadSelectionError,
    DataFormatError,
    TaskCatalog,
    load_bigcodebench,
    load_catalog,
    load_codeif,
    parse_codeif,
    parse_id_spec,
    parse_suites,
    read_jsonl,
)
from convtui.core.errors import ConvtuiError, DataNotFoundError, UnknownTaskError

CODEIF_FILE = DATA_DIR / "CodeIF-Bench-L1-function.jsonl"


@pytest.fixture(autouse=True)
def data_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Data from the shared directory only: no mirror, no download, a private cache."""
    monkeypatch.setenv("CONVTUI_DATA_DIR", str(DATA_DIR))
    monkeypatch.setenv("CONVTUI_OFFLINE", "1")
    monkeypatch.delenv("CONVTUI_DATA_URL", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def bcb() -> TaskCatalog:
    return load_catalog("bigcodebench", DATA_DIR)


@pytest.fixture(scope="module")
def codeif() -> TaskCatalog:
    """The 50 function tasks (the repository levels: tests/core/test_repo_rows.py)."""
    return load_catalog("codeif", CODEIF_FILE)


@pytest.fixture(scope="module")
def bcb_rows() -> list[dict]:
    with gzip.open(BCB_FILE, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


@pytest.fixture(scope="module")
def codeif_rows() -> list[dict]:
    with CODEIF_FILE.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f]


# --------------------------------------------------------------------------- BigCodeBench


def test_bigcodebench_loads_fast_and_in_numeric_order() -> None:
    start = time.perf_counter()
    catalog = load_catalog()  # default suite, found through $CONVTUI_DATA_DIR
    elapsed = time.perf_counter() - start
    assert elapsed < 1.0, f"loading took {elapsed:.2f}s"
    assert len(catalog) == 1140
    assert catalog.suites == ("bigcodebench",)
    assert [t.number for t in catalog] == list(range(1140))
    assert catalog.ids[:2] == ["BigCodeBench/0", "BigCodeBench/1"]


def test_bigcodebench_fields(bcb: TaskCatalog, bcb_rows: list[dict]) -> None:
    row = bcb_rows[13]
    task = bcb.get("BigCodeBench/13")
    assert task.id == row["task_id"] == "BigCodeBench/13"
    assert task.suite == "bigcodebench"
    assert task.prompt == row["instruct_prompt"]
    assert task.complete_prompt == row["complete_prompt"]
    assert task.code_header == row["code_prompt"]
    assert task.entry_point == "task_func"
    assert task.tests.kind == "unittest"
    assert "class TestCases" in task.tests.source
    assert task.ground_truth == row["code_prompt"] + row["canonical_solution"]
    assert task.libs == ("subprocess", "ftplib", "os")
    assert task.import_header.startswith("import subprocess")
    compile(task.ground_truth, task.id, "exec")


@pytest.mark.filterwarnings("ignore::SyntaxWarning", "ignore::DeprecationWarning")
def test_every_bigcodebench_task_is_well_formed(bcb: TaskCatalog) -> None:
    for task in bcb:
        assert task.tests.kind == "unittest" and task.tests.source
        assert f"def {task.entry_point}" in task.code_header
        assert isinstance(task.libs, tuple) and all(isinstance(x, str) for x in task.libs)
        ast.parse(task.ground_truth)


def test_stdlib_only_matches_the_data_readme(bcb: TaskCatalog) -> None:
    chosen = bcb.select(stdlib_only=True)
    assert len(chosen) == 327
    assert all(lib in sys.stdlib_module_names for t in chosen for lib in t.libs)


def test_uncompressed_file_under_any_name(tmp_path: Path) -> None:
    plain = tmp_path / "bcb-copy.txt"
    plain.write_bytes(gzip.decompress(BCB_FILE.read_bytes()))
    tasks = load_bigcodebench(plain)
    assert len(tasks) == 1140
    assert load_catalog("bigcodebench", plain).get("0").id == "BigCodeBench/0"


def test_bad_json_is_a_one_line_format_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "BigCodeBench/0"}\n{not json\n')
    with pytest.raises(DataFormatError, match=r"bad.jsonl:2: not valid JSON"):
        list(read_jsonl(bad))
    with pytest.raises(DataFormatError, match="missing field 'code_prompt'"):
        load_bigcodebench(bad)


# --------------------------------------------------------------------------- ids


@pytest.mark.parametrize(
    "spelling",
    ["BigCodeBench/13", "bigcodebench/13", "BIGCODEBENCH/13", "13", " 13 ", "BigCodeBench/013"],
)
def test_id_spellings(bcb: TaskCatalog, spelling: str) -> None:
    assert bcb.get(spelling).id == "BigCodeBench/13"
    assert spelling in bcb
    assert bcb[spelling] is bcb.get("BigCodeBench/13")


def test_unknown_id_names_nearest_and_how_to_list(bcb: TaskCatalog) -> None:
    with pytest.raises(UnknownTaskError) as info:
        bcb.get("BigCodeBench/5000")
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith("unknown task 'BigCodeBench/5000'")
    assert "nearest: BigCodeBench/500" in msg
    assert "BigCodeBench/0 to BigCodeBench/1139" in msg
    assert "convtui tasks" in msg
    assert isinstance(info.value, ConvtuiError)
    assert "BigCodeBench/5000" not in bcb

    with pytest.raises(UnknownTaskError, match="nearest: BigCodeBench/1"):
        bcb.get("BigCodeBnch/1")
    with pytest.raises(UnknownTaskError, match="suite codeif is not loaded"):
        bcb.get("CodeIF/11")


def test_codeif_ids(codeif: TaskCatalog) -> None:
    assert codeif.get("CodeIF/11").id == "CodeIF/11"
    assert codeif.get("codeif/11").id == "CodeIF/11"
    # With only CodeIF loaded a bare number can only mean a CodeIF task.
    assert codeif.get("11").id == "CodeIF/11"
    with pytest.raises(UnknownTaskError, match=r"unknown task 'CodeIF/1' \(nearest: CodeIF/\d+"):
        codeif.get("CodeIF/1")


def test_both_suites(bcb: TaskCatalog, codeif: TaskCatalog) -> None:
    both = load_catalog("all", DATA_DIR)
    assert len(both) == 1140 + 50 + 20 + 40 + 14
    assert both.suites == ("bigcodebench", "codeif")
    assert both.ids[1139] == "BigCodeBench/1139" and both.ids[1140] == "CodeIF/11"
    assert both.get("13").id == "BigCodeBench/13"  # bare numbers mean BigCodeBench
    assert both.get("CodeIF/13").suite == "codeif"
    # Numbers in a selection apply to every loaded suite.
    assert [t.id for t in both.select("11-12")] == [
        "BigCodeBench/11",
        "BigCodeBench/12",
        "CodeIF/11",
        "CodeIF/12",
    ]
    assert parse_suites("codeif, bigcodebench") == ("bigcodebench", "codeif")


def test_suite_and_data_errors(tmp_path: Path) -> None:
    with pytest.raises(BadSelectionError, match="unknown suite 'humaneval'"):
        parse_suites("humaneval")
    with pytest.raises(BadSelectionError, match="is a file"):
        load_catalog("all", BCB_FILE)
    with pytest.raises(DataNotFoundError):
        load_catalog("codeif", tmp_path)


# --------------------------------------------------------------------------- select


def test_select_ids(bcb: TaskCatalog) -> None:
    assert [t.number for t in bcb.select("0-19")] == list(range(20))
    assert [t.id for t in bcb.select("13")] == ["BigCodeBench/13"]
    picked = [t.number for t in bcb.select("0-9,42,100-110")]
    assert picked == [*range(10), 42, *range(100, 111)]
    # Catalog order, no duplicates, whatever the spec's order.
    assert [t.number for t in bcb.select("5, 1-3 ,2")] == [1, 2, 3, 5]
    assert [t.number for t in bcb.select("1130-5000")] == list(range(1130, 1140))
    assert [t.id for t in bcb.select("BigCodeBench/7,3")] == ["BigCodeBench/3", "BigCodeBench/7"]
    assert len(bcb.select()) == 1140


@pytest.mark.parametrize("spec", ["", "x", "1,,2", "5-3", "1-", "-3", "1.5", "0-9;12", "5000"])
def test_bad_selection_is_one_clear_line(bcb: TaskCatalog, spec: str) -> None:
    with pytest.raises(BadSelectionError) as info:
        bcb.select(spec)
    msg = str(info.value)
    assert "\n" not in msg and repr(spec) in msg


def test_parse_id_spec() -> None:
    assert parse_id_spec("0-9,42, CodeIF/12") == ([(0, 9), (42, 42)], ["CodeIF/12"])


def test_select_libs_requires_all(bcb: TaskCatalog) -> None:
    both = bcb.select(libs=["pandas", "numpy"])
    assert both and all({"pandas", "numpy"} <= set(t.libs) for t in both)
    assert len(both) < len(bcb.select(libs=["pandas"]))
    assert both == bcb.select(libs=["pandas,numpy"]) == bcb.select(libs=["Pandas", "NUMPY"])
    assert bcb.select(libs=["pil"]) == bcb.select(libs=["PIL"])
    assert all(t.number < 100 for t in bcb.select("0-99", libs=["pandas"]))
    # No pandas task is stdlib-only.
    assert bcb.select(libs=["pandas"], stdlib_only=True) == []


def test_unknown_library_suggests(bcb: TaskCatalog) -> None:
    with pytest.raises(BadSelectionError, match="'panda'; did you mean pandas"):
        bcb.select(libs=["panda"])


# --------------------------------------------------------------------------- CodeIF


def test_codeif_parsing(codeif: TaskCatalog, codeif_rows: list[dict]) -> None:
    assert len(codeif) == 50
    assert codeif.ids == [f"CodeIF/{n}" for n in range(11, 61)]
    row = next(r for r in codeif_rows if r["task_id"] == 11)
    task = codeif.get("CodeIF/11")
    assert task.suite == "codeif"
    assert task.prompt == row["prompt"]
    assert task.code_header == "" and task.complete_prompt == ""
    assert task.entry_point == "remove_occ"
    assert "\r\n" in row["code"]
    assert task.ground_truth == row["code"].replace("\r\n", "\n")
    assert task.tests.kind == "snippets"
    assert task.tests.snippets == (
        ("test_1", row["test"][0]),
        ("test_2", row["test"][1]),
        ("test_3", row["test"][2]),
    )
    assert [r.category for r in task.requirements] == list(row["requirements"])
    io = task.requirements[0]
    assert io.category == "Input-Output Conditions"
    assert io.text == row["requirements"]["Input-Output Conditions"]["requirement"]
    assert [name for name, _ in io.tests.snippets] == [
        f"input_output_conditions_{i}" for i in range(1, 6)
    ]
    names = [r.tests.snippets[0][0] for r in task.requirements]
    assert "code_complexity_1" in names and "code_standard_1" in names
    assert task.instruction_order == tuple(row["multi-turn"])
    assert task.libs == ("mccabe", "pycodestyle")


def test_no_carriage_returns_anywhere(codeif: TaskCatalog) -> None:
    for task in codeif:
        texts = [task.prompt, task.ground_truth, *(s for _, s in task.tests.snippets)]
        for req in task.requirements:
            texts += [req.text, *(s for _, s in req.tests.snippets)]
        assert not any("\r" in t for t in texts), task.id


def test_single_string_unit_test_is_one_snippet(
    codeif: TaskCatalog, codeif_rows: list[dict]
) -> None:
    # Some rows store one snippet as a bare string; it must not be split into characters.
    row = next(r for r in codeif_rows if r["task_id"] == 50)
    assert isinstance(row["requirements"]["Code Complexity"]["unit_test"], str)
    req = next(r for r in codeif.get("CodeIF/50").requirements if r.category == "Code Complexity")
    assert len(req.tests.snippets) == 1
    assert req.tests.snippets[0][0] == "code_complexity_1"
    assert "get_code_complexity" in req.tests.snippets[0][1]


def test_entry_point_is_the_asked_function_not_a_helper(codeif: TaskCatalog) -> None:
    # CodeIF/18 defines helpers before the function its prompt asks for.
    assert codeif.get("CodeIF/18").entry_point == "remove_dirty_chars"
    assert codeif.get("CodeIF/45").entry_point == "get_gcd"
    for task in codeif:
        assert f"def {task.entry_point}" in task.ground_truth
        assert task.entry_point in task.prompt, task.id


@pytest.mark.filterwarnings("ignore::SyntaxWarning", "ignore::DeprecationWarning")
def test_reference_code_passes_its_base_tests(codeif: TaskCatalog) -> None:
    # Parsed correctly, the reference solution passes the base asserts (MBPP tasks: pure
    # functions, safe to run in-process).
    for task in codeif:
        namespace: dict = {}
        exec(compile(task.ground_truth, task.id, "exec"), namespace)
        for name, snippet in task.tests.snippets:
            exec(compile(snippet, f"{task.id}:{name}", "exec"), dict(namespace))


def test_codeif_libs_are_only_third_party(codeif: TaskCatalog) -> None:
    assert {lib for t in codeif for lib in t.libs} == {"mccabe", "pycodestyle"}
    assert codeif.select(stdlib_only=True) == []


def test_parse_codeif_minimal_row() -> None:
    row = {
        "prompt": "Write a function called 'f'.",
        "test": ["assert f() == 1"],
        "code": "def g():\r\n    return 0\r\ndef f():\r\n    return 1\r\n",
        "task_id": 7,
        "requirements": {
            "Exception Handling": {"requirement": "Raise.", "unit_test": "assert True"}
        },
        "multi-turn": ["Exception Handling"],
    }
    task = parse_codeif(row)
    assert task.id == "CodeIF/7"
    assert task.entry_point == "f"
    assert task.ground_truth == "def g():\n    return 0\ndef f():\n    return 1\n"
    assert task.libs == ()
    assert task.requirements[0].tests.snippets == (("exception_handling_1", "assert True"),)
    assert len(load_codeif(CODEIF_FILE)) == 50


def test_a_lone_surrogate_escape_reads_back_as_the_escape_it_was(tmp_path):
    """v0's CodeIF/1002 has ``'http://\\udc00.com'`` in a test: JSON decodes the escape to a
    lone surrogate that no parser, UTF-8 file or hash takes. A pair (an emoji) stays one
    character."""
    path = tmp_path / "rows.jsonl"
    test = "def test_x():\n    assert f('http://\udc00.com')\n"  # a lone surrogate
    row = {"requirements": {"Exception Handling": {"unit_test": [test]}}, "emoji": "😀"}
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    assert "\\udc00" in path.read_text()  # the file holds the escape, as the data file does
    (read,) = read_jsonl(path)
    text = read["requirements"]["Exception Handling"]["unit_test"][0]
    assert text == "def test_x():\n    assert f('http://\\udc00.com')\n"
    text.encode("utf-8")
    ast.parse(text)
    assert read["emoji"] == "😀"
