"""A zygote process seen from the harness: started once (never forked from the harness) with
an allow-listed environment, where available inside bubblewrap, then asked for one run at a
time over its pipes (sandbox/zygote.py is the other end)."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from typing import IO

from convtui.core.errors import ConvtuiError
from convtui.core.execution.fontcache import rebuild_in_background, seed_env
from convtui.core.execution.isolation import Isolation, zygote_argv, zygote_env

_START_TIMEOUT_S = 120.0
_RESTART_AFTER_RUNS = 1000


class ExecutorError(ConvtuiError):
    """The execution environment could not be started."""


class ZygoteGone(Exception):
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


class Zygote:
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
        self.imported: set[str] = set()  # heavy libraries its runs made it import
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
        except ZygoteGone:
            why = self._stderr_tail()
            self.stop()
            raise ExecutorError(
                f"the task interpreter {self.python} failed to start the sandbox: {why}"
            ) from None
        if self.hello.get("fontcache") == "miss":
            rebuild_in_background(self.python)
        self.runs = 0
        self.imported = set()

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
                raise ZygoteGone("no reply in time")
            ready, _, _ = select.select([fd], [], [], wait)
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise ZygoteGone("the sandbox process exited")
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
        except (BrokenPipeError, ZygoteGone):
            self.stop()
            raise ZygoteGone from None
        self.runs += 1
        if self.runs >= _RESTART_AFTER_RUNS:
            self.stop()
        return reply

    def stop(self) -> None:
        self.imported = set()
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
