"""An app started by `convtui serve` ends with the server, and within the memory the server
allows it.

Its keys come through the server, so an app whose server died has no one to answer; left
running, it would go on playing the turn in flight and write the session that the person,
once the server is back, opens again in a new app. Linux's parent-death signal ends it; every
finished turn is already stored.

Each app is one annotator's, on a host they share: what one of them sends must not take the
memory of the others. The kernel holds each app to the server's limit (RLIMIT_DATA: its heap
and every private writable mapping, which is what text, events and screens grow). An app that
comes near it ends itself with EXIT_OUT_OF_MEMORY, whose meaning the server logs in a line
and tells the page (tui/web/apps.py), rather than go on with allocations failing anywhere."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from types import TracebackType
from typing import NoReturn

SERVER_PID = "CONVTUI_SERVE_PID"
APP_MEMORY_MB = "CONVTUI_APP_MEMORY_MB"
# Measured here, an app played through three turns peaked at 139 MiB of data (VmData, what
# the limit counts; 97 MiB resident) with a `mock:` or served model, and at 777 MiB (431 MiB
# resident) with the embedded model (`local:smollm2`, loaded in each app with its 8k-token
# cache). 2 GiB is well above either; a flood that reaches it is one annotator's own loss.
DEFAULT_APP_MEMORY_MB = 2048
# The exit status of an app that reached its memory limit (tui/web/apps.py tells its page).
EXIT_OUT_OF_MEMORY = 86
# An app ends itself once its data comes within this share of the limit (at least
# _HEADROOM_MIN): past the limit, allocations fail wherever they are, and one that fails while
# Python handles another failure aborts the interpreter, a dump of every thread in the log.
_HEADROOM = 1 / 8
_HEADROOM_MIN = 16 * 1024 * 1024
# How often an app reads its own size: a flood of keys grows one by about 50 MB a second,
# which this catches well inside the headroom, at 5 wake-ups a second.
WATCH_EVERY_S = 0.2
_PR_SET_PDEATHSIG = 1


def mark_server() -> None:
    """In the server: the apps it starts learn whose death ends them."""
    os.environ[SERVER_PID] = str(os.getpid())


def limit_apps_memory(megabytes: int) -> None:
    """In the server, before any app starts: each app is held to ``megabytes`` MiB of data
    (0: no limit)."""
    if megabytes < 0:
        raise ValueError(f"an app's memory limit is a number of MiB, not {megabytes}")
    os.environ[APP_MEMORY_MB] = str(megabytes)


def end_with_server() -> None:
    """In an app the server started: SIGTERM when the server dies, or now if it has."""
    server = os.environ.get(SERVER_PID)
    if server is None or not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if str(os.getppid()) != server:  # it died before the signal was asked for
        os.kill(os.getpid(), signal.SIGTERM)


def hold_to_memory_limit() -> int | None:
    """In an app the server started: the kernel refuses it memory past the server's limit,
    the app ends itself once it comes within the headroom of it (read every WATCH_EVERY_S),
    and a MemoryError that reaches the top of any thread ends it too (``out_of_memory``).
    The limit set, in MiB; None when there is none.

    Only the soft limit is set: the app's executor starts its sandboxes from it, and each
    raises it back (core/execution/sandbox/zygote.py) to give a candidate the limits its own
    request names, as in a terminal."""
    text = os.environ.get(APP_MEMORY_MB, "")
    megabytes = int(text) if text.isdigit() else 0
    if megabytes == 0 or os.environ.get(SERVER_PID) is None:
        return None
    import resource  # POSIX only, as is serving

    _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    wanted = megabytes * 1024 * 1024
    if hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (wanted, hard))
    _end_on_memory_error()
    headroom = max(int(wanted * _HEADROOM), _HEADROOM_MIN)
    watch = threading.Thread(
        target=_watch_size, args=(wanted - headroom,), name="convtui-memory", daemon=True
    )
    watch.start()
    return megabytes


def data_bytes() -> int:
    """This process's data and stack (its private writable mappings: what RLIMIT_DATA
    counts, with the main thread's stack, a few hundred KiB)."""
    with open("/proc/self/statm", "rb") as statm:
        return int(statm.read().split()[5]) * os.sysconf("SC_PAGE_SIZE")


def _watch_size(most: int) -> None:
    """End the app once its data passes ``most`` bytes, before the kernel refuses any."""
    while data_bytes() < most:
        time.sleep(WATCH_EVERY_S)
    out_of_memory()


def out_of_memory() -> NoReturn:
    """End this app now with the status EXIT_OUT_OF_MEMORY, which the server logs in a line
    and tells the page. Nothing is tidied: what was recorded is in the store already, each
    write a transaction of its own, and tidying would need the memory there is none of."""
    os._exit(EXIT_OUT_OF_MEMORY)


def _end_on_memory_error() -> None:
    """A MemoryError that no one handles ends the app, in the main thread or another (the
    event loop's and the input thread's are caught by Textual: tui/app.py and driver.py end
    the app there). One a worker handles is a failed step the person is shown, as any other:
    the memory it asked for was not given."""
    previous = sys.excepthook
    previous_thread = threading.excepthook

    def hook(kind: type[BaseException], error: BaseException, tb: TracebackType | None) -> None:
        if isinstance(error, MemoryError):
            out_of_memory()
        previous(kind, error, tb)

    def thread_hook(args: threading.ExceptHookArgs) -> None:
        if isinstance(args.exc_value, MemoryError):
            out_of_memory()
        previous_thread(args)

    sys.excepthook = hook
    threading.excepthook = thread_hook
