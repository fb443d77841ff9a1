"""Feedback text, pinned to the vectors of docs/harness-notes.md (ConvCodeWorld feedback)."""

import gzip
import json
import sys
import traceback
from collections import Counter
from pathlib import Path

import pytest
from support.ccw_turns import Outcome, Result
from support.data import data_file

from convtui.core.execution.types import (
    ExecResult,
    IssueStatus,
    TestIssue,
    TestOutcome,
)
from convtui.core.feedback.render import (
    NO_SYNTAX_ERRORS,
    PASSED_ALL_TEST_RUNS,
    CompileResult,
    TrimSpec,
    bcb_subtest_key,
    compile_feedback,
    declared_test_names,
    execution_feedback,
    failure_details,
    render_details,
    trim_feedback,
    trim_schedule,
    visible_test_names,
)

REPO_ROOT = Path(__file__).resolve().parents[2]


def _tb(name: str, message: str = "AssertionError: 1 != 2") -> str:
    return (
        f'Traceback (most recent call last):\n  File "__test__.py", line 7, in {name}\n{message}\n'
    )


# --- compilation feedback (§2.2) --------------------------------------------------------------


def test_compile_success() -> None:
    assert compile_feedback("def f(x):\n    return x + 1\n") == CompileResult(
        True, NO_SYNTAX_ERRORS
    )
    assert NO_SYNTAX_ERRORS == "No syntax errors"


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="caret lines differ per Python")
def test_compile_failure_exact_on_311() -> None:
    code = "def f(x):\n    return x +\n"
    tail = '  File "tmp.py", line 2\n    return x +\n              ^\nSyntaxError: invalid syntax\n'
    assert compile_feedback(code) == CompileResult(
        False, "Traceback (most recent call last):\n" + tail
    )
    assert compile_feedback(code, compat="ccw").text == (
        "Traceback (most recent call last):\n"
        '  File "convcodeworld/pot.py", line 23, in compile_code\n'
        "    compile(code, 'tmp.py', mode='exec')\n" + tail
    )


def test_compile_failure_matches_format_exc_shape() -> None:
    code = "x = (\n"
    try:
        compile(code, "tmp.py", mode="exec")
    except SyntaxError:
        ccw_text = traceback.format_exc()
    ours = compile_feedback(code, compat="ccw").text
    # Same lines as CCW's format_exc() except the first frame, which leaked a local path.
    assert ours.splitlines()[3:] == ccw_text.splitlines()[3:]
    assert ours.splitlines()[0] == ccw_text.splitlines()[0]
    default = compile_feedback(code).text
    assert default.startswith('Traceback (most recent call last):\n  File "tmp.py", line 1\n')
    assert str(REPO_ROOT) not in ours + default


def test_compile_null_bytes_and_no_chained_context() -> None:
    result = compile_feedback("x = 1\x00")
    assert not result.ok
    assert result.text.startswith("Traceback (most recent call last):\n")
    assert "null bytes" in result.text
    try:
        raise KeyError("caller's own exception")
    except KeyError:
        text = compile_feedback("x = (\n").text
    assert "KeyError" not in text and "During handling" not in text


def test_compile_ignores_syntax_warnings() -> None:
    assert compile_feedback("x = '\\d'\nassert (x, 'msg')\n").ok


# --- execution feedback layout (§2.3) ---------------------------------------------------------


def test_pass() -> None:
    result = Result("pass", tests=(Outcome("test_a", "pass"),))
    assert execution_feedback(result, coverage="full") == "Passed all test runs"
    assert execution_feedback(result, coverage="partial", visible=()) == PASSED_ALL_TEST_RUNS


def test_two_failing_tests_layout() -> None:
    result = Result(
        "fail",
        tests=(
            Outcome("test_case_1", "fail", _tb("test_case_1")),
            Outcome("test_case_2", "fail", _tb("test_case_2")),
        ),
    )
    assert execution_feedback(result, coverage="full") == (
        "TEST_CASE_1\nTraceback (most recent call last):\n"
        '  File "__test__.py", line 7, in test_case_1\nAssertionError: 1 != 2\n\n\n'
        "TEST_CASE_2\nTraceback (most recent call last):\n"
        '  File "__test__.py", line 7, in test_case_2\nAssertionError: 1 != 2\n\n'
    )


def test_module_level_failure_is_all() -> None:
    result = Result("error", detail="name 'foo' is not defined")
    assert execution_feedback(result, coverage="full") == "ALL\nname 'foo' is not defined\n"
    for status in ("crash", "env_error"):
        assert failure_details(Result(status, detail="boom")) == {"ALL": "boom"}


