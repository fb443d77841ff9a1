"""One execution slot of the cluster: the body of the Ray actor that the pool starts once per
CPU slot of each node. It holds a local Executor of one job, so a run on a node goes through
exactly what a run on this machine goes through (its zygotes, started with an allow-listed
environment and confined by the isolation detected *on that node*, the light and full
profiles, the on-demand imports); only the verdict is decided on the driver, from the
zygote's report, as executor_batch does for the local pool."""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass

from convtui.core.execution.executor import Executor
from convtui.core.execution.isolation import Isolation
from convtui.core.execution.testplan import TestPlan
from convtui.core.execution.types import RUNNER_VERSION, ExecRequest
from convtui.core.execution.verdict import RawRun


@dataclass(frozen=True)
class SlotHello:
    """What a slot says once started: where it is and what confines its runs there."""

    node_id: str
    host: str
    isolation: Isolation
    isolation_detail: str
    python: str
    runner: str
    pid: int


class ExecutionSlot:
    """An actor's state: one Executor with one job. Plain Python; the pool makes it a Ray
    actor (cluster/pool.py), so it can also be exercised without Ray."""

    def __init__(self) -> None:
        self._executor: Executor | None = None

    def start(self, python: str | None, isolation: str, node_id: str) -> SlotHello:
        """Open the executor as the local one would be opened on this node: ``python`` None
        takes this node's $CONVTUI_EXEC_PYTHON, else the interpreter running the actor."""
        executor = Executor(python=python, jobs=1, isolation=isolation)
        self._executor = executor
        return SlotHello(
            node_id=node_id,
            host=socket.gethostname(),
            isolation=executor.isolation,
            isolation_detail=executor.isolation.describe(),
            python=executor.python,
            runner=RUNNER_VERSION,
            pid=os.getpid(),
        )

    def run_part(
        self, request: ExecRequest, plan: TestPlan, only: Sequence[str] | None
    ) -> RawRun | None:
        return self._opened().run_part(request, plan, only)

    def warm_up(self, profiles: Sequence[str]) -> None:
        self._opened().warm_up(profiles)

    def environment_info(self) -> dict:
        """The local executor's environment_info plus this node's environment fingerprint."""
        executor = self._opened()
        return {**executor.environment_info(), "fingerprint": executor.fingerprint()}

    def fingerprint(self) -> str:
        return self._opened().fingerprint()

    def close(self) -> None:
        if self._executor is not None:
            self._executor.close()

    def _opened(self) -> Executor:
        if self._executor is None:
            raise RuntimeError("ExecutionSlot.start was not called")
        return self._executor
