"""decide(): the verdict rules of the executor contract (docs/design.md#executor-contract),
driven by hand-made RawRuns.

The child's report is evidence, never the verdict: these tests feed decide() the records a
run could send (honest, truncated, forged) and check what it concludes."""

from __future__ import annotations

import json
import signal

import pytest

from convtui.core.catalog.tasks import TestSpec as Spec
from convtui.core.execution.testplan import TestPlan as Plan
from convtui.core.execution.testplan import plan_tests
from convtui.core.execution.verdict import RawRun, compile_error, decide

EXPECTED = ("test_a", "test_b", "test_c")
CANARIES = ("canary_n0nce_assertEqual", "canary_n0nce_raise")
PLAN = Plan(EXPECTED, CANARIES)
WALL_S = 5.0


def rec(t: str, **fields: object) -> str:
    return json.dumps({"t": t, **fields})


def result_rec(name: str, status: str, tb: str = "", **extra: object) -> str:
    return rec("test", name=name, status=status, dur=0.01, tb=tb, **extra)


def honest(
    statuses: dict[str, str] | None = None, canary: str = "fail", done: bool = True
) -> list[str]:
    """The records an untampered run sends: start + result per test, canaries, done."""
    statuses = statuses or dict.fromkeys(EXPECTED, "pass")
    lines = [rec("ready", confined="x")]
    for name, status in statuses.items():
        tb = "" if status == "pass" else f"Traceback ...\nAssertionError: {name}\n"
        lines += [rec("start", name=name), result_rec(name, status, tb)]
    for name in CANARIES:
        lines += [rec("start", name=name), result_rec(name, canary)]
    if done:
        lines.append(rec("done"))
    return lines


def stopped_in_test_b() -> list[str]:
    """The records of a run that ended while test_b ran: test_a passed, test_c never began."""
    return [rec("start", name="test_a"), result_rec("test_a", "pass"), rec("start", name="test_b")]


def raw(
    records: list[str],
    exit_code: int | None = 0,
    sig: int | None = None,
    timed_out: bool = False,
    output: str = "",
) -> RawRun:
    return RawRun(tuple(records), exit_code, sig, timed_out, 0.5, output, len(output))


def verdict(run: RawRun, known: frozenset[str] = frozenset(), plan: Plan = PLAN):
    return decide(run, plan, known, "test-isolation", WALL_S)


def statuses(result) -> dict[str, str]:
    return {t.name: t.status for t in result.tests}


# ---------------------------------------------------------------- the honest cases


def test_all_expected_pass_is_pass():
    result = verdict(raw(honest(), output="hello\n"))
    assert result.status == "pass"
    assert result.passed
    assert [t.name for t in result.tests] == list(EXPECTED)  # canaries are not reported
    assert set(statuses(result).values()) == {"pass"}
    assert result.counts() == (3, 3)
    assert result.isolation == "test-isolation"
    assert result.output == "hello\n"
    assert result.output_bytes == 6
    assert not result.tampered
    assert result.detail == ""


def test_one_failing_test_is_fail_with_its_traceback():
    result = verdict(raw(honest({"test_a": "pass", "test_b": "fail", "test_c": "pass"})))
    assert result.status == "fail"
    assert statuses(result) == {"test_a": "pass", "test_b": "fail", "test_c": "pass"}
    assert "AssertionError: test_b" in result.tests[1].traceback
    assert result.counts() == (2, 3)
    assert not result.tampered


def test_error_in_a_test_is_fail_not_error():
    # `error` is for exceptions outside any test; one test's exception fails the run.
    result = verdict(raw(honest({"test_a": "error", "test_b": "pass", "test_c": "pass"})))
    assert result.status == "fail"
    assert statuses(result)["test_a"] == "error"


def test_skipped_test_is_not_a_pass():
    result = verdict(raw(honest({"test_a": "skipped", "test_b": "pass", "test_c": "pass"})))
    assert result.status == "fail"
    assert statuses(result)["test_a"] == "skipped"


def test_per_test_timeout_record_gives_timeout_and_keeps_the_others():
    result = verdict(raw(honest({"test_a": "timeout", "test_b": "pass", "test_c": "timeout"})))
    assert result.status == "timeout"
    assert statuses(result) == {"test_a": "timeout", "test_b": "pass", "test_c": "timeout"}


# ---------------------------------------------------------------- incomplete runs


