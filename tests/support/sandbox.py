"""Helpers of the executor and sandbox tests: executors kept per isolation level, and a
script run in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping

from convtui.core.execution.executor import Executor
from support.data import ROOT


class ExecutorPool:
    """One executor per isolation level, started on first use (a zygote takes a while to
    start and preload) and kept until ``close``."""

    def __init__(
        self, *, jobs: int, preload: tuple[str, ...], default_level: str | None = None
    ) -> None:
        self.jobs = jobs
        self.preload = preload
        self.default_level = default_level
        self.executors: dict[str, Executor] = {}

    def __call__(self, level: str | None = None) -> Executor:
        """The executor of ``level``, by default of the pool's ``default_level``."""
        level = level or self.default_level
        assert level is not None, "this pool has no default isolation level"
        if level not in self.executors:
            self.executors[level] = Executor(jobs=self.jobs, isolation=level, preload=self.preload)
        return self.executors[level]

    def close(self) -> None:
        for executor in self.executors.values():
            executor.close()


def python_script(
    script: str, env: Mapping[str, str], stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -c script`` from the repository root in ``env``, its output captured as text;
    a failing script fails the test."""
    return subprocess.run(
        [sys.executable, "-c", script],
        input=stdin,
        capture_output=True,
        text=True,
        env=dict(env),
        cwd=ROOT,
        timeout=60,
        check=True,
    )
