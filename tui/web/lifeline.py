"""An app started by `convtui serve` ends with the server. Its keys come through the server,
so an app whose server died has no one to answer; left running, it would go on playing the
turn in flight and write the session that the person, once the server is back, opens again
in a new app. Linux's parent-death signal ends it; every finished turn is already stored."""

from __future__ import annotations

import ctypes
import os
import signal
import sys

SERVER_PID = "CONVTUI_SERVE_PID"
_PR_SET_PDEATHSIG = 1


def mark_server() -> None:
    """In the server: the apps it starts learn whose death ends them."""
    os.environ[SERVER_PID] = str(os.getpid())


def end_with_server() -> None:
    """In an app the server started: SIGTERM when the server dies, or now if it has."""
    server = os.environ.get(SERVER_PID)
    if server is None or not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if str(os.getppid()) != server:  # it died before the signal was asked for
        os.kill(os.getpid(), signal.SIGTERM)