def test_all_never_shown_under_partial() -> None:
    result = Result("error", detail="name 'foo' is not defined")
    source = "class TestCases:\n    def test_a(self): pass\n"
    for rule in ("ccw", "first-tests"):
        text = execution_feedback(result, coverage="partial", partial_rule=rule, test_source=source)
        assert text == PASSED_ALL_TEST_RUNS


def test_bcb_order_failures_then_errors_alphabetical() -> None:
    tests = (
        Outcome("test_case_2", "error", "E2\n"),
        Outcome("test_case_1", "pass"),
        Outcome("test_case_10", "error", "E10\n"),
        Outcome("test_case_3", "fail", "F3\n"),
        Outcome("test_case_11", "fail", "F11\n"),
        Outcome("test_case_4", "skipped"),
        Outcome("test_case_5", "timeout", "T5\n"),
        Outcome("test_case_6", "missing", "M6\n"),
    )
    details = failure_details(Result("fail", tests=tests))
    assert list(details) == [
        "test_case_11",
        "test_case_3",
        "test_case_10",
        "test_case_2",
        "test_case_5",
        "test_case_6",
    ]
    # Snippet suites (CodeIF) keep their list order.
    unsorted = failure_details(Result("fail", tests=tests), sort_by_name=False)
    assert list(unsorted) == [
        "test_case_3",
        "test_case_11",
        "test_case_2",
        "test_case_10",
        "test_case_5",
        "test_case_6",
    ]


def test_traceback_gets_a_final_newline() -> None:
    result = Result("fail", tests=(Outcome("test_x", "fail", "AssertionError"),))
    assert execution_feedback(result, coverage="full") == "TEST_X\nAssertionError\n\n"
    empty = Result("timeout", tests=(Outcome("test_y", "timeout", ""),))
    assert execution_feedback(empty, coverage="full") == (
        "TEST_Y\nTimeoutException: Timed out!\n\n"
    )


def test_timeout_without_records_is_empty_under_full() -> None:
    result = Result("timeout", tests=(Outcome("test_a", "pass"),))
    assert execution_feedback(result, coverage="full") == ""
    assert execution_feedback(Result("timeout"), coverage="full") == ""
    # ...and "passed" under partial: nothing visible is left.
    assert execution_feedback(Result("timeout"), coverage="partial", visible=("test_a",)) == (
        PASSED_ALL_TEST_RUNS
    )


def test_tests_that_never_ran() -> None:
    # A module-level error leaves every expected test "missing": BCB's ALL entry.
    missing = tuple(Outcome(f"test_{c}", "missing") for c in "ab")
    result = Result("error", detail="name 'foo' is not defined", tests=missing)
    assert execution_feedback(result, coverage="full") == "ALL\nname 'foo' is not defined\n"
    assert execution_feedback(Result("crash", "died", missing), coverage="full") == "ALL\ndied\n"
    assert execution_feedback(Result("timeout", "slow", missing), coverage="full") == ""
    # Once a test ran and failed, the ones that never ran are listed among the errors.
    stopped = (Outcome("test_a", "timeout", "stopped\n"), Outcome("test_b", "missing"))
    assert execution_feedback(Result("timeout", "slow", stopped), coverage="full") == (
        "TEST_A\nstopped\n\n\nTEST_B\nThe test did not run.\n\n"
    )


def test_fail_without_failing_tests_shows_the_detail() -> None:
    # convtui's own verdict for tampered test machinery: every test "passed".
    passed = (Outcome("test_a", "pass"),)
    tampered = Result("fail", "test machinery was tampered with", passed)
    assert execution_feedback(tampered, coverage="full") == (
        "ALL\ntest machinery was tampered with\n"
    )
    assert execution_feedback(Result("fail", "", passed), coverage="full") == ""


def test_executor_records_plug_in() -> None:
    execution = pytest.importorskip("convtui.core.execution.types")
    result = execution.ExecResult(
        status="fail",
        tests=(
            execution.TestOutcome("test_case_2", "error", traceback="ZeroDivisionError\n"),
            execution.TestOutcome("test_case_1", "fail", traceback="AssertionError\n"),
            execution.TestOutcome("test_case_3", "pass"),
        ),
    )
    assert execution_feedback(result, coverage="full") == (
        "TEST_CASE_1\nAssertionError\n\n\nTEST_CASE_2\nZeroDivisionError\n\n"
    )


