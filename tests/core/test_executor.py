"""The executor end to end: real zygotes, real sandboxes, real child processes, no mocks.

One executor per isolation level for the whole module (zygote start-up is paid once); tests
that take ``isolation_level`` run at every level this machine offers (see tests/conftest.py),
the others at the strongest one."""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Iterator

import pytest
from support.sandbox import ExecutorPool

from convtui.core.catalog.tasks import TestSpec as Spec
from convtui.core.execution.executor import Executor, environment_fingerprint
from convtui.core.execution.isolation import IsolationUnavailable, detect
from convtui.core.execution.types import ExecRequest, ExecResult, Limits

LIMITS = Limits(per_test_s=2, wall_s=5)
PRELOAD = ("unittest", "unittest.mock", "numpy", "random", "inspect", "json", "tempfile")
BEST_LEVEL = detect("auto").level


def available_levels() -> list[str]:
    levels = []
    for level in ("bwrap", "namespaces", "landlock", "none"):
        try:
            detect(level)
        except IsolationUnavailable:
            continue
        levels.append(level)
    return levels


def unittest_spec(*tests: str, header: str = "") -> Spec:
    """A ``TestCases`` module whose methods are ``tests`` (each a ``def test_...`` block)."""
    body = "".join(
        "".join(f"    {line}\n" for line in test.strip("\n").splitlines()) + "\n" for test in tests
    )
    return Spec(
        "unittest",
        source=f"import unittest\n{header}\n\nclass TestCases(unittest.TestCase):\n{body}",
    )


ADD_ONE_TESTS = unittest_spec(
    "def test_one(self):\n    self.assertEqual(f(1), 2)",
    "def test_two(self):\n    self.assertEqual(f(2), 3)",
    "def test_negative(self):\n    self.assertEqual(f(-1), 0)",
)
RIGHT = "def f(x):\n    return x + 1\n"
WRONG = "def f(x):\n    return x + 2\n"


@pytest.fixture(scope="module")
def executor() -> Iterator[ExecutorPool]:
    pool = ExecutorPool(jobs=2, preload=PRELOAD, default_level=BEST_LEVEL)
    yield pool
    pool.close()


def run(
    ex: Executor, code: str, tests: Spec = ADD_ONE_TESTS, limits: Limits = LIMITS, **kw
) -> ExecResult:
    return ex.run(ExecRequest(code, tests, limits=limits, **kw))


def statuses(result: ExecResult) -> dict[str, str]:
    return {t.name: t.status for t in result.tests}


def assert_machine_independent(text: str) -> None:
    """No absolute path of this machine: only ``__test__.py``, ``<stdlib>/`` and
    ``<site-packages>/`` names."""
    assert "/root" not in text, text
    assert "/tmp/" not in text, text
    assert "/work/" not in text, text
    assert "site-packages" not in text.replace("<site-packages>/", ""), text
    for filename in re.findall(r'File "([^"]+)"', text):
        assert filename == "__test__.py" or filename.startswith(
            ("<site-packages>/", "<stdlib>/", "<test_")
        ), filename


# ---------------------------------------------------------------- verdicts


def test_right_solution_passes_with_per_test_outcomes(executor, isolation_level):
    result = run(executor(isolation_level), RIGHT)
    assert result.status == "pass", result
    assert result.passed
    # Expected tests in unittest's order (sorted by name), each with its own outcome.
    assert [t.name for t in result.tests] == ["test_negative", "test_one", "test_two"]
    assert all(t.status == "pass" and t.traceback == "" for t in result.tests)
    assert all(0 <= t.duration_s < 2 for t in result.tests)
    assert result.counts() == (3, 3)
    assert result.isolation == detect(isolation_level).label
    assert result.isolation.split("+")[0] == isolation_level
    assert not result.tampered
    assert 0 < result.duration_s < 5


def test_wrong_solution_fails_with_a_clean_traceback(executor, isolation_level):
    result = run(executor(isolation_level), WRONG)
    assert result.status == "fail"
    assert statuses(result) == {"test_negative": "fail", "test_one": "fail", "test_two": "fail"}
    tb = result.tests[1].traceback
    assert tb.startswith("Traceback (most recent call last):")
    assert 'File "__test__.py", line' in tb
    assert "self.assertEqual(f(1), 2)" in tb  # the source line is shown
    assert "AssertionError: 3 != 2" in tb
    for test in result.tests:
        assert_machine_independent(test.traceback)
    assert result.counts() == (0, 3)


