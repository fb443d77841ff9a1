"""BigCodeBench's verdicts in a ConvCodeWorld log folder (the ``eval`` entries of its
``*_eval_results.json`` files) rebuilt as ``ExecResult``s whose execution feedback renders as
the reference rendered them."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from convtui.core.execution.types import ExecResult, TestIssue, TestOutcome
from convtui.sessions.database.errors import ImportFormatError


def result_from_eval(
    entry: Mapping[str, Any], where: str = "eval", test_names: Collection[str] | None = None
) -> ExecResult:
    """An ``ExecResult`` whose BigCodeBench ``details`` (``feedback.failure_details``) are
    ``entry``'s, in the same order, so that its execution feedback renders as the reference's.

    BigCodeBench fills ``details[test.id().split(".")[-1]] = trace`` over unittest's
    ``failures + errors`` (bigcode-project/bigcodebench: bigcodebench/eval/__init__.py,
    ``unsafe_execute``): failures before errors, each group in run order (tests by name, a
    test's failing subtests as they ran, then its own failure). Each key is filed under its
    test (:func:`_keyed_by_test`): a test's own entry stays a test of its own; a test with
    failing subtests gets them, and its own entry, as ``issues`` in the dict's order, as the
    executor records them (core/execution/types.py ``TestOutcome``). Failures and errors are told
    apart by :func:`_failures_end`.

    ``test_names``: the task's tests (``declared_test_names`` of its module, or its snippet
    names), which tell a subtest's key from one that only looks like it; without them, any
    identifier is taken for a test's name.
    """
    status = entry.get("status")
    details = entry.get("details") or {}
    if status not in ("pass", "fail", "timeout") or not isinstance(details, dict):
        raise ImportFormatError(
            f"{where}: an eval entry needs status pass|fail|timeout and details"
        )
    if status == "pass":
        return ExecResult("pass", isolation="imported")
    run_status = "timeout" if status == "timeout" else "fail"
    if not details:
        return ExecResult(run_status, isolation="imported")  # type: ignore[arg-type]
    if set(details) == {"ALL"}:
        text = str(details.get("ALL", ""))
        return ExecResult(
            "timeout" if status == "timeout" else "error",
            isolation="imported",
            detail=text,
            error_message=text,
        )
    # Keys that collided in the reference (two subtests described alike, or cut alike at
    # their last dot: "test_x (value=1.5)" and "test_x (value=2.5)" are both "5)") were one
    # entry there, at the first one's position with the last one's traceback: the others are
    # gone from the dict and cannot be recovered, and neither can the text a cut key lost.
    keyed = _keyed_by_test(
        [(str(key), str(text)) for key, text in details.items()],
        None if test_names is None else frozenset(test_names),
    )
    end = _failures_end(
        [test for test, _, _ in keyed], [_raised_assertion(text) for _, _, text in keyed]
    )
    by_test: dict[str, list[TestIssue]] = {}
    for position, (test, name, text) in enumerate(keyed):
        by_test.setdefault(test, []).append(
            TestIssue(name, "fail" if position < end else "error", text)
        )
    tests = []
    for test, issues in by_test.items():
        first = issues[0]
        if len(issues) == 1 and first.name == test:
            tests.append(TestOutcome(test, first.status, 0.0, first.traceback))
        else:
            # A test with failing subtests: the executor's shape, whose status and traceback
            # are its first problem and whose issues are what unittest filed for it.
            tests.append(
                TestOutcome(test, first.status, 0.0, first.traceback, issues=tuple(issues))
            )
    return ExecResult(run_status, tests=tuple(tests), isolation="imported")  # type: ignore[arg-type]


# A subtest's id is its test's id, a space, then unittest's description of it: "[msg]",
# "(k=v, ...)", both, or "(<subtest>)" (CPython Lib/unittest/case.py, _SubTest._subDescription).
_SUBTEST_KEY = re.compile(r"([A-Za-z_]\w*) [\[(]")


def _keyed_by_test(
    details: Sequence[tuple[str, str]], test_names: frozenset[str] | None
) -> list[tuple[str, str, str]]:
    """(test, issue name, traceback) for each ``details`` entry, in order.

    A key that is a test's name (an identifier: a cut key always ends with the ``)`` or ``]``
    of a description) is that test's own entry; ``name (...)`` or ``name [...]`` a subtest of
    test ``name`` (one of ``test_names`` when given), named by its key. A key with no test's
    name left, cut at a dot inside the description (``5)``), belongs to the test of the key
    before it, as BigCodeBench files a test's subtests one after another (keys before any
    that names a test go with the first that does); it is named ``test_x ...5)``: its test's
    name, so the store files it back under its test (sessions/database/codec.py), and a dot before
    the key, so that ``bcb_subtest_key`` cuts it back to the key (core/feedback/render.py). The
    subtest it stood for may have been a later test's, whose every key was cut: the text
    renders the same either way, and nothing in the dict tells them apart. When no key names
    a test, the first key stands for one."""
    tests: list[str | None] = []
    for key, _ in details:
        match = _SUBTEST_KEY.match(key)
        if key.isidentifier():
            tests.append(key)
        elif match and (test_names is None or match.group(1) in test_names):
            tests.append(match.group(1))
        else:
            tests.append(None)
    current = next((test for test in tests if test is not None), details[0][0])
    keyed: list[tuple[str, str, str]] = []
    for (key, text), test in zip(details, tests, strict=True):
        if test is not None:
            current = test
            keyed.append((test, key, text))
        elif key == current:
            keyed.append((key, key, text))  # the first key, standing for a test
        else:
            keyed.append((current, f"{current} ...{key}", text))
    return keyed


_TRACEBACK_HEAD = "Traceback (most recent call last):"


def _raised_assertion(text: str) -> bool | None:
    """Whether the traceback ``text`` ends in an ``AssertionError`` (unittest files those
    under ``failures``, anything else under ``errors``: CPython Lib/unittest/case.py,
    ``_Outcome.testPartExecutor``); None when it names no exception. The exception is the
    first line at the margin after the last ``Traceback`` head, where a chained traceback's
    last exception is; its message may run on over further lines."""
    lines = text.splitlines()
    heads = [i for i, line in enumerate(lines) if line == _TRACEBACK_HEAD]
    if not heads:
        return None
    for line in lines[heads[-1] + 1 :]:
        if line and not line[0].isspace():
            name = re.match(r"[\w.]+", line)
            if name is None or line[name.end() :][:1] not in (":", ""):
                return None
            return name.group(0).rsplit(".", 1)[-1] == "AssertionError"
    return None


def _failures_end(tests: Sequence[str], assertions: Sequence[bool | None]) -> int:
    """How many of the entries, whose tests are ``tests``, are failures (the rest are errors).

    BigCodeBench lists failures then errors, each by test name (unittest's loader sorts the
    methods), so a split is possible only where the test names before it, and those after
    it, never go down; the names are compared, not the keys (``test_x (length=100)`` sorts
    before ``test_x (length=50)``, which ran first). Among the possible splits, the one that
    agrees with the most tracebacks (:func:`_raised_assertion`) wins, then the latest one.
    Any possible split renders the dict in its order; the tracebacks make the statuses right.
    A dict in no such order (not BigCodeBench's) keeps the longest sorted run as failures."""
    count = len(tests)
    rising_to = 1  # tests[:rising_to] never goes down
    while rising_to < count and tests[rising_to - 1] <= tests[rising_to]:
        rising_to += 1
    rising_from = count - 1  # nor does tests[rising_from:]
    while rising_from > 0 and tests[rising_from - 1] <= tests[rising_from]:
        rising_from -= 1
    if rising_from > rising_to:
        return rising_to
    # score(end) = failures' tracebacks before end + errors' from end on, kept as it moves.
    score = sum(found is True for found in assertions[:rising_from]) + sum(
        found is False for found in assertions[rising_from:]
    )
    best, best_score = rising_from, score
    for end in range(rising_from + 1, rising_to + 1):
        score += (assertions[end - 1] is True) - (assertions[end - 1] is False)
        if score >= best_score:
            best, best_score = end, score
    return best
