"""RayExecutor: the executor backend whose sandboxes live on the nodes of a Ray cluster.

One actor per CPU slot of every node (cluster/slot.py), each holding a local Executor of one
job; the driver keeps the plans, shards and verdicts (executor_batch), so a request gets the
verdict and the cache key it gets locally. A run whose node is lost (its actor dies with it)
is run again on another slot, at most on ``MAX_NODES_LOST`` nodes; its caller sees one
result, so nothing is recorded twice. The cluster must confine candidates the same way on
every node: nodes whose isolation differs are refused, as are task environments that differ
once a cache key is asked for."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from convtui.core.execution.backend import ExecutionBackend
from convtui.core.execution.batch import execution_key
from convtui.core.execution.cluster.connect import connect, disconnect, import_ray
from convtui.core.execution.cluster.slot import ExecutionSlot, SlotHello
from convtui.core.execution.executor import ExecutorError
from convtui.core.execution.isolation import Isolation
from convtui.core.execution.testplan import TestPlan
from convtui.core.execution.types import RUNNER_VERSION, ExecRequest
from convtui.core.execution.verdict import RawRun

# A run is given up (ExecutorError) once it was lost with this many different nodes: a node
# lost is an accident, three in a row more likely something this run does to them.
MAX_NODES_LOST = 3
# Actors start in a Ray worker the node already runs, and only import convtui and probe the
# isolation: seconds. One not started by then waits for CPUs that other work holds.
_START_TIMEOUT_S = 120.0
_CLOSE_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class _Slot:
    handle: Any  # a Ray ActorHandle of ExecutionSlot
    hello: SlotHello


class RayExecutor(ExecutionBackend):
    """Runs candidates on a Ray cluster. Thread-safe; use as a context manager.

    ``address`` as parse_executor gives it (None: ray.init() finds or starts a cluster on
    this machine); ``jobs`` the slots per node (default: the node's CPUs); ``python`` and
    ``isolation`` as for Executor, applied on every node."""

    def __init__(
        self,
        address: str | None,
        *,
        python: str | None = None,
        jobs: int | None = None,
        isolation: str = "auto",
    ) -> None:
        self._ray = import_ray()
        self._owns_connection = connect(address)
        self._cond = threading.Condition()
        self._idle: list[_Slot] = []
        self._live: list[_Slot] = []
        self._fingerprint: str | None = None
        # The first cache keys are asked for by many sessions at once: one asks the nodes.
        self._fingerprinting = threading.Lock()
        # Where slots were lost during the run, in order ("node HOST (ID)").
        self.lost_nodes: list[str] = []
        try:
            started = self._start(python or os.environ.get("CONVTUI_EXEC_PYTHON"), jobs, isolation)
            self.isolation: Isolation = _same_isolation(started)
        except BaseException:
            self.close()
            raise
        self.jobs = len(started)

    # --- the ExecutionBackend interface ---------------------------------------------------------

    def run_part(
        self, request: ExecRequest, plan: TestPlan, only: Sequence[str] | None = None
    ) -> RawRun | None:
        """The zygote's report of one run or shard, from whichever slot is free; run again
        elsewhere when the slot's node is lost meanwhile."""
        exceptions = self._ray.exceptions
        lost_on: set[str] = set()
        while len(lost_on) < MAX_NODES_LOST:
            slot = self._take()
            try:
                raw = self._ray.get(slot.handle.run_part.remote(request, plan, only))
            except (
                exceptions.RayActorError,
                exceptions.WorkerCrashedError,
                exceptions.NodeDiedError,
                exceptions.ObjectLostError,
            ):
                lost_on.add(slot.hello.node_id)
                self._lose(slot)
                continue
            except exceptions.RayTaskError as exc:
                self._give(slot)
                raise ExecutorError(f"on {_where(slot.hello)}: {_cause(exc)}") from None
            except BaseException:
                self._give(slot)
                raise
            self._give(slot)
            return raw
        raise ExecutorError(
            f"the run of {request.task_id or 'a candidate'} was lost with {MAX_NODES_LOST} "
            "nodes of the Ray cluster in turn; run the command again to go on"
        )

    def cache_key(self, request: ExecRequest) -> str:
        """The local executor's key (executor_batch.execution_key) with the cluster's
        isolation and task environment, which are the same on every node."""
        return execution_key(request, self.isolation.label, self.fingerprint())

    def warm_up(self, profiles: Sequence[str] = ("light", "full")) -> None:
        """Start every slot's zygotes of ``profiles`` now (slots lost meanwhile are dropped)."""
        for _ in self._on_each(list(self._live), "warm_up", tuple(profiles)):
            pass

    def environment_info(self) -> dict:
        """The first node's Executor.environment_info, and per node where it is, how many
        slots it has, its isolation and its task environment's fingerprint (``nodes``)."""
        nodes: list[dict] = []
        first: dict = {}
        for slot, info in self._on_each(self._one_per_node(), "environment_info"):
            first = first or info
            nodes.append(
                {
                    "node": slot.hello.node_id,
                    "host": slot.hello.host,
                    "slots": sum(s.hello.node_id == slot.hello.node_id for s in self._live),
                    "isolation": slot.hello.isolation.label,
                    "isolation_detail": slot.hello.isolation_detail,
                    "python": f"{info.get('python')} ({info.get('executable')})",
                    "fingerprint": info.get("fingerprint"),
                }
            )
        if not nodes:
            raise ExecutorError("every node of the Ray cluster was lost")
        return {**first, "isolation": self.isolation.label, "nodes": nodes}

    def fingerprint(self) -> str:
        """The task environment's fingerprint, the same on every node (else ExecutorError:
        a result cached from one node would stand for another's)."""
        with self._fingerprinting:
            if self._fingerprint is None:
                found = {
                    slot.hello.node_id: (slot.hello, fp)
                    for slot, fp in self._on_each(self._one_per_node(), "fingerprint")
                }
                prints = {fp for _, fp in found.values()}
                if not prints:
                    raise ExecutorError("every node of the Ray cluster was lost")
                if len(prints) != 1:
                    listed = "; ".join(f"{_where(h)}: {fp}" for h, fp in found.values())
                    raise ExecutorError(
                        "the nodes of the Ray cluster have different task environments "
                        f"(installed distributions or Python): {listed}; install the same "
                        "ones on every node"
                    )
                self._fingerprint = prints.pop()
            return self._fingerprint

    def close(self) -> None:
        """Stop every slot's zygotes and actors; disconnect if this executor connected."""
        with self._cond:
            slots, self._live, self._idle = self._live, [], []
            self._cond.notify_all()
        if slots:
            stopping = [slot.handle.close.remote() for slot in slots]
            with contextlib.suppress(Exception):
                self._ray.wait(stopping, num_returns=len(stopping), timeout=_CLOSE_TIMEOUT_S)
            for slot in slots:
                with contextlib.suppress(Exception):
                    self._ray.kill(slot.handle)
        if self._owns_connection:
            self._owns_connection = False
            disconnect()

    def slots(self) -> list[SlotHello]:
        """What each live slot said when it started: its node, host, process and isolation."""
        with self._cond:
            return [slot.hello for slot in self._live]

    # --- slots -----------------------------------------------------------------------------------

    def _start(self, python: str | None, jobs: int | None, isolation: str) -> list[_Slot]:
        """One actor per CPU slot (``jobs`` per node if given) of every live node, started."""
        ray = self._ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        actor = ray.remote(ExecutionSlot)
        pending: list[tuple[Any, Any]] = []
        for node in ray.nodes():
            cpus = float(node.get("Resources", {}).get("CPU", 0))
            if not node.get("Alive") or cpus <= 0:
                continue
            count = jobs or max(1, int(cpus))
            for _ in range(count):
                handle = actor.options(
                    # --jobs past the node's CPUs shares them rather than waiting for more.
                    num_cpus=min(1.0, cpus / count),
                    max_restarts=0,
                    max_task_retries=0,
                    scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False),
                ).remote()
                pending.append((handle, handle.start.remote(python, isolation, node["NodeID"])))
        if not pending:
            raise ExecutorError("the Ray cluster has no live node with a CPU to run candidates")
        refs = [ref for _, ref in pending]
        ray.wait(refs, num_returns=len(refs), timeout=_START_TIMEOUT_S)
        started: list[_Slot] = []
        failure: str | None = None
        dropped: str | None = None  # why Ray gave up an actor, when it said
        for handle, ref in pending:
            try:
                hello = ray.get(ref, timeout=0)
            except ray.exceptions.RayTaskError as exc:
                failure = failure or _cause(exc)
            except ray.exceptions.RayActorError as exc:  # its node went away, or Ray dropped it
                dropped = dropped or _actor_death(exc)
            except ray.exceptions.GetTimeoutError:
                pass  # never scheduled: CPUs held by other work
            else:
                started.append(_Slot(handle, hello))
                continue
            with contextlib.suppress(Exception):
                ray.kill(handle)
        with self._cond:
            self._live, self._idle = list(started), list(started)
        if failure is not None:
            raise ExecutorError(f"a node of the Ray cluster cannot run candidates: {failure}")
        if not started:
            why = f"Ray dropped them: {dropped}" if dropped else f"within {_START_TIMEOUT_S:.0f} s"
            raise ExecutorError(f"no execution slot started on the Ray cluster ({why})")
        behind = [s.hello for s in started if s.hello.runner != RUNNER_VERSION]
        if behind:
            raise ExecutorError(
                f"{_where(behind[0])} runs convtui's runner version {behind[0].runner}, this "
                f"machine {RUNNER_VERSION}: install the same convtui on every node"
            )
        return started

    def _take(self) -> _Slot:
        with self._cond:
            while not self._idle:
                if not self._live:
                    raise ExecutorError(
                        "every node of the Ray cluster that ran candidates was lost "
                        f"({', '.join(self.lost_nodes) or 'none left'})"
                    )
                self._cond.wait()
            return self._idle.pop()

    def _give(self, slot: _Slot) -> None:
        with self._cond:
            if slot in self._live:
                self._idle.append(slot)
                self._cond.notify()

    def _lose(self, slot: _Slot) -> None:
        """Drop ``slot``, and every slot of its node if Ray says the node is gone."""
        dead = {n["NodeID"] for n in self._ray.nodes() if not n.get("Alive")}
        with self._cond:
            gone = [s for s in self._live if s is slot or s.hello.node_id in dead]
            self._live = [s for s in self._live if s not in gone]
            self._idle = [s for s in self._idle if s not in gone]
            # Ray often reports the actor gone before it marks the node dead: a node that
            # lost a slot is named either way.
            if _where(slot.hello) not in self.lost_nodes:
                self.lost_nodes.append(_where(slot.hello))
            self._cond.notify_all()
        for lost in gone:
            with contextlib.suppress(Exception):
                self._ray.kill(lost.handle)

    def _one_per_node(self) -> list[_Slot]:
        with self._cond:
            return list({s.hello.node_id: s for s in reversed(self._live)}.values())

    def _on_each(self, slots: Sequence[_Slot], method: str, *args: object) -> Iterator:
        """(slot, what ``method`` returned) for each of ``slots`` called side by side; slots
        whose node is lost meanwhile are dropped and left out."""
        calls = [(slot, getattr(slot.handle, method).remote(*args)) for slot in slots]
        for slot, ref in calls:
            try:
                yield slot, self._ray.get(ref)
            except self._ray.exceptions.RayTaskError as exc:
                raise ExecutorError(f"on {_where(slot.hello)}: {_cause(exc)}") from None
            except self._ray.exceptions.RayError:
                self._lose(slot)