def test_tracebacks_through_libraries_and_run_paths_are_machine_independent(executor):
    pytest.importorskip("numpy")
    tests = unittest_spec(
        "def test_array(self):\n    np.testing.assert_array_equal(f(), [1, 2])",
        "def test_json(self):\n    self.assertEqual(g(), {})",
        "def test_cwd(self):\n    self.assertEqual(h(), 'x')",
        header="import numpy as np",
    )
    code = (
        "import json, os, tempfile\nimport numpy as np\n"
        "def f():\n    return np.array([1, 3])\n"
        "def g():\n    return json.loads('{bad')\n"
        "def h():\n"
        "    raise ValueError(os.getcwd() + ' ' + os.path.abspath('data.csv') + ' '"
        " + tempfile.mkdtemp())\n"
    )
    result = run(executor(), code, tests)
    assert result.status == "fail"
    by_name = {t.name: t for t in result.tests}
    assert by_name["test_array"].status == "fail"
    assert "<site-packages>/numpy/" in by_name["test_array"].traceback
    assert by_name["test_json"].status == "error"
    assert "<stdlib>/json/" in by_name["test_json"].traceback
    assert "JSONDecodeError" in by_name["test_json"].traceback
    assert by_name["test_cwd"].status == "error"
    assert "ValueError: . data.csv " in by_name["test_cwd"].traceback
    for test in result.tests:
        assert_machine_independent(test.traceback)


def test_syntax_error_is_error(executor):
    result = run(executor(), "def f(x:\n    return x\n")
    assert result.status == "error"
    assert result.detail.startswith("the code does not compile: SyntaxError: ")
    assert result.detail.endswith("(line 1)")
    assert "__test__.py" not in result.detail  # the harness's module, not the candidate
    assert set(statuses(result).values()) == {"not_run"}
    assert_machine_independent(result.detail)


def test_a_syntax_error_is_reported_at_its_line_in_the_code_not_in_the_tests(executor):
    # Unclosed, the string runs on into the tests, where the runner's compiler stops.
    code = 'def f(x):\n    s = """abc\n    return x + 1\n'
    result = run(executor(), code)
    assert result.status == "error"
    assert result.detail.startswith("the code does not compile: SyntaxError: ")
    assert result.detail.endswith("(line 2)")


def test_module_level_name_error_is_error_with_the_message(executor):
    result = run(executor(), "x = undefined_name_q + 1\n" + RIGHT)
    assert result.status == "error"
    assert "undefined_name_q" in result.detail
    assert "is not defined" in result.detail
    assert result.missing_module is None


def test_module_level_exception_in_the_tests_is_error(executor):
    tests = unittest_spec("def test_one(self):\n    pass", header="raise RuntimeError('in tests')")
    result = run(executor(), RIGHT, tests)
    assert result.status == "error"
    assert "in tests" in result.detail


def test_missing_known_module_is_env_error(executor):
    code = "import convtui_no_such_lib.sub\n" + RIGHT
    result = run(executor(), code, known_modules=frozenset({"convtui_no_such_lib", "numpy"}))
    assert result.status == "env_error"
    assert result.missing_module == "convtui_no_such_lib"
    assert "convtui_no_such_lib" in result.detail


def test_missing_known_module_inside_a_test_is_env_error(executor):
    code = "def f(x):\n    import convtui_no_such_lib\n    return x + 1\n"
    result = run(executor(), code, known_modules=frozenset({"convtui_no_such_lib"}))
    assert result.status == "env_error"
    assert result.missing_module == "convtui_no_such_lib"


def test_missing_unknown_module_is_error(executor):
    code = "import convtui_hallucinated_lib\n" + RIGHT
    result = run(executor(), code, known_modules=frozenset({"numpy"}))
    assert result.status == "error"
    assert result.missing_module is None
    assert "convtui_hallucinated_lib" in result.detail


def test_segfault_is_crash_not_timeout(executor):
    code = "import ctypes\ndef f(x):\n    ctypes.string_at(0)\n"
    result = run(executor(), code)
    assert result.status == "crash"
    assert "SIGSEGV" in result.detail


# ---------------------------------------------------------------- time limits


