"""The zygote: a clean interpreter that pre-imports the task libraries once and forks one
child per run, supervising it to the end.

Started by the harness with an allow-listed environment (never forked from it), optionally
inside bubblewrap, or told to make its own namespaces (``--namespaces``, followed by the
paths under /tmp to keep visible; see namespaces.py). Speaks JSON lines: requests on stdin,
one result per request on stdout. It is a child subreaper, so whatever a run starts, even
after ``setsid``, ends up as its child and is killed before the result is written.

Usage: python -I zygote.py BASE_DIR PRELOAD[,PRELOAD...] [--namespaces [KEEP...]]
"""

from __future__ import annotations

import ctypes
import gc
import importlib
import json
import os
import resource
import select
import shutil
import signal
import sys
import tempfile
import time
from typing import BinaryIO

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import contextlib

import landlock
import namespaces
import runner

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_READ = 65536


class _Capped:
    """Keeps the first and last ``cap`` bytes of a stream and counts the rest."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.cap - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > self.cap:
                del self.tail[: len(self.tail) - self.cap]

    def text(self) -> str:
        head = self.head.decode("utf-8", "replace")
        if not self.tail:
            return head
        skipped = self.total - len(self.head) - len(self.tail)
        gap = f"\n[... {skipped} bytes of output skipped ...]\n" if skipped else ""
        return head + gap + self.tail.decode("utf-8", "replace")


def _children(me: int) -> list[int]:
    # The kernel's own list, when it keeps one: a scan of /proc costs a millisecond or more a
    # run on a busy machine. The zygote is single-threaded, so its one task holds them all.
    try:
        with open(f"/proc/{me}/task/{me}/children", "rb") as fh:
            return [int(pid) for pid in fh.read().split()]
    except OSError:
        pass
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: split after the last ')'.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == me:
            found.append(int(entry))
    return found


def _kill_everything(child: int, spare: int = 0) -> int | None:
    """Kill the run's process group, then every process that reparented to us except
    ``spare`` (the annex); reap them all.

    Returns the raw wait status of ``child`` when it is reaped here.
    """
    status = None
    with contextlib.suppress(OSError):
        os.killpg(child, signal.SIGKILL)
    me = os.getpid()
    while True:
        victims = [pid for pid in _children(me) if pid != spare]
        if not victims:
            return status
        for pid in victims:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        # Reap every victim that is already dead before scanning /proc again: one scan per
        # reaped child made the clean-up quadratic (a 600-process fork took 4 s to clear).
        for pid in victims:
            try:
                reaped, raw = os.waitpid(pid, os.WNOHANG if pid != victims[0] else 0)
            except ChildProcessError:
                continue
            if reaped == child:
                status = raw


def _wipe(base: str, keep: set[str]) -> None:
    for name in os.listdir(base):
        if name in keep:
            continue
        path = os.path.join(base, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True, onerror=None)
            if os.path.exists(path):  # read-only dirs the run made: open them up and retry
                for root, dirs, _ in os.walk(path):
                    for d in dirs:
                        os.chmod(os.path.join(root, d), 0o700)
                os.chmod(path, 0o700)
                shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(path)


def _supervise(request: dict, base: str, keep: set[str], spare: int = 0) -> dict:
    limits = request["limits"]
    # No "-" in the name: tasks split paths on "-" (BigCodeBench/1127 under landlock/none).
    rundir = tempfile.mkdtemp(prefix="run_", dir=base)
    out_r, out_w = os.pipe()
    res_r, res_w = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(out_r)
        os.close(res_r)
        runner.child_main(request, rundir, out_w, res_w)
    os.close(out_w)
    os.close(res_w)
    output = _Capped(int(limits["output_bytes"]) // 2)
    results = bytearray()
    deadline = started + float(limits["wall_s"])
    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    for fd in (out_r, res_r, pidfd):
        poller.register(fd, select.POLLIN)
    open_fds = {out_r, res_r}
    timed_out = exited = False
    while not exited:
        wait = deadline - time.monotonic()
        if wait <= 0:
            timed_out = True
            break
        for fd, _ in poller.poll(wait * 1000):
            if fd == pidfd:
                exited = True
            elif fd in open_fds and not _drain(fd, output, results, res_r, poller, open_fds):
                pass
    status = _kill_everything(pid, spare)
    duration = time.monotonic() - started
    for fd in list(open_fds):  # every writer is dead now, so these reads end at EOF
        while _drain(fd, output, results, res_r, poller, open_fds):
            pass
    os.close(pidfd)
    _wipe(base, keep)
    exit_code = sig = None
    if status is not None:
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
        else:
            exit_code = os.WEXITSTATUS(status)
    return {
        "id": request["id"],
        "records": [line for line in results.decode("utf-8", "replace").splitlines() if line],
        "exit_code": exit_code,
        "signal": sig,
        "timed_out": timed_out,
        "duration_s": round(duration, 4),
        "output": output.text(),
        "output_bytes": output.total,
    }


def _drain(fd, output, results, res_r, poller, open_fds) -> bool:
    """Read once from ``fd``; False (and forget the fd) at EOF."""
    data = os.read(fd, _READ)
    if not data:
        poller.unregister(fd)
        os.close(fd)
        open_fds.discard(fd)
        return False
    if fd == res_r:
        results += data
    else:
        output.add(data)
    return True


def _preload(names: list[str]) -> list[str]:
    """Import ``names`` (those that import) and freeze everything imported so far.

    The collector is off while they import: a library's import makes thousands of objects
    that live as long as the process, and the collections they set off (scanning them again
    and again) were a sixth of the time pandas and matplotlib take to import, a fifth of
    seaborn's and scikit-learn's. Frozen, the collector in a run never writes to those
    objects, so their pages are not copied into each child."""
    gc.disable()
    loaded = []
    try:
        for name in names:
            try:
                importlib.import_module(name)
            except Exception:
                continue
            loaded.append(name)
        if "matplotlib.pyplot" in loaded:
            import matplotlib.pyplot as plt

            plt.close("all")
    finally:
        gc.freeze()
        gc.enable()
    return loaded


def _use_font_cache(base: str) -> None:
    """Give matplotlib a config dir of the zygote's own, seeded with the font list the
    harness built once (``CONVTUI_FONT_CACHE``): without it every zygote rebuilds the list,
    about a second of start-up, because its home and the root are read-only."""
    source = os.environ.get("CONVTUI_FONT_CACHE")
    if not source:
        return
    config = os.path.join(base, ".matplotlib")
    os.makedirs(config, exist_ok=True)
    with contextlib.suppress(OSError):
        for name in os.listdir(source):
            if name.startswith("fontlist-") and name.endswith(".json"):
                shutil.copyfile(os.path.join(source, name), os.path.join(config, name))
    os.environ["MPLCONFIGDIR"] = config


def _font_cache_state(base: str) -> str:
    """``hit`` when matplotlib found its font list in the seeded cache, ``miss`` when it had
    to build one (none seeded, or one for another matplotlib version), ``none`` when
    matplotlib is not loaded."""
    manager = sys.modules.get("matplotlib.font_manager")
    if manager is None or not os.environ.get("CONVTUI_FONT_CACHE"):
        return "none"
    wanted = f"fontlist-v{manager.FontManager.__version__}.json"
    seeded = os.path.join(os.environ["CONVTUI_FONT_CACHE"], wanted)
    return "hit" if os.path.isfile(seeded) else "miss"


class _Annex:
    """A fork of this zygote that imports the heavy libraries some tasks name (scikit-learn,
    SciPy, ...) and runs those tasks, so that this zygote stays small.

    Forking costs time in proportion to the memory the parent has written: about 6 ms for a
    zygote holding pandas and matplotlib, 21 ms once scikit-learn, SciPy and seaborn joined
    it. Kept apart, only the tasks that use them pay for them; their imports still happen
    once per slot. Runs here and there never overlap: the harness sends one request at a
    time and this zygote waits for the annex's reply."""

    def __init__(self) -> None:
        self.pid = 0
        self._to = -1
        self._from: BinaryIO | None = None

    def run(self, line: bytes, base: str, proto_out: int) -> None:
        """Hand ``line`` to the annex (started on first use) and pass its reply on."""
        if not self.pid:
            self._start(base, proto_out)
        _write_all(self._to, line if line.endswith(b"\n") else line + b"\n")
        assert self._from is not None
        reply = self._from.readline()
        if not reply:
            # A run killed the annex: the harness sees this zygote go too and reports a crash.
            os._exit(71)
        _write_all(proto_out, reply)

    def _start(self, base: str, proto_out: int) -> None:
        down_r, down_w = os.pipe()
        up_r, up_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(down_w)
            os.close(up_r)
            os.close(proto_out)
            libc = ctypes.CDLL(None)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if os.getppid() == 1:  # the zygote died before the line above
                os._exit(0)
            libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
            try:
                _serve(os.fdopen(down_r, "rb"), up_w, base, None)
            finally:
                os._exit(0)
        os.close(down_r)
        os.close(up_w)
        self.pid, self._to, self._from = pid, down_w, os.fdopen(up_r, "rb")


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]


