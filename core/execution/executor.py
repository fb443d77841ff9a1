"""The executor: runs candidate code against a task's tests, never in this process.

A pool of zygotes (see sandbox/zygote.py), one per job slot, each started with an
allow-listed environment and, where available, inside bubblewrap. A run is one JSON request
to a free zygote, which forks a confined child, supervises it and reports back; the verdict
is decided here (verdict.py) from the harness's own list of expected tests."""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import queue
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from convtui.core.execution.backend import ExecutionBackend
from convtui.core.execution.batch import Batch, Lane, Shard, execution_key
from convtui.core.execution.isolation import detect, zygote_env
from convtui.core.execution.placement import IMPORT_S, Placement
from convtui.core.execution.testplan import TestPlan
from convtui.core.execution.types import ExecRequest
from convtui.core.execution.verdict import RawRun
from convtui.core.execution.zygotes import ExecutorError, Zygote, ZygoteGone

# Imported once in each full zygote, at its start, so runs do not pay for them. Libraries
# missing from the task environment are skipped.
DEFAULT_PRELOAD: tuple[str, ...] = (
    "numpy",
    "pandas",
    "matplotlib",
    "matplotlib.pyplot",
    "json",
    "re",
    "random",
    "collections",
    "itertools",
    "datetime",
    "csv",
    "unittest",
    "unittest.mock",
    "subprocess",
    "shutil",
    "tempfile",
    "io",
    "hashlib",
    "statistics",
    "string",
    "math",
    "os",
    "glob",
)
# The zygote for tasks that need nothing beyond the standard library (and Faker, which their
# tests use): forking a small interpreter costs a fraction of forking one holding pandas.
LIGHT_PRELOAD: tuple[str, ...] = (
    "json", "re", "random", "collections", "itertools", "datetime", "csv", "unittest",
    "unittest.mock", "subprocess", "shutil", "tempfile", "io", "hashlib", "statistics",
    "string", "math", "os", "glob", "socket", "urllib.request", "urllib.parse", "http.client",
    "http.server", "email.mime.text", "logging", "threading", "pathlib", "zipfile", "gzip",
    "tarfile", "pickle", "inspect", "doctest", "sqlite3", "ctypes", "struct", "binascii",
    "base64", "decimal", "uuid", "difflib", "textwrap", "heapq", "bisect", "operator",
    "functools", "typing", "platform", "queue", "smtplib", "ftplib", "ssl", "ipaddress",
    "configparser", "fnmatch", "codecs", "zlib", "secrets", "calendar", "faker",
)  # fmt: skip
_LIGHT_OK = frozenset(sys.stdlib_module_names) | {"faker"}
# A project's zygote: pytest, imported once, before the fork (each run then pays only for
# collecting and running its tests).
PROJECT_PRELOAD: tuple[str, ...] = ("pytest", "unittest", "unittest.mock", "json", "re")
# Libraries whose modules a full zygote imports the first time a task's own code names them,
# before forking that task's run (sandbox/zygote.py): seconds of start-up that a zygote which
# never meets them does not pay, and that no run pays twice. Only libraries that start no
# threads on import: a fork copies one thread, so a library with a thread pool would hang.
ON_DEMAND_ROOTS = frozenset(
    {"numpy", "pandas", "matplotlib", "scipy", "sklearn", "seaborn", "statsmodels"}
)
# Of those, the ones a full zygote does not hold from its start: a slot imports them (in its
# annex) when a task first needs them, which is what placement.py economises.
_HEAVY_ROOTS = ON_DEMAND_ROOTS - {"numpy", "pandas", "matplotlib"}
_REPLY_GRACE_S = 30.0
# A zygote's start-up on this project's 2-core machine, for ordering a batch only.
_START_S = {"light": 0.2, "full": 0.7}
_PR_SET_DUMPABLE = 4