@pytest.mark.slow
def test_per_test_timeout_keeps_the_other_tests(executor):
    tests = unittest_spec(
        "def test_a_hang(self):\n    f(None)",
        "def test_b_ok(self):\n    self.assertEqual(f(1), 2)",
        "def test_c_hang(self):\n    f(None)",
        "def test_d_wrong(self):\n    self.assertEqual(f(1), 5)",
    )
    code = (
        "import time\ndef f(x):\n    while x is None:\n        time.sleep(1000)\n    return x + 1\n"
    )
    started = time.monotonic()
    result = run(executor(), code, tests, Limits(per_test_s=0.5, wall_s=5))
    assert time.monotonic() - started < 4
    assert result.status == "timeout"
    assert statuses(result) == {
        "test_a_hang": "timeout",
        "test_b_ok": "pass",
        "test_c_hang": "timeout",
        "test_d_wrong": "fail",
    }
    hang = result.tests[0]
    assert "did not finish within 0.5 s" in hang.traceback
    assert "__test__.py" in hang.traceback
    assert_machine_independent(hang.traceback)


@pytest.mark.slow
def test_whole_run_deadline_is_timeout(executor):
    # The candidate swallows the per-test timer: only the supervisor's deadline stops it.
    tests = unittest_spec(
        "def test_a_ok(self):\n    self.assertEqual(f(1), 2)",
        "def test_b_stuck(self):\n    f(None)",
        "def test_c_never_reached(self):\n    self.assertEqual(f(2), 3)",
    )
    code = (
        "import time\n"
        "def f(x):\n"
        "    while x is None:\n"
        "        try:\n"
        "            time.sleep(1000)\n"
        "        except BaseException:\n"
        "            pass\n"
        "    return x + 1\n"
    )
    started = time.monotonic()
    result = run(executor(), code, tests, Limits(per_test_s=0.3, wall_s=1.5))
    assert time.monotonic() - started < 5
    assert result.status == "timeout"
    assert "1.5 s" in result.detail
    assert statuses(result) == {
        "test_a_ok": "pass",
        "test_b_stuck": "timeout",
        "test_c_never_reached": "missing",
    }


@pytest.mark.slow
def test_module_level_hang_is_timeout(executor):
    result = run(executor(), "import time\ntime.sleep(1000)\n" + RIGHT, limits=Limits(1, 1.5))
    assert result.status == "timeout"


# ---------------------------------------------------------------- unittest features


def test_subtest_failures_fail_the_test(executor):
    tests = unittest_spec(
        "def test_sub(self):\n"
        "    for i in range(4):\n"
        "        with self.subTest(i=i):\n"
        "            self.assertEqual(f(i), i + 1)",
        "def test_plain(self):\n    self.assertEqual(f(0), 1)",
    )
    right = run(executor(), RIGHT, tests)
    assert right.status == "pass"
    wrong = run(executor(), "def f(x):\n    return x + 1 if x != 2 else 0\n", tests)
    assert wrong.status == "fail"
    assert statuses(wrong) == {"test_plain": "pass", "test_sub": "fail"}
    assert "AssertionError: 0 != 3" in wrong.tests[1].traceback
    error = run(
        executor(),
        "def f(x):\n    if x == 3:\n        raise KeyError(x)\n    return x + 1\n",
        tests,
    )
    assert error.status == "fail"
    assert statuses(error)["test_sub"] == "error"
    assert "KeyError: 3" in error.tests[1].traceback


SUBTESTS = unittest_spec(
    "def test_lengths(self):\n"
    "    for length in [10, 50, 100, 150, 5]:\n"
    "        with self.subTest(length=length):\n"
    "            self.assertEqual(f(length), length + 1)",
    "def test_mixed(self):\n"
    "    for x in [1, 2.5]:\n"
    "        with self.subTest('half', x=x):\n"
    "            {2: 'a', 3.5: 'b'}[f(x)]\n"
    "    self.assertEqual(f(0), 1)",
    "def test_plain(self):\n    self.assertEqual(f(0), 1)",
)


def issues(result: ExecResult, name: str) -> list[tuple[str, str]]:
    [test] = [t for t in result.tests if t.name == name]
    return [(issue.name, issue.status) for issue in test.issues]


