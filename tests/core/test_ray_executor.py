"""``--executor ray``: candidates run on a real two-node Ray cluster started on this machine
(support/ray_cluster.py), never a mock, and come back with the local executor's verdicts,
feedback and cache keys; ``doctor`` names each node's isolation; ``bench live`` records what
it records locally; a node killed mid-run costs nothing but time.

One cluster for the whole module, shut down at its end: its processes are this test
process's children, which tests/core/test_hostile.py would otherwise find."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cli import invoke
from support.data import needs_bigcodebench
from support.live import FAILS, benched, histories
from support.scripted import script

from convtui.benchmarks.runs.doctor import TaskOutcome, run_doctor
from convtui.core.execution.requests import broken_solution
from convtui.core.execution.types import ExecResult
from convtui.core.feedback.render import execution_feedback
from convtui.core.projects.checkout import exec_request

pytestmark = needs_bigcodebench

# Quick standard-library tasks; the last three fail their ground truth here, as in the local
# doctor (they need the internet), so failing verdicts are compared too.
SUBSET = [
    *(f"BigCodeBench/{n}" for n in (1, 2, 4, 5, 6, 7, 8, 12, 13, 14, 15, 16)),
    *("BigCodeBench/176", "BigCodeBench/314", "BigCodeBench/1005"),
]


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    pytest.importorskip("ray", reason="--executor ray needs pip install -e '.[ray]'")
    from support.ray_cluster import start_cluster

    cluster = start_cluster()
    yield cluster
    cluster.shutdown()


@pytest.fixture(scope="module")
def subset(bigcodebench):
    return [bigcodebench.get(i) for i in SUBSET]


@pytest.fixture(scope="module")
def local_doctor(subset, executor) -> dict[str, str]:
    """Each task's doctor verdict with the local executor."""
    return {o.id: o.status for o in run_doctor(subset, executor).outcomes}


def verdict(result: ExecResult) -> tuple:
    """What a verdict says, without how long it took or what it printed."""
    tests = tuple((t.name, t.status, t.traceback, t.issues) for t in result.tests)
    return (
        result.status,
        result.detail,
        result.isolation,
        result.missing_module,
        result.tampered,
        result.error_message,
        tests,
    )


def test_ray_gives_the_local_verdicts_feedback_and_cache_keys(ray_cluster, subset, executor):
    from convtui.core.execution.cluster.pool import RayExecutor

    # Ground truths (pass, or fail for want of the internet) and solutions that raise.
    requests = [exec_request(t, t.ground_truth) for t in subset]
    requests += [exec_request(t, broken_solution(t)) for t in subset[:4]]
    local = executor.run_many(requests)
    with RayExecutor(ray_cluster.address) as cluster:
        assert cluster.jobs == 2
        assert {s.node_id for s in cluster.slots()} == {n["NodeID"] for n in _alive()}
        remote = cluster.run_many(requests)
        keys = [cluster.cache_key(r) for r in requests]
        one = cluster.run(requests[-1])
    assert [verdict(r) for r in remote] == [verdict(r) for r in local]
    assert [r.status for r in remote].count("pass") == len(SUBSET) - 3
    assert keys == [executor.cache_key(r) for r in requests]
    assert verdict(one) == verdict(local[-1])
    for request, here, there in zip(requests, local, remote, strict=True):
        rendered = [
            execution_feedback(r, coverage="full", test_source=request.tests.source)
            for r in (here, there)
        ]
        assert rendered[0] == rendered[1]


def test_doctor_on_a_cluster_reports_the_isolation_of_each_node(ray_cluster, executor):
    done = invoke(
        "doctor", "--ids", "1,2", "--executor", f"ray:{ray_cluster.address}", "--json"
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads(done.stdout)
    assert summary["passed"] == 2
    assert summary["isolation"] == executor.isolation.label
    nodes = summary["nodes"]
    assert len(nodes) == 2 and {n["slots"] for n in nodes} == {1}
    assert {n["isolation"] for n in nodes} == {executor.isolation.label}
    assert all(n["isolation_detail"].startswith(executor.isolation.label) for n in nodes)
    assert len({n["fingerprint"] for n in nodes}) == 1


def test_a_live_run_on_a_cluster_records_what_a_local_run_records(ray_cluster, tmp_path):
    """The turn loop and the store stay in this process; only the executions go out."""
    model = script(tmp_path / "fails.jsonl", [FAILS])
    local, cluster = tmp_path / "local.db", tmp_path / "cluster.db"
    benched(local, "--model", model)
    benched(cluster, "--model", model, "--executor", f"ray:{ray_cluster.address}")
    assert histories(cluster) == histories(local)  # code and every feedback, turn by turn
    assert executions(cluster) == executions(local)
    assert len(executions(local)) == 9  # three tasks, three turns each, all failing


def test_a_node_killed_during_doctor_loses_no_task_and_repeats_none(
    ray_cluster, subset, local_doctor
):
    """A third node joins, then dies by SIGKILL (its slot's process and its raylet) after
    the third verdict: its run goes to the other nodes, every task has one verdict, the
    local one. Last in the module: the cluster is back to two nodes after it."""
    from support.ray_cluster import kill_node

    from convtui.core.execution.cluster.pool import RayExecutor

    doomed = ray_cluster.add_node(num_cpus=1)
    ray_cluster.wait_for_nodes()
    seen: Counter[str] = Counter()
    killed: list[int] = []
    try:
        with RayExecutor(ray_cluster.address) as cluster:
            assert cluster.jobs == 3

            def tick(outcome: TaskOutcome) -> None:
                seen[outcome.id] += 1
                if sum(seen.values()) == 3:
                    killed.extend(kill_node(ray_cluster, doomed, cluster))

            report = run_doctor(subset, cluster, progress=tick)
            lost = cluster.lost_nodes
            left = {s.node_id for s in cluster.slots()}
    finally:
        ray_cluster.wait_for_nodes()  # Ray has marked it dead before anything else starts
    assert killed and len(lost) == 1 and doomed.node_id[:8] in lost[0]
    assert doomed.node_id not in left
    assert seen == Counter(SUBSET)  # each task decided once, none lost
    assert {o.id: o.status for o in report.outcomes} == local_doctor


def executions(db: Path) -> list[tuple]:
    """(task, feedback, turn, cache key, status, tests passed, isolation) of every turn."""
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT s.task_id, s.feedback, t.idx, e.cache_key, e.status, e.tests_passed, "
            "e.isolation FROM turns t JOIN sessions s ON s.id = t.session_id "
            "JOIN executions e ON e.id = t.execution_id ORDER BY 1, 2, 3"
        ).fetchall()


def _alive() -> list[dict]:
    import ray

    return [n for n in ray.nodes() if n["Alive"]]