def _serve(proto_in: BinaryIO, proto_out: int, base: str, annex: _Annex | None) -> None:
    """Answer requests until the harness closes the pipe. A request naming heavy libraries
    this process lacks goes to ``annex`` when there is one, else they are imported here,
    once, before the fork, rather than at start-up (a zygote that never meets them never
    pays) or in every child."""
    keep = set(os.listdir(base))
    for line in proto_in:
        request = json.loads(line)
        wanted = [name for name in request.get("preload") or () if name not in sys.modules]
        if wanted and annex is not None:
            annex.run(line, base, proto_out)
            keep |= set(os.listdir(base))
            continue
        if wanted:
            _preload(wanted)
            keep |= set(os.listdir(base))
        reply = _supervise(request, base, keep, annex.pid if annex is not None else 0)
        _write_all(proto_out, (json.dumps(reply) + "\n").encode())


def main() -> None:
    base, preload = sys.argv[1], [p for p in sys.argv[2].split(",") if p]
    _lift_soft_data_limit()
    if sys.argv[3:4] == ["--namespaces"]:
        # First of all: the kernel gives a new user namespace only to a single-threaded
        # process, and nothing may be preloaded before /tmp is private.
        namespaces.enter(sys.argv[4:])
    libc = ctypes.CDLL(None)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    _use_font_cache(base)
    loaded = _preload(preload)
    hello = {
        "ready": True,
        "preloaded": loaded,
        "python": sys.version.split()[0],
        "landlock_abi": landlock.abi_version(),
        "pid": os.getpid(),
        "fontcache": _font_cache_state(base),
    }
    _write_all(proto_out, (json.dumps(hello) + "\n").encode())
    _serve(proto_in, proto_out, base, _Annex())


def _lift_soft_data_limit() -> None:
    """The process that started this zygote may hold itself to less memory than a run may use
    (`convtui serve` holds each app to a soft data limit, which its children inherit): a run
    gets the limits its own request names (runner._confine) and no others, as anywhere else,
    so the zygote starts from the hard limit."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    resource.setrlimit(resource.RLIMIT_DATA, (hard, hard))


if __name__ == "__main__":
    main()