def test_failing_subtests_are_recorded_under_their_test_as_unittest_files_them(executor):
    """One issue per failing subtest, named as unittest names a subtest after its class path
    (``test_lengths (length=10)``), in the order they ran; a test that also failed on its own
    ends with an issue under its own name; a passing run and a plain test carry none."""
    assert all(not t.issues for t in run(executor(), RIGHT, SUBTESTS).tests)
    wrong = run(executor(), WRONG, SUBTESTS)
    assert wrong.status == "fail"
    assert statuses(wrong) == {"test_lengths": "fail", "test_mixed": "error", "test_plain": "fail"}
    assert issues(wrong, "test_lengths") == [
        (f"test_lengths (length={n})", "fail") for n in (10, 50, 100, 150, 5)
    ]
    [lengths] = [t for t in wrong.tests if t.name == "test_lengths"]
    for issue, n in zip(lengths.issues, (10, 50, 100, 150, 5), strict=True):
        assert issue.traceback.startswith("Traceback (most recent call last):\n"), issue
        assert issue.traceback.endswith(f"AssertionError: {n + 2} != {n + 1}\n"), issue
        assert_machine_independent(issue.traceback)
    # The test's own traceback is its first problem, as before.
    assert lengths.traceback == lengths.issues[0].traceback
    # A message and a parameter holding a dot: the full name is kept (the dot is only cut at
    # rendering, where BigCodeBench's key is wanted); errors and the test's own failure.
    assert issues(wrong, "test_mixed") == [
        ("test_mixed [half] (x=1)", "error"),
        ("test_mixed [half] (x=2.5)", "error"),
        ("test_mixed", "fail"),
    ]
    [mixed] = [t for t in wrong.tests if t.name == "test_mixed"]
    assert mixed.issues[0].traceback.endswith("KeyError: 3\n")
    assert mixed.issues[2].traceback.endswith("AssertionError: 2 != 1\n")
    assert issues(wrong, "test_plain") == []


def test_subtest_names_do_not_follow_a_patched_unittest(executor):
    """The description is unittest's own, captured before the candidate ran: patching it
    changes neither the names nor the verdict."""
    code = (
        "import unittest\n"
        "unittest.case._SubTest._subDescription = lambda self: '(forged=1)'\n"
        "unittest.case._SubTest.id = lambda self: 'forged'\n" + WRONG
    )
    result = run(executor(), code, SUBTESTS)
    assert result.status == "fail"
    assert issues(result, "test_lengths")[0] == ("test_lengths (length=10)", "fail")


def test_a_subtest_whose_description_cannot_be_printed_still_fails_its_test(executor):
    tests = unittest_spec(
        "def test_odd(self):\n    with self.subTest(value=f(0)):\n        self.fail('no')",
    )
    code = "class Odd:\n    def __repr__(self):\n        raise RuntimeError('no repr')\n\n"
    result = run(executor(), code + "def f(x):\n    return Odd()\n", tests)
    assert result.status == "fail"
    assert issues(result, "test_odd") == [("test_odd (<unprintable subtest>)", "fail")]


def test_skipped_tests_are_not_a_pass(executor):
    tests = unittest_spec(
        "def test_one(self):\n    self.assertEqual(f(1), 2)",
        "def test_skips(self):\n    self.skipTest('not today')",
    )
    result = run(executor(), RIGHT, tests)
    assert result.status == "fail"
    assert statuses(result) == {"test_one": "pass", "test_skips": "skipped"}
    decorated = unittest_spec(
        "def test_one(self):\n    self.assertEqual(f(1), 2)",
        "@unittest.skip('later')\ndef test_later(self):\n    self.assertEqual(f(2), 3)",
    )
    assert run(executor(), RIGHT, decorated).status == "fail"


def test_duplicate_test_names_run_once(executor):
    tests = unittest_spec(
        "def test_dup(self):\n    self.assertEqual(f(1), 999)",
        "def test_dup(self):\n    self.assertEqual(f(1), 2)",  # the last definition wins
    )
    result = run(executor(), RIGHT, tests)
    assert result.status == "pass"
    assert [t.name for t in result.tests] == ["test_dup"]


def test_setup_and_helpers_are_not_expected_tests(executor):
    tests = unittest_spec(
        "def setUp(self):\n    self.base = 1",
        "def helper(self, x):\n    return f(x)",
        "def test_uses_both(self):\n    self.assertEqual(self.helper(self.base), 2)",
    )
    result = run(executor(), RIGHT, tests)
    assert result.status == "pass"
    assert [t.name for t in result.tests] == ["test_uses_both"]


# ---------------------------------------------------------------- snippet tests (CodeIF)


SNIPPETS = Spec(
    "snippets",
    snippets=(
        ("test_1", "assert f(1) == 2"),
        ("test_2", "assert f(2) == 3"),
        ("test_3", "assert f(-1) == 0, 'negative'"),
    ),
)


