"""Shared test set-up: a test that takes an ``isolation_level`` argument runs once per
isolation level, skipped (with the reason) where this machine cannot provide it; the
session-scoped fixtures (one executor, the catalogs); a live process other than this one.
Helpers live in tests/support/."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from support.data import BIGCODEBENCH, DATA, data_file

if TYPE_CHECKING:
    from convtui.core.catalog.loaders import TaskCatalog
    from convtui.core.catalog.tasks import Task
    from convtui.core.execution.executor import Executor

ISOLATION_LEVELS = ("bwrap", "namespaces", "landlock", "none")

# Python's bytecode cache stays on for the suite's processes (the xdist workers, which start
# after this file is read, and every convtui child a test runs): an environment that sets
# PYTHONDONTWRITEBYTECODE, as this development machine's does, had each of them compile the
# project's modules anew (collection alone: 9 s a worker instead of 4).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


# llama.cpp's OpenMP threads wait passively in every test process and every process a test
# starts (the llama.cpp servers too), whichever first imports llama_cpp: the product sets it
# before its own import (core/models/llama_runtime.py), and spinning threads, with the other
# workers busy, took several times the CPU the real-model tests need.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")


@functools.cache
def isolation_unavailable(level: str) -> str | None:
    """Why ``level`` cannot be had here, or None when it can."""
    from convtui.core.execution.isolation import IsolationUnavailable, detect

    try:
        got = detect(level)
    except IsolationUnavailable as exc:
        return str(exc)
    if got.level != level:
        return f"detect({level!r}) gives {got.level!r}"
    return None


def pytest_collection_finish(session: pytest.Session) -> None:
    """The collector's settings of the app's process (tui/heap.py) in each test process, once
    every test module is imported: the Pilot tests draw the app's frames here, over far more
    imported objects than the app holds, and spent 13 to 17 % less CPU so."""
    from convtui.tui.heap import settle_heap

    settle_heap()


# optionalhook: xdist's hooks, which a run without xdist (-p no:xdist) does not know.
@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: two workers more than the cores (``--maxprocesses`` caps it). On 2 cores
    much of the suite's time is spent waiting on browsers, model servers and sandbox
    children, not computing: three workers kept 1.46 of the 2 cores busy (499 s), four 1.51
    (444 s, 2026-12-08)."""
    return (os.cpu_count() or 1) + 2


# Test files that share a session fixture too costly to build twice: each xdist worker builds
# its own, so these run in one worker (llama.cpp's server on the embedded model and the
# benchmark run on it, tests/benchmarks/conftest.py: 15 to 30 s each time).
SAME_WORKER = {
    "tests/benchmarks/test_live.py": "the llama.cpp server run",
    "tests/benchmarks/test_live_replicas.py": "the llama.cpp server run",
}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile``, each test file whole in one worker, with SAME_WORKER's files
    together."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SharedFixtureScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return SAME_WORKER.get(scope, scope)

    return SharedFixtureScheduling(config, log)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "isolation_level" in metafunc.fixturenames:
        params = []
        for level in ISOLATION_LEVELS:
            why = isolation_unavailable(level)
            marks = [pytest.mark.skip(reason=f"{level} unavailable: {why}")] if why else []
            params.append(pytest.param(level, id=level, marks=marks))
        metafunc.parametrize("isolation_level", params)


# --- session-scoped fixtures: expensive to build, never changed by a test ----------------------


@pytest.fixture(scope="session")
def _session_executor() -> Iterator[Executor]:
    from convtui.core.execution.executor import Executor

    with Executor(jobs=2) as shared:
        yield shared


@pytest.fixture(scope="module")
def executor(_session_executor: Executor) -> Iterator[Executor]:
    """One sandboxed executor for the whole session. Its zygotes start on first use and stop
    when the module that used them is done (the next module starts them again), so no test
    finds another module's sandboxes running (tests/core/test_hostile.py counts them)."""
    yield _session_executor
    _session_executor.close()


@pytest.fixture(scope="session")
def bigcodebench() -> TaskCatalog:
    """BigCodeBench's catalog (skips where the data is missing)."""
    from convtui.core.catalog.loaders import load_catalog

    data_file(BIGCODEBENCH.name)
    return load_catalog("bigcodebench", DATA)


@pytest.fixture(scope="session")
def catalog() -> TaskCatalog:
    """Every suite's catalog (skips where the data is missing)."""
    from convtui.core.catalog.loaders import load_catalog

    data_file(BIGCODEBENCH.name)
    return load_catalog("all", DATA)


@pytest.fixture(scope="session")
def ccw_tasks(bigcodebench: TaskCatalog) -> dict[str, Task]:
    """The BigCodeBench tasks the ConvCodeWorld turn tests play (support/ccw_turns.py), by id."""
    from support.ccw_turns import TASK_IDS

    return {task_id: bigcodebench[task_id] for task_id in TASK_IDS}


@pytest.fixture(scope="session")
def codeif() -> TaskCatalog:
    """CodeIF-Bench's 50 function tasks (skips where the data is missing); the repository
    levels need their projects (tests/core/test_repo_rows.py, tests/projects/)."""
    from convtui.core.catalog.loaders import load_catalog

    return load_catalog("codeif", data_file("CodeIF-Bench-L1-function.jsonl"))


# --- other fixtures ----------------------------------------------------------------------------


@pytest.fixture
def other_process() -> Iterator[subprocess.Popen]:
    """A live process that is not this one, killed after the test: what a run's lease names
    when another process drives the run."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield child
    child.kill()
    child.wait()


@pytest.fixture
def offline_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``datasets`` kept off the network and out of the home folder; yields its cache."""
    cache = tmp_path / "hf"
    for name, value in {
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(cache),
        "HF_DATASETS_CACHE": str(cache / "datasets"),
    }.items():
        monkeypatch.setenv(name, value)
    yield cache / "datasets"