def _same_isolation(slots: Sequence[_Slot]) -> Isolation:
    """The isolation every slot has; ExecutorError when nodes differ, since verdicts and
    cache keys would then depend on the node a run lands on."""
    labels = {s.hello.isolation.label for s in slots}
    if len(labels) != 1:
        per_node = {_where(s.hello): s.hello.isolation.label for s in slots}
        listed = "; ".join(f"{node}: {label}" for node, label in per_node.items())
        raise ExecutorError(
            f"the nodes of the Ray cluster confine candidates differently ({listed}): "
            "give every node the same sandbox, or pass --isolation with a level all of them have"
        )
    return slots[0].hello.isolation


def _where(hello: SlotHello) -> str:
    return f"node {hello.host} ({hello.node_id[:8]})"


def _actor_death(exc: BaseException) -> str:
    """The sentence of Ray's actor-death message that says why ("The actor is dead
    because ..."), else its first line."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    because = [ln for ln in lines if "because" in ln]
    return (because or lines or [type(exc).__name__])[0]


def _cause(exc: BaseException) -> str:
    """The message of the exception an actor raised, without Ray's traceback around it."""
    cause = getattr(exc, "cause", None)
    if cause is not None:
        return " ".join(str(cause).split()) or type(cause).__name__
    lines = [ln for ln in str(exc).strip().splitlines() if ln.strip()]
    return lines[-1] if lines else type(exc).__name__