def test_snippets_pass_and_fail_one_by_one(executor, isolation_level):
    ex = executor(isolation_level)
    right = run(ex, RIGHT, SNIPPETS)
    assert right.status == "pass"
    assert statuses(right) == {"test_1": "pass", "test_2": "pass", "test_3": "pass"}
    partly = run(ex, "def f(x):\n    return abs(x) + 1\n", SNIPPETS)
    assert partly.status == "fail"
    assert statuses(partly) == {"test_1": "pass", "test_2": "pass", "test_3": "fail"}
    tb = partly.tests[2].traceback
    assert "AssertionError: negative" in tb
    assert 'File "<test_3>", line 1' in tb
    assert_machine_independent(tb)
    raising = run(ex, "def f(x):\n    raise ValueError('no')\n", SNIPPETS)
    assert raising.status == "fail"
    assert set(statuses(raising).values()) == {"error"}
    assert "ValueError: no" in raising.tests[0].traceback


def test_snippet_can_get_the_source_of_the_candidate(executor):
    code = 'def f(x):\n    """Add one."""\n    return x + 1\n'
    tests = Spec(
        "snippets",
        snippets=(
            (
                "test_src",
                "import inspect\nsrc = inspect.getsource(f)\nassert 'Add one' in src, src",
            ),
            ("test_doc", "assert f.__doc__ == 'Add one.'"),
            ("test_sig", "import inspect\nassert list(inspect.signature(f).parameters) == ['x']"),
        ),
    )
    result = run(executor(), code, tests)
    assert result.status == "pass", result.tests


ANNOTATED = "def f(words: list, n: int = 1) -> list:\n    return words * n\n"
REAL_ANNOTATIONS = (
    "assert f.__annotations__ == {'words': list, 'n': int, 'return': list}, f.__annotations__"
)


def test_an_annotated_candidate_keeps_real_annotations_in_snippets_and_unittest(executor):
    """The runner module itself says ``from __future__ import annotations``; the candidate must
    not inherit it (its annotations would become strings, and a correct CodeIF-Bench
    Annotation Coverage answer would fail)."""
    snippets = run(
        executor(), ANNOTATED, Spec("snippets", snippets=(("test_ann", REAL_ANNOTATIONS),))
    )
    assert snippets.status == "pass", snippets.tests
    unit = run(
        executor(),
        ANNOTATED,
        unittest_spec(f"def test_ann(self):\n    {REAL_ANNOTATIONS}"),
    )
    assert unit.status == "pass", unit.tests


@pytest.mark.parametrize("where", ["snippets", "unittest"])
def test_no_future_flag_of_the_runner_reaches_the_candidate_or_the_tests(executor, where):
    """One check per ``__future__`` feature the runner's own modules import: the candidate and
    each test are compiled with their own flags only."""
    import ast
    from pathlib import Path

    from convtui.core.execution import sandbox

    # Every module of the child's side (the runner and what it imports from its folder).
    used = {
        alias.name
        for path in Path(sandbox.__file__).parent.glob("*.py")
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.ImportFrom) and node.module == "__future__"
        for alias in node.names
    }
    assert used == {"annotations"}, f"update this test for {used}"
    # Each feature the runner uses, probed from both sides: the candidate's annotations are
    # objects, and a test's own local annotation is evaluated (a string under the flag).
    code = "def f(x: int) -> int:\n    return x\n"
    probe = (
        "def g(y: 'undefined_name_is_fine_as_a_string') -> None: pass\n"
        "assert f.__annotations__['x'] is int\n"
        "assert g.__annotations__['y'] == 'undefined_name_is_fine_as_a_string'\n"
        "h_flags = compile('x: int = 1', '<probe>', 'exec').co_flags\n"
        "import __future__\n"
        "assert not h_flags & __future__.annotations.compiler_flag\n"
    )
    if where == "snippets":
        spec = Spec("snippets", snippets=(("test_probe", probe),))
    else:
        body = "".join(f"    {line}\n" for line in probe.splitlines())
        spec = unittest_spec(f"def test_probe(self):\n{body}")
    result = run(executor(), code, spec)
    assert result.status == "pass", result.tests


def test_a_candidate_may_still_ask_for_postponed_annotations_itself(executor):
    code = "from __future__ import annotations\n\ndef f(x: int) -> int:\n    return x\n"
    tests = Spec("snippets", snippets=(("test_str", "assert f.__annotations__['x'] == 'int'"),))
    assert run(executor(), code, tests).status == "pass"


def test_snippet_per_test_timeout(executor):
    tests = Spec("snippets", snippets=(("test_hang", "f(None)"), ("test_ok", "assert f(1) == 2")))
    code = (
        "import time\ndef f(x):\n    while x is None:\n        time.sleep(1000)\n    return x + 1\n"
    )
    result = run(executor(), code, tests, Limits(per_test_s=0.3, wall_s=5))
    assert result.status == "timeout"
    assert statuses(result) == {"test_hang": "timeout", "test_ok": "pass"}


