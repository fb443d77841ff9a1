"""The executions table as the executor's cache: exact round trips, no load-sensitive hits."""

from __future__ import annotations

from dataclasses import replace

import pytest
from store_values import result, turn

from convtui.core.execution.types import ExecResult, TestIssue, TestOutcome
from convtui.core.turns.journal import ExecutionCache
from convtui.sessions import Store
from convtui.sessions.database.codec import result_hash

CODE = "def task_func(xs):\n    return sum(xs)\n"


def execution_rows(store: Store) -> list[dict]:
    return list(store.db.query("SELECT cache_key, in_cache, status FROM executions ORDER BY id"))


def test_a_cached_result_comes_back_equal_with_its_tests(store: Store) -> None:
    cache: ExecutionCache = store.execution_cache()
    stored = result("fail")
    cache.put("k1", "BigCodeBench/0", CODE, stored)

    assert cache.get("k1") == stored
    assert cache.get("k2") is None
    tests = list(store.db.query("SELECT position, name FROM execution_tests"))
    assert tests == [{"position": 0, "name": "test_empty"}, {"position": 1, "name": "test_types"}]


@pytest.mark.parametrize("status", ["timeout", "crash"])
def test_load_sensitive_results_are_logged_but_never_served(store: Store, status: str) -> None:
    cache = store.execution_cache()
    cache.put("k1", "BigCodeBench/0", CODE, result(status))

    assert cache.get("k1") is None
    assert execution_rows(store) == [{"cache_key": "k1", "in_cache": 0, "status": status}]

    # The next run of the same code may pass; that one is cached.
    cache.put("k1", "BigCodeBench/0", CODE, result("pass"))
    assert cache.get("k1") == result("pass")


@pytest.mark.parametrize("status", ["pass", "fail", "error", "env_error"])
def test_deterministic_verdicts_are_cached(store: Store, status: str) -> None:
    cache = store.execution_cache()
    cache.put("k1", "BigCodeBench/0", CODE, result(status))

    assert cache.get("k1") == result(status)


def test_the_first_result_for_a_key_wins_and_a_different_one_is_logged(store: Store) -> None:
    cache = store.execution_cache()
    first, flaky = result("fail"), result("pass")
    cache.put("k1", "BigCodeBench/0", CODE, first)
    cache.put("k1", "BigCodeBench/0", CODE, first)  # a repeat adds nothing
    cache.put("k1", "BigCodeBench/0", CODE, flaky)

    assert cache.get("k1") == first
    assert [row["in_cache"] for row in execution_rows(store)] == [1, 0]


def test_a_turn_links_the_cached_row_of_its_result(store: Store, session_id: str) -> None:
    saved = turn(0)
    assert saved.execution is not None
    store.execution_cache().put("k0", "BigCodeBench/0", saved.code, saved.execution)

    store.save_turn(session_id, saved, "running", "k0")

    assert len(execution_rows(store)) == 1
    assert store.load_turns(session_id) == [saved]


def test_a_turn_that_timed_out_keeps_its_result_without_caching_it(
    store: Store, session_id: str
) -> None:
    timed_out = turn(0, status="timeout")
    store.save_turn(session_id, timed_out, "running", "k0")

    assert store.load_turns(session_id) == [timed_out]
    assert store.execution_cache().get("k0") is None


def test_saving_a_turn_fills_the_cache_for_its_key(store: Store, session_id: str) -> None:
    saved = turn(0)
    store.save_turn(session_id, saved, "running", "k0")

    assert store.execution_cache().get("k0") == saved.execution


def test_a_turn_whose_result_differs_from_the_cached_one_keeps_its_own(
    store: Store, session_id: str
) -> None:
    saved = turn(0)
    assert saved.execution is not None
    other = replace(saved.execution, duration_s=9.5)
    store.execution_cache().put("k0", "BigCodeBench/0", saved.code, other)

    store.save_turn(session_id, saved, "running", "k0")

    assert store.load_turns(session_id)[0].execution == saved.execution
    assert store.execution_cache().get("k0") == other


def test_failing_subtests_come_back_under_their_tests(store: Store) -> None:
    """What unittest filed for a test whose subtests failed (``TestOutcome.issues``) is kept:
    a cache hit or a resumed session renders the same execution feedback as the run did."""
    cache = store.execution_cache()
    values = (
        TestIssue("test_values (value=12.5)", "fail", "AssertionError: 1\n"),
        TestIssue("test_values (value=3.0)", "error", "KeyError: 2\n"),
        TestIssue("test_values", "timeout", "TestTimeout\n"),
    )
    stored = ExecResult(
        "fail",
        tests=(
            TestOutcome("test_plain", "fail", 0.25, "AssertionError: 0\n"),
            TestOutcome("test_values", "fail", 0.5, "AssertionError: 1\n", issues=values),
            TestOutcome("test_words", "error", 0.125, "W\n", issues=values[:0]),
        ),
        isolation="landlock",
    )
    cache.put("k1", "BigCodeBench/377", CODE, stored)

    assert cache.get("k1") == stored
    rows = list(store.db.query("SELECT position, name, status FROM execution_tests"))
    assert [(r["position"], r["name"], r["status"]) for r in rows] == [
        (0, "test_plain", "fail"),
        (1, "test_values", "fail"),
        (2, "test_words", "error"),
        (3, "test_values (value=12.5)", "fail"),
        (4, "test_values (value=3.0)", "error"),
        (5, "test_values", "timeout"),
    ]
    assert store.db.execute("SELECT tests_total FROM executions").fetchone() == (3,)


def test_results_without_subtests_keep_their_hash() -> None:
    """Rows written before tests had issues are found again by ``result_hash``."""
    assert "issues" not in result("fail").to_dict()["tests"][1]
    # The hash this result had before TestOutcome.issues existed.
    assert result_hash(result("fail")) == (
        "4e1783bb051c78090c236b760589f85d75648fe6d8e232975dfb95e245e92ff0"
    )
