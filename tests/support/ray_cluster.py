"""A real Ray cluster on this machine for the tests of ``--executor ray``: a head and a
second node, each with its own raylet, object store and worker processes, as two machines
would have (Ray's own ``cluster_utils.Cluster``); and how a test loses a node the way a
machine is lost."""

from __future__ import annotations

import contextlib
import os
import signal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from convtui.core.execution.cluster.pool import RayExecutor


def start_cluster() -> Any:
    """A head and one more node of one CPU each: two execution slots, as many as the local
    executor the tests compare with has jobs."""
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": 1,
            # A lost node is declared dead after about a second, not Ray's default of about
            # fifteen, so the test that kills one need not wait that long for Ray to agree.
            "_system_config": {
                "health_check_initial_delay_ms": 0,
                "health_check_period_ms": 300,
                "health_check_timeout_ms": 300,
                "health_check_failure_threshold": 3,
            },
        },
    )
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    return cluster


def kill_node(cluster: Any, node: Any, executor: RayExecutor) -> list[int]:
    """Lose ``node`` all at once, by SIGKILL, as a machine that dies is lost: the processes
    of the executor's slots on it (their zygotes die with them), then its raylet, object
    store and the rest. Returns the slot processes killed."""
    pids = [slot.pid for slot in executor.slots() if slot.node_id == node.node_id]
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    cluster.remove_node(node, allow_graceful=False)
    return pids