# ---------------------------------------------------------------- output


def test_output_is_captured_and_capped(executor, capfd):
    code = (
        "import os, sys\n"
        "def f(x):\n"
        "    print('HEAD-MARK')\n"
        "    sys.stdout.write('x' * (10 * 2**20))\n"
        "    sys.stdout.flush()\n"
        "    print('TAIL-MARK', file=sys.stderr)\n"
        "    return x + 1\n"
    )
    limits = Limits(per_test_s=2, wall_s=5, output_bytes=4096)
    result = run(executor(), code, limits=limits)
    assert result.status == "pass"
    assert result.output_bytes >= 3 * 10 * 2**20  # every byte is counted (3 tests)
    assert len(result.output.encode()) <= 4096 + 200  # the cap plus a short marker
    assert result.output.startswith("HEAD-MARK\n")
    assert result.output.rstrip().endswith("TAIL-MARK")
    assert "bytes of output skipped" in result.output
    out, err = capfd.readouterr()
    assert "HEAD-MARK" not in out + err


def test_fd_level_writes_are_captured_not_leaked(executor, capfd):
    code = (
        "import os, sys\n"
        "def f(x):\n"
        "    os.write(1, b'FD1-MARK\\n')\n"
        "    os.write(2, b'FD2-MARK\\n')\n"
        "    print('PY-MARK', flush=True)\n"
        "    return x + 1\n"
    )
    result = run(executor(), code)
    assert result.status == "pass"
    for mark in ("FD1-MARK", "FD2-MARK", "PY-MARK"):
        assert mark in result.output
    assert result.output_bytes == len(result.output.encode())
    out, err = capfd.readouterr()
    assert "MARK" not in out + err


# ---------------------------------------------------------------- run_many and caching


def test_run_many_returns_results_in_request_order(executor):
    ex = executor()
    slow_right = "import time\ndef f(x):\n    time.sleep(0.3)\n    return x + 1\n"
    requests = [
        ExecRequest(slow_right, ADD_ONE_TESTS, limits=LIMITS, task_id="slow"),
        ExecRequest(WRONG, ADD_ONE_TESTS, limits=LIMITS, task_id="wrong"),
        ExecRequest(RIGHT, ADD_ONE_TESTS, limits=LIMITS, task_id="right"),
        ExecRequest("def f(:\n", ADD_ONE_TESTS, limits=LIMITS, task_id="syntax"),
        ExecRequest(RIGHT, SNIPPETS, limits=LIMITS, task_id="snippets"),
    ]
    seen: list[int] = []
    results = ex.run_many(requests, on_result=lambda i, r: seen.append(i))
    assert [r.status for r in results] == ["pass", "fail", "pass", "error", "pass"]
    assert sorted(seen) == [0, 1, 2, 3, 4]
    assert seen[0] != 0  # the slow one finished later, yet its result comes first
    assert ex.run_many([]) == []


def test_zygotes_outlive_the_run_many_worker_threads(executor):
    # A zygote's parent-death signal follows the thread that started it: zygotes started by
    # run_many's pool threads must not die when the pool shuts down.
    ex = executor()
    requests = [ExecRequest(RIGHT, ADD_ONE_TESTS, limits=LIMITS) for _ in range(4)]
    for _ in range(3):
        assert [r.status for r in ex.run_many(requests)] == ["pass"] * 4
        time.sleep(0.05)  # give a parent-death SIGKILL time to land
        pids = {z.proc.pid for z in ex._all if z.proc is not None}
        assert 1 <= len(pids) <= 2 * ex.jobs  # each slot has a light and a full zygote
        assert all(z.proc.poll() is None for z in ex._all if z.proc is not None)
        if _ == 0:
            first = pids
    assert pids == first  # the same zygotes served every batch


def test_run_many_imports_a_heavy_library_in_one_slot_only():
    # A task naming SciPy makes its slot's full zygote import it before the fork (its annex):
    # placed by affinity, the batch's SciPy tasks all go to the slot that took the first one,
    # in this batch and the next, while the other slot runs the rest.
    with Executor(jobs=2, preload=PRELOAD) as ex:
        scipy = ExecRequest(
            "import scipy\n" + RIGHT,
            ADD_ONE_TESTS,
            known_modules=frozenset({"numpy", "scipy"}),
            task_imports=frozenset({"scipy"}),
            limits=LIMITS,
        )
        plain = ExecRequest(RIGHT, ADD_ONE_TESTS, known_modules=frozenset({"numpy"}), limits=LIMITS)
        for batch in ([scipy, plain] * 3, [scipy] * 4):
            assert [r.status for r in ex.run_many(batch)] == ["pass"] * len(batch)
            holders = [slot for slot in ex._slots if "scipy" in slot["full"].imported]
            assert len(holders) == 1
        assert all(slot["full"].alive for slot in ex._slots if slot["full"].runs)