class Executor(ExecutionBackend):
    """Runs candidates in parallel sandboxes. Thread-safe; use as a context manager.

    ``python`` is the interpreter of the task environment (default: $CONVTUI_EXEC_PYTHON, else
    this interpreter); ``jobs`` the number of runs at once (default: the number of cores).
    """

    def __init__(
        self,
        python: str | None = None,
        jobs: int | None = None,
        isolation: str = "auto",
        preload: Sequence[str] = DEFAULT_PRELOAD,
        light_preload: Sequence[str] = LIGHT_PRELOAD,
    ) -> None:
        self.python = python or os.environ.get("CONVTUI_EXEC_PYTHON") or _this_python()
        if shutil.which(self.python) is None and not Path(self.python).is_file():
            raise ExecutorError(
                f"task interpreter not found: {self.python} (set --python or CONVTUI_EXEC_PYTHON)"
            )
        self.jobs = max(1, jobs or os.cpu_count() or 1)
        self.isolation = detect(isolation)
        _make_undumpable()
        # One slot per job; each slot starts, lazily, a light and a full zygote.
        self._slots = [
            {
                "light": Zygote(self.isolation, self.python, light_preload),
                "full": Zygote(self.isolation, self.python, preload),
            }
            for _ in range(self.jobs)
        ]
        self._free: queue.LifoQueue[dict[str, Zygote]] = queue.LifoQueue()
        for slot in self._slots:
            self._free.put(slot)
        self._all = [z for slot in self._slots for z in slot.values()]
        self._lock = threading.Lock()
        self._fingerprint: str | None = None

    def close(self) -> None:
        for zygote in self._all:
            zygote.stop()

    def run_part(
        self, request: ExecRequest, plan: TestPlan, only: Sequence[str] | None = None
    ) -> RawRun | None:
        """The zygote's report of one run (or of the shard of it that runs the tests
        ``only`` names); None if the sandbox died. The verdict is decided from it with
        ``plan`` (batch.decide_parts), wherever this ran."""
        slot = self._free.get()
        try:
            return self._run_in(slot, request, plan, only)
        finally:
            self._free.put(slot)

    @contextlib.contextmanager
    def _lanes(self, batch: Batch) -> Iterator[list[Lane]]:
        """A lane per slot, bound to it for the batch, taking shards by affinity
        (placement.py): the heavy libraries a batch names are imported by as few slots as it
        allows. Every slot joins before any lane takes a shard, so each sees what all the
        others hold."""
        needs = [_heavy_needs(r) for r in batch.requests]
        placement = Placement(batch.shards, needs, batch.expected_s)
        slots = [self._free.get() for _ in self._slots]
        try:
            yield [_SlotLane(self, placement, key, slot) for key, slot in enumerate(slots)]
        finally:
            for slot in slots:
                self._free.put(slot)

    def _expected_s(
        self, requests: Sequence[ExecRequest], expected_s: Mapping[int, float]
    ) -> dict[int, float]:
        """``expected_s`` with the start-up the batch's first run of each kind will pay: a
        zygote no slot has started, a heavy library no slot holds. Counted in, that run starts
        early, beside the others, rather than last with every other slot idle as it waits
        (one such run among 59 quick ones: a fifth of the stdlib subset's raising run)."""
        expected = dict(expected_s)
        running = {p for slot in self._slots for p in ("light", "full") if slot[p].alive}
        held = set().union(*(slot["full"].imported for slot in self._slots))
        for index, request in enumerate(requests):
            if request.project is not None or index not in expected:
                continue
            profile = _profile(request)
            if profile not in running:
                running.add(profile)
                expected[index] += _START_S[profile]
            new = _heavy_needs(request) - held
            held |= new
            expected[index] += IMPORT_S * len(new)
        return expected

    def _run_in(
        self,
        slot: dict[str, Zygote],
        request: ExecRequest,
        plan: TestPlan,
        only: Sequence[str] | None,
    ) -> RawRun | None:
        payload = {
            "id": request.task_id,
            "code": request.code,
            "tests": {
                "kind": request.tests.kind,
                "source": request.tests.source,
                "snippets": [list(s) for s in request.tests.snippets],
            },
            "only": list(only) if only is not None else None,
            "canaries": list(plan.canaries),
            "canary_source": plan.canary_source,
            "canary_snippets": [list(s) for s in plan.canary_snippets],
            "exit_code": plan.exit_code,
            "limits": request.limits.as_dict(),
            "as_main": request.as_main,
            "env": {},
        }
        profile = _profile(request)
        if profile == "full":
            payload["preload"] = _on_demand(request)
        if request.project is not None:
            payload["project"] = {
                "root": request.project.root,
                "files": [list(f) for f in request.project.files],
                "pythonpath": list(request.project.pythonpath),
                "skips_pass": request.project.skips_pass,
            }
        zygote = self._zygote(slot, profile, request)
        try:
            if zygote.proc is None or zygote.proc.poll() is not None:
                zygote.start()
            # The sandbox config names the zygote's run directory, known once it started.
            payload["sandbox"] = self.isolation.sandbox_config(zygote.base)
            reply = zygote.request(payload, request.limits.wall_s + _REPLY_GRACE_S)
        except ZygoteGone:
            return None
        if zygote.alive:  # a zygote that restarted after its last run holds nothing
            zygote.imported |= _heavy_needs(request)
        return RawRun.from_reply(reply)

    def _zygote(self, slot: dict[str, Zygote], profile: str, request: ExecRequest) -> Zygote:
        """The slot's zygote for ``profile``; a project's run gets one of its own, started
        with the project's environment and able to read the project's tree."""
        if request.project is None:
            return slot[profile]
        key = f"project:{request.project.python}:{request.project.root}"
        if key not in slot:
            zygote = Zygote(
                self.isolation,
                request.project.python,
                PROJECT_PRELOAD,
                readable=[request.project.root],
            )
            slot[key] = zygote
            with self._lock:
                self._all.append(zygote)
        return slot[key]

    def warm_up(self, profiles: Sequence[str] = ("light", "full")) -> None:
        """Start the zygotes of ``profiles`` now, side by side, rather than at their first
        run. Not needed for speed: a run starts its zygote when it needs it, and a stdlib
        task never waits for the full zygote. Slots busy with a run are left alone."""
        slots: list[dict[str, Zygote]] = []
        with contextlib.suppress(queue.Empty):
            while True:
                slots.append(self._free.get_nowait())
        try:
            idle = [
                slot[profile] for slot in slots for profile in profiles if not slot[profile].alive
            ]
            with ThreadPoolExecutor(max_workers=max(1, len(idle))) as pool:
                list(pool.map(Zygote.start, idle))
        finally:
            for slot in slots:
                self._free.put(slot)

    def environment_info(self) -> dict:
        """Interpreter version, preloaded libraries and isolation of this executor."""
        slot = self._free.get()
        zygote = slot["full"]
        try:
            if zygote.proc is None or zygote.proc.poll() is not None:
                zygote.start()
            return {
                "python": zygote.hello.get("python"),
                "executable": self.python,
                "preloaded": zygote.hello.get("preloaded", []),
                "isolation": self.isolation.label,
                "fontcache": zygote.hello.get("fontcache"),
            }
        finally:
            self._free.put(slot)

    def fingerprint(self) -> str:
        """A hash of the task environment: interpreter and installed distributions."""
        with self._lock:
            if self._fingerprint is None:
                self._fingerprint = environment_fingerprint(self.python)
            return self._fingerprint

    def cache_key(self, request: ExecRequest) -> str:
        """Key of the result cache (docs/design.md#executor-contract): code, tests, limits,
        isolation, runner version and environment fingerprint."""
        return execution_key(request, self.isolation.label, self.fingerprint())


