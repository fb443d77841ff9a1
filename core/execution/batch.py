"""What every executor backend does the same way around its sandboxes: the cache key, how a
batch is cut into shards and played ``jobs`` at a time, and how the shards' reports become
one verdict. The local pool (executor.py) and the Ray pool (cluster/pool.py) differ only in
where a shard runs, so their verdicts, feedback and cache keys cannot drift apart."""

from __future__ import annotations

import contextlib
import hashlib
import json
import queue
import threading
from collections import Counter, deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Protocol

from convtui.core.execution.testplan import TestPlan, plan_tests
from convtui.core.execution.types import RUNNER_VERSION, ExecRequest, ExecResult, TestOutcome
from convtui.core.execution.verdict import RawRun, decide

if TYPE_CHECKING:
    from convtui.core.execution.isolation import Isolation

# Runs one shard of a request: the tests named, or all of them for None. None back when the
# sandbox died during the run.
RunPart = Callable[[ExecRequest, TestPlan, Sequence[str] | None], RawRun | None]


def execution_key(request: ExecRequest, isolation: str, fingerprint: str) -> str:
    """Key of the result cache (docs/design.md#executor-contract): code, tests, limits,
    isolation, runner version and environment fingerprint."""
    blob = json.dumps(
        {
            "code": request.code,
            "tests": asdict(request.tests),
            "task": request.task_id,
            "known": sorted(request.known_modules),
            "limits": request.limits.as_dict(),
            # Absent when False, so every key made before the field existed stays valid.
            **({"as_main": True} if request.as_main else {}),
            # A project by what it holds, not where it lies: the same tree and environment
            # give the same key on every machine.
            **(
                {
                    "project": [request.project.digest, request.project.files]
                    + ([True] if request.project.skips_pass else [])
                }
                if request.project
                else {}
            ),
            "isolation": isolation,
            "runner": RUNNER_VERSION,
            "env": fingerprint,
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def decide_parts(
    request: ExecRequest, plan: TestPlan, parts: Sequence[RawRun | None], isolation: str
) -> ExecResult:
    """The verdict of ``request`` from the reports of its shards (one when it was not split)."""
    if any(part is None for part in parts):
        return ExecResult(
            status="crash",
            isolation=isolation,
            detail="the sandbox process died during the run",
            tests=tuple(TestOutcome(n, "missing") for n in plan.expected),
        )
    raw = RawRun.merge([p for p in parts if p is not None])
    return decide(
        raw, plan, request.known_modules, isolation, request.limits.wall_s, code=request.code
    )


Shard = tuple[int, tuple[str, ...] | None]
OnResult = Callable[[int, ExecResult], None]


@dataclass(frozen=True)
class Batch:
    """A batch as planned: its requests, their test plans, the shards they are cut into
    (longest work first) and the run time each request is expected to take."""

    requests: Sequence[ExecRequest]
    plans: Sequence[TestPlan]
    shards: Sequence[Shard]
    expected_s: Mapping[int, float]


class Lane(Protocol):
    """One of a batch's ``jobs`` workers: where it takes its next shard and how it runs it."""

    def take(self) -> Shard | None:
        """The next shard for this lane; None when it has none left."""

    def run(
        self, request: ExecRequest, plan: TestPlan, only: Sequence[str] | None
    ) -> RawRun | None:
        """Run one shard (as RunPart)."""

    def leave(self) -> None:
        """This lane takes no more shards."""


class _InOrder:
    """Lanes that share one queue of shards in the batch's order, each running through
    ``run_part`` wherever the backend sends it."""

    def __init__(self, shards: Sequence[Shard], run_part: RunPart) -> None:
        self._pending = deque(shards)
        self._lock = threading.Lock()
        self.run = run_part

    def take(self) -> Shard | None:
        with self._lock:
            return self._pending.popleft() if self._pending else None

    def leave(self) -> None:
        pass


# What a lane's thread reports: a shard's run (request index, report), the error that
# stopped it, or None when the lane leaves.
_Report = tuple[int, RawRun | None] | BaseException | None


def run_lanes(
    batch: Batch, lanes: Sequence[Lane], isolation: str, on_result: OnResult | None = None
) -> list[ExecResult]:
    """Play the batch's shards on ``lanes`` (a thread each) and decide each request once all
    its shards reported; ``on_result(index, result)`` is called from the calling thread."""
    requests, plans, shards = batch.requests, batch.plans, batch.shards
    reports: queue.SimpleQueue[_Report] = queue.SimpleQueue()
    stop = threading.Event()  # a lane failed (ExecutorError): the others start nothing more

    def work(lane: Lane) -> None:
        try:
            while not stop.is_set() and (shard := lane.take()) is not None:
                index, only = shard
                reports.put((index, lane.run(requests[index], plans[index], only)))
        except BaseException as exc:
            stop.set()
            reports.put(exc)
        finally:
            lane.leave()
            reports.put(None)

    threads = [threading.Thread(target=work, args=(lane,), daemon=True) for lane in lanes]
    for thread in threads:
        thread.start()
    wanted = Counter(index for index, _ in shards)
    parts: dict[int, list[RawRun | None]] = {i: [] for i in range(len(requests))}
    results: list[ExecResult | None] = [None] * len(requests)
    received = left = 0
    try:
        while received < len(shards):
            report = reports.get()
            if isinstance(report, BaseException):
                raise report
            if report is None:
                left += 1
                if left == len(threads):
                    raise RuntimeError("a batch ended with shards that no lane took")
                continue
            received += 1
            index, raw = report
            parts[index].append(raw)
            if len(parts[index]) == wanted[index]:
                results[index] = decided = decide_parts(
                    requests[index], plans[index], parts[index], isolation
                )
                if on_result is not None:
                    on_result(index, decided)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    return [r for r in results if r is not None]


class BatchRunner:
    """What an executor builds on its own ``run_part`` (where one run or shard of it goes):
    one candidate, and a batch of them ``jobs`` at a time. Here once, so that the local
    executor and the cluster's decide verdicts the same way."""

    jobs: int
    isolation: Isolation

    def run_part(
        self, request: ExecRequest, plan: TestPlan, only: Sequence[str] | None = None
    ) -> RawRun | None:
        raise TypeError(f"{type(self).__name__} does not say where a run goes")

    def run(self, request: ExecRequest) -> ExecResult:
        """Run one candidate; never raises for anything the candidate does."""
        plan = plan_tests(request.tests)
        return decide_parts(request, plan, [self.run_part(request, plan)], self.isolation.label)

    def run_many(
        self,
        requests: Sequence[ExecRequest],
        on_result: OnResult | None = None,
        expected_s: Mapping[int, float] | None = None,
    ) -> list[ExecResult]:
        """Run many candidates, ``jobs`` at a time, in the order given (put the longest first).

        ``expected_s`` maps request indexes to their expected run time (e.g. from an earlier
        run). A request expected to take over half of one worker's share of the whole batch
        has its tests split into shards that run side by side, so one slow task does not
        leave the other workers idle at the end. ``on_result(index, result)`` is called as
        each request finishes, from the calling thread."""
        plans = [plan_tests(r.tests) for r in requests]
        expected = self._expected_s(requests, expected_s or {})
        batch = Batch(requests, plans, shard_batch(plans, expected, self.jobs), expected)
        with self._lanes(batch) as lanes:
            return run_lanes(batch, lanes, self.isolation.label, on_result)

    def _expected_s(
        self, requests: Sequence[ExecRequest], expected_s: Mapping[int, float]
    ) -> dict[int, float]:
        """The run times a batch is ordered and cut by: those known, as given."""
        return dict(expected_s)

    @contextlib.contextmanager
    def _lanes(self, batch: Batch) -> Iterator[list[Lane]]:
        """``jobs`` lanes taking the shards in order, each through ``run_part``."""
        in_order = _InOrder(batch.shards, self.run_part)
        yield [in_order] * self.jobs


def shard_batch(
    plans: Sequence[TestPlan], expected_s: Mapping[int, float], jobs: int
) -> list[Shard]:
    """(request index, tests to run or None for all), longest work first. A request expected
    to take over half of one worker's share of the whole batch is split into shards that run
    side by side, so one slow task does not leave the other workers idle at the end."""
    share = sum(expected_s.values()) / jobs
    work: list[tuple[float, int, tuple[str, ...] | None]] = []
    for index, plan in enumerate(plans):
        # Without an estimate a request may be long: it starts before the known ones.
        seconds = expected_s.get(index, float("inf"))
        # Twice as many shards as workers packs unequal tests better than one each.
        pieces = min(2 * jobs, len(plan.expected))
        if jobs > 1 and pieces > 1 and share / 2 < seconds < float("inf"):
            for k in range(pieces):
                work.append((seconds / pieces, index, plan.expected[k::pieces]))
        else:
            work.append((seconds, index, None))
    work.sort(key=lambda w: -w[0])  # stable: equal estimates keep the caller's order
    return [(index, only) for _, index, only in work]