def test_run_many_shards_a_long_task_and_merges_its_evidence(executor):
    ex = executor()
    many = unittest_spec(
        *(f"def test_{i}(self):\n    self.assertEqual(f({i}), {i + 1})" for i in range(6))
    )
    tamper = "import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n" + WRONG
    requests = [
        ExecRequest(RIGHT, many, limits=LIMITS),
        ExecRequest(tamper, many, limits=LIMITS),
        ExecRequest("def f(x):\n    return x + 1 if x != 4 else 0\n", many, limits=LIMITS),
        ExecRequest(RIGHT, ADD_ONE_TESTS, limits=LIMITS),
    ]
    # Requests 0-2 are expected to be long: they run as two shards each.
    results = ex.run_many(requests, expected_s={0: 10.0, 1: 10.0, 2: 10.0, 3: 0.1})
    assert results[0].status == "pass", results[0]
    assert [t.name for t in results[0].tests] == [f"test_{i}" for i in range(6)]
    assert results[1].status == "fail"
    assert results[1].tampered
    assert results[2].status == "fail"
    assert statuses(results[2])["test_4"] == "fail"
    assert results[2].counts() == (5, 6)
    assert results[3].status == "pass"


def test_cache_key_is_stable_and_covers_code_tests_and_limits(executor):
    ex = executor()
    base = ExecRequest(RIGHT, ADD_ONE_TESTS, limits=LIMITS, task_id="T/1")
    key = ex.cache_key(base)
    assert re.fullmatch(r"[0-9a-f]{64}", key)
    assert ex.cache_key(base) == key
    same = ExecRequest(
        str(RIGHT),
        unittest_spec(
            "def test_one(self):\n    self.assertEqual(f(1), 2)",
            "def test_two(self):\n    self.assertEqual(f(2), 3)",
            "def test_negative(self):\n    self.assertEqual(f(-1), 0)",
        ),
        limits=Limits(per_test_s=2, wall_s=5),
        task_id="T/1",
    )
    assert ex.cache_key(same) == key
    variants = [
        ExecRequest(WRONG, ADD_ONE_TESTS, limits=LIMITS, task_id="T/1"),
        ExecRequest(RIGHT + "\n", ADD_ONE_TESTS, limits=LIMITS, task_id="T/1"),
        ExecRequest(RIGHT, SNIPPETS, limits=LIMITS, task_id="T/1"),
        ExecRequest(
            RIGHT, unittest_spec("def test_one(self):\n    pass"), limits=LIMITS, task_id="T/1"
        ),
        ExecRequest(RIGHT, ADD_ONE_TESTS, limits=Limits(per_test_s=3, wall_s=5), task_id="T/1"),
        ExecRequest(RIGHT, ADD_ONE_TESTS, limits=Limits(per_test_s=2, wall_s=6), task_id="T/1"),
        ExecRequest(
            RIGHT,
            ADD_ONE_TESTS,
            limits=Limits(per_test_s=2, wall_s=5, memory_mb=1024),
            task_id="T/1",
        ),
        ExecRequest(
            RIGHT,
            ADD_ONE_TESTS,
            limits=Limits(per_test_s=2, wall_s=5, output_bytes=1),
            task_id="T/1",
        ),
        ExecRequest(RIGHT, ADD_ONE_TESTS, limits=LIMITS, task_id="T/2"),
    ]
    keys = [ex.cache_key(v) for v in variants]
    assert key not in keys
    assert len(set(keys)) == len(keys)


def test_cache_key_covers_the_isolation_level(executor):
    others = [level for level in available_levels() if level != BEST_LEVEL]
    if not others:
        pytest.skip("only one isolation level is available here")
    request = ExecRequest(RIGHT, ADD_ONE_TESTS, limits=LIMITS)
    assert executor().cache_key(request) != executor(others[0]).cache_key(request)


# ---------------------------------------------------------------- a fresh start every run


def test_each_run_starts_clean(executor):
    tests = unittest_spec("def test_state(self):\n    self.assertEqual(f(), 'clean')")
    dirty = (
        "import json, os\n"
        "def f():\n"
        "    fresh = not os.path.exists('state.txt') and not hasattr(json, 'convtui_mark')\n"
        "    open('state.txt', 'w').write('x')\n"
        "    json.convtui_mark = True\n"
        "    return 'clean' if fresh else 'dirty'\n"
    )
    for _ in range(3):  # same zygote each time: files and module damage die with the run
        assert run(executor(), dirty, tests).status == "pass"