def test_snippet_names_use_the_same_layout() -> None:
    result = Result(
        "fail",
        tests=(
            Outcome("Input-Output Conditions", "fail", "AssertionError\n"),
            Outcome("base_0", "error", "TypeError: bad\n"),
        ),
    )
    assert execution_feedback(result, coverage="full", sort_by_name=False) == (
        "INPUT-OUTPUT CONDITIONS\nAssertionError\n\n\nBASE_0\nTypeError: bad\n\n"
    )
    assert execution_feedback(result, coverage="partial", visible=("base_0",)) == (
        "BASE_0\nTypeError: bad\n\n"
    )


def test_render_details_matches_ccw_expression() -> None:
    details = {"test_a": "x\n", "ALL": "msg"}
    expected = "\n".join([f"{k.upper()}\n{v}\n" for k, v in details.items()])
    assert render_details(details) == expected


# --- partial coverage (§2.4) ------------------------------------------------------------------

SYNTHETIC_TESTS = """
import unittest


class Helper:
    def make(self):
        def inner():
            pass

    async def fetch(self):
        pass


class TestCases(unittest.TestCase):
    def setUp(self):
        pass

    class Nested:
        def test_nested(self):
            pass

    def test_b(self):
        pass

    def helper(self):
        pass

    def test_a(self):
        pass

    def test_c(self):
        pass

    def test_d(self):
        pass
"""


def test_visible_names_ccw_rule() -> None:
    # ast.walk visits Helper, then TestCases, then Nested; async names are not FunctionDefs.
    assert visible_test_names(SYNTHETIC_TESTS, "ccw") == ("make", "inner", "setUp")
    only_tests = SYNTHETIC_TESTS.split("class TestCases", 1)[1]
    source = "class TestCases" + only_tests
    # Nested class methods are counted twice: under TestCases, and under Nested itself.
    names = visible_test_names(source.replace("def setUp", "def tst_setUp"), "ccw")
    assert names == ("tst_setUp", "test_nested", "test_b")


def test_visible_names_first_tests_rule() -> None:
    assert visible_test_names(SYNTHETIC_TESTS, "first-tests") == ("test_b", "test_a", "test_c")
    assert declared_test_names(SYNTHETIC_TESTS) == ("test_b", "test_a", "test_c", "test_d")
    assert visible_test_names("x = 1\n", "first-tests") == ()


def test_partial_filters_and_empty_becomes_passed() -> None:
    tests = tuple(Outcome(n, "fail", f"{n} failed\n") for n in ("test_a", "test_b", "test_d"))
    result = Result("fail", tests=tests)
    assert (
        execution_feedback(
            result, coverage="partial", partial_rule="first-tests", test_source=SYNTHETIC_TESTS
        )
        == "TEST_A\ntest_a failed\n\n\nTEST_B\ntest_b failed\n\n"
    )
    # Under ccw, make/inner/setUp are visible: no failing test is, so the quirk says "passed".
    assert (
        execution_feedback(
            result, coverage="partial", partial_rule="ccw", test_source=SYNTHETIC_TESTS
        )
        == PASSED_ALL_TEST_RUNS
    )


# --- failing subtests ---------------------------------------------------------------------------
# BigCodeBench: ``for test, trace in failures + errors: details[test.id().split(".")[-1]] =
# trace`` (bigcode-project/bigcodebench, and ConvCodeWorld's fork sfc-gh-hhan/bigcodebench:
# bigcodebench/eval/__init__.py, unsafe_execute). unittest files each failing subtest as a
# ``_SubTest`` whose id is ``__test__.TestCases.test_x (params)``, and nothing for its method
# unless the method also failed outside them. CCW (convcodeworld/pot.py,
# get_execution_feedback) renders every entry under EF:full, and under EF:partial those with
# ``tc_id in unit_test_names``.

SUBTEST_SOURCE = """import unittest
class TestCases(unittest.TestCase):
    def setUp(self):
        pass
    def test_values(self):
        pass
    def test_words(self):
        pass
    def test_zeta(self):
        pass
"""


def _bcb_key(method: str, description: str) -> str:
    """BigCodeBench's key, computed as it does, from unittest's id of the subtest."""
    return f"__test__.TestCases.{method} {description}".split(".")[-1]


def _subtested(
    name: str, status: IssueStatus, *issues: tuple[str, IssueStatus, str], own: str | None = None
) -> TestOutcome:
    """A test whose subtests failed, as the runner files it: each (name, status, traceback)
    an issue, then ``own``, the traceback of the test's own body where that failed too, an
    issue under the test's name and status; the test's traceback is its first issue's."""
    filed = tuple(TestIssue(*issue) for issue in issues)
    if own is not None:
        filed += (TestIssue(name, status, own),)
    return TestOutcome(name, status, traceback=filed[0].traceback, issues=filed)


