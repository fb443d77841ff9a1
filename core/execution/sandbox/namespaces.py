"""The ``namespaces`` isolation: user, mount and network namespaces the zygote makes for itself.

Used where bubblewrap cannot set up its sandbox (typically a container that forbids mounting a
new /proc) but the kernel still lets an unprivileged process create namespaces. It gives what
verdicts depend on, as bubblewrap does: a private /tmp (and /dev/shm), a read-only view of
everything else, and a network of its own where only loopback is up. Unlike bubblewrap there
is no PID namespace; Landlock (per run, see runner.py) scopes signals instead.

Runs in the zygote, a fresh interpreter started by the harness and never forked from it, so
unsharing here touches nothing of the harness. Must run while the process has one thread:
the kernel refuses a new user namespace to a multi-threaded process.

``python namespaces.py`` is the availability probe: it sets up everything and exits 0.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import socket
import struct
import sys
from collections.abc import Sequence

_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000
_MS_NOSUID = 2
_MS_NODEV = 4
_MS_BIND = 4096
_MS_REC = 16384
_MS_PRIVATE = 1 << 18
_SYS_MOUNT_SETATTR = 442  # the same number on every architecture (generic and x86 tables)
_AT_FDCWD = -100
_AT_RECURSIVE = 0x8000
_MOUNT_ATTR_RDONLY = 0x1
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1
# The uid and gid the sandbox sees, as under bubblewrap (--uid 65534): a task sees the same
# user whichever of the two isolates it.
INNER_ID = 65534
PRIVATE_DIRS = ("/tmp", "/dev/shm")

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [
    ctypes.c_char_p,
    ctypes.c_char_p,
    ctypes.c_char_p,
    ctypes.c_ulong,
    ctypes.c_char_p,
]
_libc.syscall.restype = ctypes.c_long


def enter(keep: Sequence[str] = ()) -> None:
    """Move this process into new user, mount and network namespaces.

    Afterwards: uid/gid ``INNER_ID``; every mount read-only where the kernel allows it; a fresh
    tmpfs on /tmp and /dev/shm; the directories in ``keep`` that lie under /tmp (the task
    interpreter, this sandbox's code) bound back read-only, as ``bwrap --ro-bind`` does; the
    loopback interface up and no other. Raises ``OSError`` naming the step that failed."""
    uid, gid = os.getuid(), os.getgid()
    _check(_libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWNET), "unshare")
    _write("/proc/self/setgroups", "deny")  # gid_map may not be written while setgroups works
    _write("/proc/self/uid_map", f"{INNER_ID} {uid} 1")
    _write("/proc/self/gid_map", f"{INNER_ID} {gid} 1")
    # Nothing below may propagate back to the host's mounts.
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)
    # Opened in the new mount namespace (a bind from another namespace's mount is refused) and
    # before the tmpfs hides them.
    held = [(path, os.open(path, os.O_PATH | os.O_CLOEXEC)) for path in _under_tmp(keep)]
    readonly = _readonly("/")
    for target in PRIVATE_DIRS:
        if os.path.isdir(target):
            _mount(b"tmpfs", target, b"tmpfs", _MS_NOSUID | _MS_NODEV, b"mode=1777")
    for path, fd in held:
        os.makedirs(path, exist_ok=True)
        _mount(f"/proc/self/fd/{fd}".encode(), path, None, _MS_BIND | _MS_REC)
        os.close(fd)
        if readonly:
            _readonly(path)
    _loopback_up()
    os.chdir("/tmp")


def _under_tmp(paths: Sequence[str]) -> list[str]:
    found = {os.path.realpath(p) for p in paths if p.startswith("/tmp/")}
    return sorted(p for p in found if p.startswith("/tmp/") and os.path.isdir(p))


def _readonly(path: str) -> bool:
    """Make ``path`` and every mount beneath it read-only (False where the kernel lacks
    mount_setattr, Linux < 5.12: then Landlock alone keeps runs from writing there)."""
    attr = struct.pack("=QQQQ", _MOUNT_ATTR_RDONLY, 0, 0, 0)
    buf = ctypes.create_string_buffer(attr, len(attr))
    done = _libc.syscall(
        _SYS_MOUNT_SETATTR,
        ctypes.c_int(_AT_FDCWD),
        path.encode(),
        ctypes.c_uint(_AT_RECURSIVE),
        buf,
        ctypes.c_size_t(len(attr)),
    )
    return done == 0


def _loopback_up() -> None:
    """Bring ``lo`` up: a new network namespace starts with it down, and tasks that serve and
    connect on 127.0.0.1 need it (BigCodeBench/1038, /1040)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH22x", b"lo", 0)
        reply = fcntl.ioctl(sock.fileno(), _SIOCGIFFLAGS, request)
        flags = struct.unpack("16sH22x", reply)[1]
        fcntl.ioctl(sock.fileno(), _SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags | _IFF_UP))


def _mount(
    source: bytes | None, target: str, fstype: bytes | None, flags: int, data: bytes | None = None
) -> None:
    _check(_libc.mount(source, target.encode(), fstype, flags, data), f"mount {target}")


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="ascii") as fh:
            fh.write(text)
    except OSError as exc:
        raise OSError(exc.errno, f"writing {path} failed: {exc.strerror}") from None


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what} failed: {os.strerror(errno)}")


def _probe() -> int:
    """Set everything up, check that /tmp is private and writable and loopback is up."""
    try:
        enter()
        with open("/tmp/probe", "w", encoding="ascii") as fh:
            fh.write("ok")
        with socket.socket() as server:
            server.bind(("127.0.0.1", 0))
    except OSError as exc:
        print(exc.strerror or exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(_probe())
