"""What the turn loops, ``check`` and ``doctor`` ask of an executor, whichever runs the
candidates: the local pool of zygotes (executor.Executor) or the same pool on every node of
a Ray cluster (cluster.pool.RayExecutor). Both decide verdicts and cache keys through
executor_batch, so they are the same for the same request."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, Self

from convtui.core.execution.isolation import Isolation
from convtui.core.execution.types import ExecRequest, ExecResult


class ExecutionBackend(Protocol):
    """Runs candidates in sandboxes; thread-safe; closes as a context manager."""

    @property
    def isolation(self) -> Isolation:
        """The isolation in force for every run (recorded with each, part of the key)."""

    @property
    def jobs(self) -> int:
        """How many runs go at once."""

    def run(self, request: ExecRequest) -> ExecResult:
        """Run one candidate; never raises for anything the candidate does."""

    def run_many(
        self,
        requests: Sequence[ExecRequest],
        on_result: Callable[[int, ExecResult], None] | None = None,
        expected_s: Mapping[int, float] | None = None,
    ) -> list[ExecResult]:
        """Run many candidates, longest first (see BatchRunner.run_many)."""

    def cache_key(self, request: ExecRequest) -> str:
        """Key of the result cache (executor_batch.execution_key)."""

    def environment_info(self) -> dict:
        """Interpreter, preloaded libraries and isolation; a cluster adds ``nodes``."""

    def warm_up(self, profiles: Sequence[str] = ("light", "full")) -> None:
        """Start the sandboxes of ``profiles`` now rather than at their first run."""

    def close(self) -> None:
        """Stop every sandbox (and, for a cluster, its actors)."""

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc: object) -> None: ...