class _SlotLane:
    """A batch's lane bound to one slot: what the slot holds changes only through the shards
    this lane takes (placement.py relies on it)."""

    def __init__(
        self, executor: Executor, placement: Placement, key: int, slot: dict[str, Zygote]
    ) -> None:
        self._executor = executor
        self._placement = placement
        self._key = key
        self._slot = slot
        placement.join(key, slot["full"].imported)

    def take(self) -> Shard | None:
        return self._placement.take(self._key)

    def run(
        self, request: ExecRequest, plan: TestPlan, only: Sequence[str] | None
    ) -> RawRun | None:
        return self._executor._run_in(self._slot, request, plan, only)

    def leave(self) -> None:
        self._placement.leave(self._key)


def _on_demand(request: ExecRequest) -> list[str]:
    """What a full zygote imports before forking ``request``'s run: the task's own imports
    from libraries in ON_DEMAND_ROOTS, parents before children."""
    return sorted(n for n in request.task_imports if n.split(".")[0] in ON_DEMAND_ROOTS)


def _heavy_needs(request: ExecRequest) -> frozenset[str]:
    """The heavy libraries a slot imports for ``request`` unless it holds them already."""
    if request.project is not None or _profile(request) != "full":
        return frozenset()
    return frozenset(n.split(".")[0] for n in _on_demand(request)) & _HEAVY_ROOTS


def _profile(request: ExecRequest) -> str:
    """Which zygote serves ``request``: the light one when the task needs no heavy library."""
    return "light" if request.known_modules <= _LIGHT_OK else "full"


def _make_undumpable() -> None:
    """Keep candidates out of this process's memory and /proc/PID/environ, where API keys
    live: a non-dumpable process is off limits to processes of the same uid that lack
    CAP_SYS_PTRACE, and the runner drops every capability
    (docs/harness-notes.md#never-fork-from-the-harness)."""
    if sys.platform != "linux":
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


def _this_python() -> str:
    return sys.executable


_FINGERPRINT_SCRIPT = (
    "import sys, json, importlib.metadata as m; "
    "print(json.dumps([sys.version, sys.platform, sorted("
    "f\"{d.metadata['Name']}=={d.version}\" for d in m.distributions())]))"
)


def environment_fingerprint(python: str) -> str:
    """A hash of ``python``'s version and installed distributions, as candidates see them.
    Run from /: ``-c`` puts the working directory on sys.path, where a checkout's
    ``convtui.egg-info`` counted as installed, so the key depended on where convtui was
    started (and differed between this machine and a cluster's nodes), though zygotes never
    see that directory."""
    done = subprocess.run(
        [python, "-c", _FINGERPRINT_SCRIPT],
        capture_output=True,
        env=zygote_env(python),
        cwd="/",
        timeout=60,
        check=False,
    )
    return hashlib.sha256(done.stdout).hexdigest()[:16]