def test_missing_done_is_crash():
    result = verdict(raw(honest(done=False)))
    assert result.status == "crash"
    assert "before finishing" in result.detail


def test_missing_done_names_the_running_test():
    result = verdict(raw(stopped_in_test_b()))
    assert result.status == "crash"
    assert "test_b" in result.detail
    assert statuses(result) == {"test_a": "pass", "test_b": "missing", "test_c": "missing"}


def test_nonzero_exit_after_done_is_crash():
    result = verdict(raw(honest(), exit_code=3))
    assert result.status == "crash"
    assert "exit code 3" in result.detail


def test_no_exit_status_is_crash():
    result = verdict(raw(honest(), exit_code=None))
    assert result.status == "crash"


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS])
def test_death_by_signal_is_crash_with_the_signal_name(sig):
    result = verdict(raw(honest(done=False), exit_code=None, sig=sig))
    assert result.status == "crash"
    assert signal.Signals(sig).name in result.detail
    assert result.status != "timeout"


def test_signal_wins_even_after_a_done_record():
    result = verdict(raw(honest(), exit_code=None, sig=signal.SIGKILL))
    assert result.status == "crash"
    assert "SIGKILL" in result.detail


def test_unknown_signal_number_is_still_a_crash():
    result = verdict(raw(honest(done=False), exit_code=None, sig=200))
    assert result.status == "crash"
    assert "200" in result.detail


def test_sigxcpu_is_timeout():
    result = verdict(raw(honest(done=False), exit_code=None, sig=signal.SIGXCPU))
    assert result.status == "timeout"
    assert "CPU" in result.detail


def test_timed_out_is_timeout_and_marks_the_running_test():
    result = verdict(raw(stopped_in_test_b(), exit_code=None, sig=signal.SIGKILL, timed_out=True))
    assert result.status == "timeout"
    assert "5 s" in result.detail
    assert statuses(result) == {"test_a": "pass", "test_b": "timeout", "test_c": "missing"}
    assert "stopped after 5 s" in result.tests[1].traceback


def test_setup_error_is_crash():
    result = verdict(raw([rec("setup_error", msg="OSError: landlock refused"), rec("done")]))
    assert result.status == "crash"
    assert "landlock refused" in result.detail


# ---------------------------------------------------------------- errors outside tests


def test_module_error_is_error_with_the_message():
    records = [
        rec("module_error", exc="NameError", msg="name 'x' is not defined", tb="...", module=None),
        rec("done"),
    ]
    result = verdict(raw(records))
    assert result.status == "error"
    # The exception's type comes first: the message alone reads as if nothing had a name.
    assert result.detail == "NameError: name 'x' is not defined"
    # Nothing ran: the tests are "not run", not "missing" (which hints at a cut-short run).
    assert set(statuses(result).values()) == {"not_run"}


def syntax_error_run(exc: str, msg: str) -> RawRun:
    return raw([rec("module_error", exc=exc, msg=msg, tb="", module=None), rec("done")])


def test_code_that_does_not_compile_is_said_so_with_the_line_in_the_code():
    code = "def f(xs):\n    total = 0\n    return (total,\n"
    expected = compile_error(code)
    assert expected is not None and expected.startswith("SyntaxError: ")
    assert expected.endswith("(line 3)")
    # The runner compiled code + tests, so its line may point into the tests (line 40 here).
    run = syntax_error_run("SyntaxError", "'(' was never closed (__test__.py, line 40)")
    result = decide(run, PLAN, frozenset(), "test-isolation", WALL_S, code=code)
    assert result.status == "error"
    assert result.detail == f"the code does not compile: {expected}"
    assert "__test__.py" not in result.detail
    assert set(statuses(result).values()) == {"not_run"}


@pytest.mark.parametrize("exc", ["SyntaxError", "IndentationError", "TabError"])
def test_without_the_code_the_runners_line_is_kept_but_not_its_file_name(exc):
    result = verdict(syntax_error_run(exc, "invalid syntax (__test__.py, line 7)"))
    assert result.status == "error"
    assert result.detail == f"the code does not compile: {exc}: invalid syntax (line 7)"


def test_code_that_compiles_alone_but_not_before_the_tests_says_so():
    run = syntax_error_run("SyntaxError", "invalid syntax (__test__.py, line 12)")
    result = decide(run, PLAN, frozenset(), "test-isolation", WALL_S, code="x = 1\n")
    assert result.status == "error"
    assert result.detail.startswith("the code and the tests do not compile together: ")
    assert "(line 12, counting the tests' lines after the code's)" in result.detail
    assert "__test__.py" not in result.detail