def _subtest_result() -> ExecResult:
    return ExecResult(
        "fail",
        tests=(
            TestOutcome("test_zeta", "fail", traceback="Z\n"),
            _subtested(
                "test_words",
                "error",
                ("test_words (word='a')", "error", "W1\n"),
                ("test_words (word='b')", "fail", "W2\n"),
                own="W-own\n",
            ),
            _subtested(
                "test_values",
                "fail",
                ("test_values (value=12.5)", "fail", "V1\n"),
                ("test_values (value=3.0)", "fail", "V2\n"),
                ("test_values (value=7.5)", "fail", "V3\n"),
            ),
        ),
    )


def test_bcb_subtest_key_is_the_last_dotted_part_of_the_id() -> None:
    for method, description in [
        ("test_x", "(length=5)"),
        ("test_x", "[msg] (a=1, b='c')"),
        ("test_x", "(<subtest>)"),
        ("test_proper_values", "(value=12.5)"),
        ("test_case_1", "(start_time=0, amplitude=0.5, period=1000)"),
    ]:
        assert bcb_subtest_key(f"{method} {description}") == _bcb_key(method, description)
    assert bcb_subtest_key("test_x (length=5)") == "test_x (length=5)"
    assert bcb_subtest_key("test_proper_values (value=12.5)") == "5)"


def test_failing_subtests_are_bigcodebench_entries_in_its_order() -> None:
    """Failures (by test name, each test's entries as unittest filed them), then errors;
    keys cut at the last dot; two keys alike keep the first place and the last traceback."""
    details = failure_details(_subtest_result(), bcb_messages=True)
    assert details == {
        # failures: test_values (V1 under "5)", then V2 under "0)", then V3 again "5)")
        _bcb_key("test_values", "(value=12.5)"): "V3\n",
        _bcb_key("test_values", "(value=3.0)"): "V2\n",
        _bcb_key("test_words", "(word='b')"): "W2\n",
        "test_zeta": "Z\n",
        # errors
        _bcb_key("test_words", "(word='a')"): "W1\n",
        "test_words": "W-own\n",
    }
    assert list(details) == [
        "5)",
        "0)",
        "test_words (word='b')",
        "test_zeta",
        "test_words (word='a')",
        "test_words",
    ]
    assert execution_feedback(_subtest_result(), coverage="full", bcb_messages=True) == (
        "5)\nV3\n\n\n0)\nV2\n\n\nTEST_WORDS (WORD='B')\nW2\n\n\nTEST_ZETA\nZ\n\n\n"
        "TEST_WORDS (WORD='A')\nW1\n\n\nTEST_WORDS\nW-own\n\n"
    )


def test_convtui_names_keep_the_whole_subtest_name() -> None:
    details = failure_details(_subtest_result())
    assert list(details) == [
        "test_values (value=12.5)",
        "test_values (value=3.0)",
        "test_values (value=7.5)",
        "test_words (word='b')",
        "test_zeta",
        "test_words (word='a')",
        "test_words",
    ]


def test_partial_coverage_of_subtests_by_protocol() -> None:
    """The reference's list membership never matches a subtest's key: only the methods' own
    entries of visible tests show. convtui's protocol shows a visible test's subtests too."""
    visible = visible_test_names(SUBTEST_SOURCE, "ccw")
    assert visible == ("setUp", "test_values", "test_words")
    result = _subtest_result()
    assert (
        execution_feedback(
            result, coverage="partial", test_source=SUBTEST_SOURCE, bcb_messages=True
        )
        == "TEST_WORDS\nW-own\n\n"
    )
    only_subtests = ExecResult("fail", tests=result.tests[2:])
    assert (
        execution_feedback(
            only_subtests, coverage="partial", test_source=SUBTEST_SOURCE, bcb_messages=True
        )
        == PASSED_ALL_TEST_RUNS
    )
    ours = execution_feedback(result, coverage="partial", test_source=SUBTEST_SOURCE)
    assert [line for line in ours.splitlines() if line.startswith("TEST_")] == [
        "TEST_VALUES (VALUE=12.5)",
        "TEST_VALUES (VALUE=3.0)",
        "TEST_VALUES (VALUE=7.5)",
        "TEST_WORDS (WORD='B')",
        "TEST_WORDS (WORD='A')",
        "TEST_WORDS",
    ]


