"""What the turn loops, ``check`` and ``doctor`` ask of an executor, whichever runs the
candidates: the local pool of zygotes (executor.Executor) or the same pool on every node of
a Ray cluster (cluster.pool.RayExecutor). Both are BatchRunners: they run one candidate or a
batch, and decide verdicts and cache keys, the same way for the same request."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Self

from convtui.core.execution.batch import BatchRunner
from convtui.core.execution.types import ExecRequest


class ExecutionBackend(BatchRunner, ABC):
    """Runs candidates in sandboxes (``run``, ``run_many``: see BatchRunner); thread-safe;
    closes as a context manager. ``isolation`` is the isolation in force for every run
    (recorded with each, part of the key); ``jobs`` how many runs go at once."""

    @abstractmethod
    def cache_key(self, request: ExecRequest) -> str:
        """Key of the result cache (batch.execution_key)."""

    @abstractmethod
    def environment_info(self) -> dict:
        """Interpreter, preloaded libraries and isolation; a cluster adds ``nodes``."""

    @abstractmethod
    def warm_up(self, profiles: Sequence[str] = ("light", "full")) -> None:
        """Start the sandboxes of ``profiles`` now rather than at their first run."""

    @abstractmethod
    def close(self) -> None:
        """Stop every sandbox (and, for a cluster, its actors)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
