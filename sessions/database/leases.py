"""Who may drive a run: a lease (holder pid, host, expiry) on the ``runs`` row.

A lease expires on its own, so a holder on another machine that died is replaced after the
lease runs out. On the same host a holder that died (SIGKILL, power loss of a container) is
replaced at once: "the same command after a kill continues" should not wait for an expiry.
"""

from __future__ import annotations

import os
import socket

from convtui.sessions.database.ids import utc_now


def this_host() -> str:
    return socket.gethostname()


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists on this host (a reused pid counts as alive,
    which only delays a takeover until the lease expires)."""
    if os.name != "posix":
        # os.kill(pid, 0) would not probe on Windows; trust the expiry instead.
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def held_by_other(
    holder_pid: int | None,
    holder_host: str | None,
    lease_until_utc: str | None,
    pid: int,
    host: str,
) -> bool:
    """Whether a live process other than (``pid``, ``host``) holds the lease now."""
    if holder_pid is None or lease_until_utc is None:
        return False
    if holder_pid == pid and holder_host == host:
        return False
    if lease_until_utc <= utc_now():
        return False
    if holder_host == host:
        return pid_alive(holder_pid)
    return True