def test_a_syntax_error_the_code_raises_while_running_stays_a_runtime_error():
    # eval("1 +") inside the candidate: another file name, so not a compile failure.
    run = syntax_error_run("SyntaxError", "invalid syntax (<string>, line 1)")
    result = decide(run, PLAN, frozenset(), "test-isolation", WALL_S, code="x = 1\n")
    assert result.status == "error"
    assert result.detail == "SyntaxError: invalid syntax (<string>, line 1)"


def test_compile_error_is_none_for_code_that_compiles():
    assert compile_error("def f():\n    return 1\n") is None
    assert compile_error("x = '\\d'\n") is None  # an invalid-escape warning is no error
    assert compile_error("x = 1\0\n") is not None  # null bytes: ValueError, reported too


def test_module_error_timeout_is_timeout():
    records = [rec("module_error", exc="TestTimeout", msg="", timeout=True), rec("done")]
    assert verdict(raw(records)).status == "timeout"


def missing_module_run(module: str) -> RawRun:
    """A run whose code failed to import ``module``, before any test ran."""
    error = rec(
        "module_error",
        exc="ModuleNotFoundError",
        msg=f"No module named '{module}'",
        module=module,
    )
    return raw([error, rec("done")])


def test_missing_known_module_is_env_error():
    result = verdict(missing_module_run("pandas.core"), known=frozenset({"pandas"}))
    assert result.status == "env_error"
    assert result.missing_module == "pandas"
    assert "pandas" in result.detail


def test_missing_unknown_module_is_error():
    result = verdict(missing_module_run("halluc"), known=frozenset({"pandas"}))
    assert result.status == "error"
    assert result.missing_module is None


def test_missing_known_module_inside_a_test_is_env_error():
    lines = honest()
    lines[2] = result_rec("test_a", "error", "ModuleNotFoundError", module="scipy")
    result = verdict(raw(lines), known=frozenset({"scipy"}))
    assert result.status == "env_error"
    assert result.missing_module == "scipy"


def test_no_expected_tests_is_error():
    plan = Plan((), CANARIES)
    lines = [line for line in honest() if "test_" not in line]
    result = verdict(raw(lines), plan=plan)
    assert result.status == "error"
    assert not result.passed


# ---------------------------------------------------------------- tampering and forgery


def test_canary_passing_is_tampered_fail():
    result = verdict(raw(honest(canary="pass")))
    assert result.status == "fail"
    assert result.tampered
    assert "tampered" in result.detail
    # The expected tests "passed": only the canary tells the truth.
    assert set(statuses(result).values()) == {"pass"}


def test_one_canary_passing_is_enough():
    lines = honest()
    lines[-2] = result_rec(CANARIES[-1], "pass")
    result = verdict(raw(lines))
    assert result.status == "fail"
    assert result.tampered


def test_silent_canaries_are_tampered_fail():
    lines = [line for line in honest() if "canary" not in line]
    result = verdict(raw(lines))
    assert result.status == "fail"
    assert result.tampered
    assert "did not report" in result.detail


def test_unexpected_record_is_tampered_fail():
    lines = honest()
    lines.insert(-1, result_rec("test_invented_by_the_child", "pass"))
    result = verdict(raw(lines))
    assert result.status == "fail"
    assert result.tampered
    assert "test_invented_by_the_child" in result.detail
    assert "test_invented_by_the_child" not in statuses(result)


def test_unparseable_record_is_tampered_fail():
    lines = honest()
    lines.insert(-1, "Ran 3 tests in 0.001s OK")
    result = verdict(raw(lines))
    assert result.status == "fail"
    assert result.tampered


def test_unknown_test_status_is_not_a_pass():
    lines = honest()
    lines[2] = result_rec("test_a", "passed-honestly")
    result = verdict(raw(lines))
    assert result.status != "pass"


def test_a_missing_expected_test_is_not_a_pass():
    lines = [line for line in honest() if '"test_c"' not in line]
    result = verdict(raw(lines))
    assert result.status == "fail"
    assert statuses(result)["test_c"] == "missing"
    assert result.counts() == (2, 3)


def test_forged_pass_after_a_real_failure_does_not_count():
    lines = honest({"test_a": "fail", "test_b": "pass", "test_c": "pass"})
    lines.insert(-1, result_rec("test_a", "pass"))
    result = verdict(raw(lines))
    assert result.status == "fail"
    assert statuses(result)["test_a"] == "fail"