def test_run_directory_names_hold_no_hyphen(executor, isolation_level):
    # Some tasks split paths on "-" (BigCodeBench/1127 builds one from tempfile.mkdtemp()).
    tests = unittest_spec("def test_paths(self):\n    self.assertEqual(f(), [])")
    code = (
        "import os, tempfile\n"
        "def f():\n"
        "    return [p for p in (os.getcwd(), tempfile.mkdtemp()) if '-' in p]\n"
    )
    result = run(executor(isolation_level), code, tests)
    assert result.status == "pass", result.tests[0].traceback


def test_environment_is_allow_listed(executor):
    tests = unittest_spec("def test_env(self):\n    self.assertEqual(f(), [])")
    code = (
        "import os\n"
        "def f():\n"
        "    problems = []\n"
        "    if os.environ.get('TZ') != 'UTC': problems.append('TZ')\n"
        "    if os.environ.get('HOME') != os.getcwd(): problems.append('HOME')\n"
        "    if os.environ.get('TMPDIR') != os.getcwd(): problems.append('TMPDIR')\n"
        "    if os.environ.get('MPLBACKEND') != 'Agg': problems.append('MPLBACKEND')\n"
        "    if 'CONVTUI_EXEC_PYTHON' in os.environ: problems.append('leak')\n"
        "    return problems\n"
    )
    assert run(executor(), code, tests).status == "pass"


def test_random_state_differs_between_runs(executor):
    pytest.importorskip("numpy")
    code = (
        "import random\nimport numpy as np\n"
        "def f(x):\n"
        "    print('RNG', repr(random.random()), repr(float(np.random.rand())))\n"
        "    return x + 1\n"
    )
    tests = unittest_spec("def test_one(self):\n    self.assertEqual(f(1), 2)")
    draws = set()
    for _ in range(3):
        result = run(executor(), code, tests)
        assert result.status == "pass"
        (line,) = [ln for ln in result.output.splitlines() if ln.startswith("RNG")]
        draws.add(line)
    # Both generators were seeded before the fork: without a re-seed every run would print
    # the same numbers. Three 53-bit draws colliding by chance is not a realistic flake.
    assert len(draws) == 3
    assert len({d.split()[1] for d in draws}) == 3
    assert len({d.split()[2] for d in draws}) == 3


def test_a_candidate_run_as_main_runs_its_main_block_and_its_errors_count(executor):
    """CodeIF-Bench's harness runs ``python file.py``: a ``__main__`` block runs there (and an
    exception it raises fails every check), while BigCodeBench loads the code as a module."""
    code = (
        "def f(x):\n    return x + 1\n\n"
        "if __name__ == '__main__':\n    raise ValueError('example usage failed')\n"
    )
    tests = Spec("snippets", snippets=(("test_f", "assert f(1) == 2"),))
    as_module = run(executor(), code, tests)
    assert as_module.status == "pass"
    as_main = executor().run(ExecRequest(code=code, tests=tests, limits=LIMITS, as_main=True))
    assert as_main.status == "error"
    assert "example usage failed" in as_main.error_message
    named = executor().run(
        ExecRequest(
            code="NAME = __name__\n",
            tests=Spec("snippets", snippets=(("test_name", "assert NAME == '__main__', NAME"),)),
            limits=LIMITS,
            as_main=True,
        )
    )
    assert named.status == "pass", named.tests
    ex = executor()
    plain = ExecRequest(code=code, tests=tests, limits=LIMITS)
    assert ex.cache_key(plain) != ex.cache_key(ExecRequest(**{**plain.__dict__, "as_main": True}))


def test_the_environment_fingerprint_does_not_depend_on_the_working_directory(
    tmp_path, monkeypatch
):
    """A folder holding a distribution's metadata (a checkout's convtui.egg-info) is not on
    the candidates' path, so it must not change the cache key: it did when convtui was
    started from the checkout, and a cluster's nodes started elsewhere then disagreed."""
    (tmp_path / "ghost-1.0.dist-info").mkdir()
    (tmp_path / "ghost-1.0.dist-info" / "METADATA").write_text("Name: ghost\nVersion: 1.0\n")
    elsewhere = environment_fingerprint(sys.executable)
    monkeypatch.chdir(tmp_path)
    assert environment_fingerprint(sys.executable) == elsewhere
