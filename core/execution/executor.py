"""The executor: runs candidate code against a task's tests, never in this process.

A pool of zygotes (see sandbox/zygote.py), one per job slot, each started with an
allow-listed environment and, where available, inside bubblewrap. A run is one JSON request
to a free zygote, which forks a confined child, supervises it and reports back; the verdict
is decided here (verdict.py) from the harness's own list of expected tests."""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import os
import queue
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import IO

from convtui.core.errors import ConvtuiError
from convtui.core.execution.batch import BatchRunner, execution_key
from convtui.core.execution.fontcache import rebuild_in_background, seed_env
from convtui.core.execution.isolation import Isolation, detect, zygote_argv, zygote_env
from convtui.core.execution.testplan import TestPlan
from convtui.core.execution.types import ExecRequest
from convtui.core.execution.verdict import RawRun

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
_START_TIMEOUT_S = 120.0
_REPLY_GRACE_S = 30.0
_RESTART_AFTER_RUNS = 1000
_PR_SET_DUMPABLE = 4


class ExecutorError(ConvtuiError):
    """The execution environment could not be started."""


class _ZygoteGone(Exception):
    pass


class _Spawner:
    """Starts every zygote from one long-lived thread.

    PR_SET_PDEATHSIG (set by the zygote, and by bwrap for --die-with-parent) fires when the
    *thread* that started the process exits, not the process: a zygote started from a
    ``run_many`` worker thread was SIGKILLed as soon as that pool shut down, and a run that
    picked it up next came back as a crash. This thread lives as long as the process, so a
    zygote still dies with the harness and only with it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid = 0
        self._jobs: queue.SimpleQueue[tuple[list[str], dict, Future]] = queue.SimpleQueue()

    def popen(self, argv: list[str], **kwargs: object) -> subprocess.Popen[bytes]:
        with self._lock:
            if self._pid != os.getpid():  # first use, or this process is a fork
                self._jobs = queue.SimpleQueue()
                thread = threading.Thread(
                    target=self._serve, args=(self._jobs,), name="convtui-spawner", daemon=True
                )
                thread.start()
                self._pid = os.getpid()
            done: Future[subprocess.Popen[bytes]] = Future()
            self._jobs.put((argv, kwargs, done))
        return done.result()

    @staticmethod
    def _serve(jobs: queue.SimpleQueue[tuple[list[str], dict, Future]]) -> None:
        while True:
            argv, kwargs, done = jobs.get()
            try:
                done.set_result(subprocess.Popen(argv, **kwargs))
            except BaseException as exc:
                done.set_exception(exc)


_spawn = _Spawner().popen


class _Zygote:
    """One zygote process and its pipes; used by one thread at a time."""

    def __init__(
        self,
        isolation: Isolation,
        python: str,
        preload: Sequence[str],
        readable: Sequence[str] = (),
    ) -> None:
        self.isolation = isolation
        self.python = python
        self.preload = list(preload)
        self.readable = list(readable)  # host folders its runs read (a project's tree)
        self.proc: subprocess.Popen[bytes] | None = None
        self.runs = 0
        self.hello: dict = {}
        self._buf = bytearray()
        self._base = ""
        self._log: IO[bytes] | None = None

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def base(self) -> str:
        """Where runs make their directories: the sandbox's own /tmp under bwrap or
        namespaces."""
        return "/tmp" if self.isolation.private_tmp else self._base

    def start(self) -> None:
        if not self.isolation.private_tmp:
            self._base = tempfile.mkdtemp(prefix="convtui_runs_")  # no "-": see zygote.py
        # Kept open for the zygote's life: its last words explain a failed start.
        self._log = tempfile.TemporaryFile()  # noqa: SIM115
        seed = seed_env(self.python)
        argv = zygote_argv(
            self.isolation,
            self.python,
            self.base,
            self.preload,
            readable=[*seed.values(), *self.readable],
        )
        try:
            self.proc = _spawn(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._log,
                env={**zygote_env(self.python), **seed},
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            raise ExecutorError(f"cannot start the task interpreter {self.python}: {exc}") from exc
        self._buf.clear()
        try:
            self.hello = json.loads(self._read_line(time.monotonic() + _START_TIMEOUT_S))
        except _ZygoteGone:
            why = self._stderr_tail()
            self.stop()
            raise ExecutorError(
                f"the task interpreter {self.python} failed to start the sandbox: {why}"
            ) from None
        if self.hello.get("fontcache") == "miss":
            rebuild_in_background(self.python)
        self.runs = 0

    def _stderr_tail(self) -> str:
        if self._log is None:
            return ""
        self._log.seek(0)
        lines = self._log.read().decode("utf-8", "replace").strip().splitlines()
        return lines[-1] if lines else "no error output"

    def _read_line(self, deadline: float) -> bytes:
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            wait = deadline - time.monotonic()
            if wait <= 0:
                raise _ZygoteGone("no reply in time")
            ready, _, _ = select.select([fd], [], [], wait)
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise _ZygoteGone("the sandbox process exited")
                self._buf += chunk
        line, _, rest = bytes(self._buf).partition(b"\n")
        self._buf = bytearray(rest)
        return line

    def request(self, payload: dict, timeout: float) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(payload).encode() + b"\n")
            self.proc.stdin.flush()
            reply = json.loads(self._read_line(time.monotonic() + timeout))
        except (BrokenPipeError, _ZygoteGone):
            self.stop()
            raise _ZygoteGone from None
        self.runs += 1
        if self.runs >= _RESTART_AFTER_RUNS:
            self.stop()
        return reply

    def stop(self) -> None:
        if self.proc is not None:
            with contextlib.suppress(OSError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            for stream in (self.proc.stdin, self.proc.stdout):
                if stream is not None:
                    stream.close()
            self.proc = None
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._base:
            shutil.rmtree(self._base, ignore_errors=True)
            self._base = ""


class Executor(BatchRunner):
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
        self._free: queue.LifoQueue[dict[str, _Zygote]] = queue.LifoQueue()
        for _ in range(self.jobs):
            self._free.put(
                {
                    "light": _Zygote(self.isolation, self.python, light_preload),
                    "full": _Zygote(self.isolation, self.python, preload),
                }
            )
        self._all = [z for slot in self._free.queue for z in slot.values()]
        self._lock = threading.Lock()
        self._fingerprint: str | None = None

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for zygote in self._all:
            zygote.stop()

    def run_part(
        self, request: ExecRequest, plan: TestPlan, only: Sequence[str] | None = None
    ) -> RawRun | None:
        """The zygote's report of one run (or of the shard of it that runs the tests
        ``only`` names); None if the sandbox died. The verdict is decided from it with
        ``plan`` (executor_batch.decide_parts), wherever this ran."""
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
        slot = self._free.get()
        zygote = self._zygote(slot, profile, request)
        try:
            if zygote.proc is None or zygote.proc.poll() is not None:
                zygote.start()
            # The sandbox config names the zygote's run directory, known once it started.
            payload["sandbox"] = self.isolation.sandbox_config(zygote.base)
            return RawRun.from_reply(
                zygote.request(payload, request.limits.wall_s + _REPLY_GRACE_S)
            )
        except _ZygoteGone:
            return None
        finally:
            self._free.put(slot)

    def _zygote(self, slot: dict[str, _Zygote], profile: str, request: ExecRequest) -> _Zygote:
        """The slot's zygote for ``profile``; a project's run gets one of its own, started
        with the project's environment and able to read the project's tree."""
        if request.project is None:
            return slot[profile]
        key = f"project:{request.project.python}:{request.project.root}"
        if key not in slot:
            zygote = _Zygote(
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
        slots: list[dict[str, _Zygote]] = []
        with contextlib.suppress(queue.Empty):
            while True:
                slots.append(self._free.get_nowait())
        try:
            idle = [
                slot[profile] for slot in slots for profile in profiles if not slot[profile].alive
            ]
            with ThreadPoolExecutor(max_workers=max(1, len(idle))) as pool:
                list(pool.map(_Zygote.start, idle))
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


def _on_demand(request: ExecRequest) -> list[str]:
    """What a full zygote imports before forking ``request``'s run: the task's own imports
    from libraries in ON_DEMAND_ROOTS, parents before children."""
    return sorted(n for n in request.task_imports if n.split(".")[0] in ON_DEMAND_ROOTS)


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