def _with_issues(name: str, status: str, issues: object) -> list[str]:
    lines = honest()
    lines[lines.index(result_rec(name, "pass"))] = result_rec(name, status, issues=issues)
    return lines


def test_failing_subtests_are_kept_under_their_test_in_order():
    issues = [
        {"name": "test_b (n=2)", "status": "fail", "tb": "AssertionError: 2\n"},
        {"name": "test_b (n=1)", "status": "error", "tb": "KeyError: 1\n"},
        {"name": "test_b", "status": "fail", "tb": "AssertionError: own\n"},
    ]
    result = verdict(raw(_with_issues("test_b", "fail", issues)))
    assert result.status == "fail" and not result.tampered
    [test_b] = [t for t in result.tests if t.name == "test_b"]
    assert [(i.name, i.status, i.traceback) for i in test_b.issues] == [
        ("test_b (n=2)", "fail", "AssertionError: 2\n"),
        ("test_b (n=1)", "error", "KeyError: 1\n"),
        ("test_b", "fail", "AssertionError: own\n"),
    ]
    assert all(not t.issues for t in result.tests if t.name != "test_b")


def test_a_test_with_failing_subtests_is_never_a_pass():
    """Subtests are evidence about an expected test: a record that says pass beside a
    failing subtest is a fail, never a pass."""
    issues = [{"name": "test_a (n=1)", "status": "fail", "tb": "AssertionError\n"}]
    for status in ("pass", "skipped"):
        result = verdict(raw(_with_issues("test_a", status, issues)))
        assert result.status == "fail"
        assert statuses(result)["test_a"] == "fail"


@pytest.mark.parametrize(
    "issues",
    [
        "not a list",
        ["not a dict"],
        [{"name": "test_b (n=1)", "status": "fail", "tb": ""}],  # another test's subtest
        [{"name": "test_ab (n=1)", "status": "fail", "tb": ""}],  # no space after the name
        [{"name": "test_a (n=1)", "status": "pass", "tb": ""}],  # not something filed
        [{"name": "test_a (n=1)", "status": "fail", "tb": 3}],
        [{"status": "fail", "tb": ""}],
    ],
)
def test_malformed_subtest_records_are_tampering(issues: object):
    result = verdict(raw(_with_issues("test_a", "fail", issues)))
    assert result.status == "fail"
    assert result.tampered
    assert not any(t.issues for t in result.tests)


def test_only_records_no_expected_tests_reported_is_not_a_pass():
    # A child that prints "OK" and writes done, having run nothing.
    result = verdict(raw([rec("ready"), rec("done")], output="Ran 3 tests\n\nOK\n"))
    assert result.status == "fail"
    assert set(statuses(result).values()) == {"missing"}


def test_expected_names_come_from_the_plan_not_the_child():
    plan = plan_tests(
        Spec(
            "unittest",
            source="import unittest\nclass TestCases(unittest.TestCase):\n"
            "    def test_x(self):\n        self.assertTrue(f())\n"
            "    def helper(self):\n        pass\n",
        ),
        nonce="abc",
    )
    assert plan.expected == ("test_x",)
    assert "canary_abc_assertTrue" in plan.canaries
    lines = [rec("start", name="test_x"), result_rec("test_x", "pass")]
    lines += [result_rec(name, "fail") for name in plan.canaries] + [rec("done")]
    assert verdict(raw(lines, exit_code=plan.exit_code), plan=plan).status == "pass"
    # Forged records followed by the candidate's own exit(0): not the runner's exit status.
    assert verdict(raw(lines, exit_code=0), plan=plan).status == "crash"
    lines.insert(0, result_rec("test_y", "pass"))
    assert verdict(raw(lines, exit_code=plan.exit_code), plan=plan).status == "fail"


# ---------------------------------------------------------------- shards


def test_merged_shards_need_every_done():
    whole = honest()
    first = RawRun.merge([raw(whole), raw(honest(done=False))])
    assert verdict(first).status == "crash"
    both = RawRun.merge([raw(whole), raw(whole)])
    assert verdict(both).status == "pass"


def test_merged_shards_keep_a_passing_canary():
    merged = RawRun.merge([raw(honest()), raw(honest(canary="pass"))])
    result = verdict(merged)
    assert result.status == "fail"
    assert result.tampered