# --- trimming (§2.6) --------------------------------------------------------------------------


def test_trim_vectors() -> None:
    twelve = "\n".join(f"L{k}" for k in range(12))
    assert trim_feedback(twelve, force=True) == "L0\nL1\nL2\nL3\nL4\n...\nL7\nL8\nL9\nL10\nL11"
    assert trim_feedback("a\nb\nc", force=True) == "a\n...\nc"
    assert trim_feedback("", force=True) == "\n...\n"


def test_trim_threshold_and_quirks() -> None:
    short = "x" * 7999
    assert trim_feedback(short) == short
    line = "y" * 8000
    # One long line appears twice: its first 2000 and its last 4000 characters.
    assert trim_feedback(line) == "y" * 2000 + "\n...\n" + "y" * 4000
    # rear == 0 keeps the whole rear part (s[-0:] is s); front == 0 empties the front.
    assert trim_feedback("abc\ndef", front=0, rear=0, force=True) == "\n...\ndef"


def test_trim_schedule() -> None:
    assert list(trim_schedule()) == [
        (2000, 4000),
        (2000, 3000),
        (2000, 2000),
        (2000, 1000),
        (1000, 1000),
        (1000, 0),
        (0, 0),
    ]


def test_execution_feedback_trims_on_request_only() -> None:
    tests = tuple(Outcome(f"test_{k:02d}", "fail", "E" * 500 + "\n") for k in range(20))
    result = Result("fail", tests=tests)
    full = execution_feedback(result, coverage="full")
    assert len(full) >= 8000
    assert execution_feedback(result, coverage="full", trim=TrimSpec()) == trim_feedback(full)
    forced = execution_feedback(
        Result("fail", tests=tests[:1]), coverage="full", trim=TrimSpec(1000, 0, force=True)
    )
    # Three lines ("TEST_00", the traceback, "" after the final "\n\n"): a window of one line
    # keeps the name in front and the empty last line behind, CCW's arithmetic.
    assert forced == "TEST_00\n...\n"
    # The fixed texts are never trimmed.
    assert execution_feedback(Result("pass"), coverage="full", trim=TrimSpec(force=True)) == (
        PASSED_ALL_TEST_RUNS
    )


# --- the real BigCodeBench test modules (§2.4, measured) --------------------------------------


def _bigcodebench() -> dict[str, dict[str, str]]:
    path = data_file("BigCodeBench-v0.1.0.jsonl.gz")
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    return {row["task_id"]: row for row in rows}


@pytest.fixture(scope="module")
def bigcodebench() -> dict[str, dict[str, str]]:
    return _bigcodebench()


def test_bigcodebench_7_both_rules(bigcodebench: dict[str, dict[str, str]]) -> None:
    source = bigcodebench["BigCodeBench/7"]["test"]
    assert visible_test_names(source, "ccw") == ("setUp", "tearDown", "test_case_1")
    assert visible_test_names(source, "first-tests") == (
        "test_case_1",
        "test_case_2",
        "test_case_3",
    )
    tests = tuple(
        Outcome(name, "fail", f"AssertionError: {name}\n") for name in declared_test_names(source)
    )
    result = Result("fail", tests=tests)
    assert execution_feedback(result, coverage="partial", test_source=source) == (
        "TEST_CASE_1\nAssertionError: test_case_1\n\n"
    )
    assert execution_feedback(
        result, coverage="partial", partial_rule="first-tests", test_source=source
    ) == (
        "TEST_CASE_1\nAssertionError: test_case_1\n\n\n"
        "TEST_CASE_2\nAssertionError: test_case_2\n\n\n"
        "TEST_CASE_3\nAssertionError: test_case_3\n\n"
    )


def test_ccw_rule_visible_test_counts(bigcodebench: dict[str, dict[str, str]]) -> None:
    assert len(bigcodebench) == 1140
    counts: Counter[int] = Counter()
    for row in bigcodebench.values():
        visible = set(visible_test_names(row["test"], "ccw"))
        counts[len(visible & set(declared_test_names(row["test"])))] += 1
    # docs/harness-notes.md (Partial coverage): 3 tests visible for 665 tasks, 2 for 244, 1
    # for 193, none for 38.
    assert counts == Counter({3: 665, 2: 244, 1: 193, 0: 38})
    assert all(
        len(visible_test_names(row["test"], "first-tests"))
        == min(3, len(declared_test_names(row["test"])))
        for row in bigcodebench.values()
    )
