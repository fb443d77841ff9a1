"""Landlock through raw syscalls (Linux >= 5.13), so the sandbox needs no third-party module.

Runs inside the candidate's process just before its code: every write-type filesystem right
is denied except beneath the given directories, TCP bind/connect can be denied (ABI >= 4), and
signals and abstract unix sockets are scoped to the sandbox (ABI >= 6), which also stops the
candidate from signalling or ptracing the process that supervises it.
"""

from __future__ import annotations

import ctypes
import os
import struct

_SYS_CREATE_RULESET = 444
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

_FS_WRITE_FILE = 1 << 1
_FS_REMOVE_DIR = 1 << 4
_FS_REMOVE_FILE = 1 << 5
_FS_MAKE_CHAR = 1 << 6
_FS_MAKE_DIR = 1 << 7
_FS_MAKE_REG = 1 << 8
_FS_MAKE_SOCK = 1 << 9
_FS_MAKE_FIFO = 1 << 10
_FS_MAKE_BLOCK = 1 << 11
_FS_MAKE_SYM = 1 << 12
_FS_REFER = 1 << 13  # ABI 2
_FS_TRUNCATE = 1 << 14  # ABI 3
_NET_BIND_TCP = 1 << 0  # ABI 4
_NET_CONNECT_TCP = 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
_SCOPE_SIGNAL = 1 << 1

_WRITE_V1 = (
    _FS_WRITE_FILE
    | _FS_REMOVE_DIR
    | _FS_REMOVE_FILE
    | _FS_MAKE_CHAR
    | _FS_MAKE_DIR
    | _FS_MAKE_REG
    | _FS_MAKE_SOCK
    | _FS_MAKE_FIFO
    | _FS_MAKE_BLOCK
    | _FS_MAKE_SYM
)
# Rights that make sense on a single file (a device such as /dev/null), not a directory.
_FILE_RIGHTS = _FS_WRITE_FILE | _FS_TRUNCATE

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def abi_version() -> int:
    """The kernel's Landlock ABI version, 0 when Landlock is unavailable."""
    try:
        version = _libc.syscall(
            _SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION)
        )
    except OSError:
        return 0
    return max(int(version), 0)


def _write_rights(abi: int) -> int:
    rights = _WRITE_V1
    if abi >= 2:
        rights |= _FS_REFER
    if abi >= 3:
        rights |= _FS_TRUNCATE
    return rights


def restrict(writable: list[str], *, deny_tcp: bool, scope: bool) -> str:
    """Confine this process and its future children; return a label of what is in force.

    ``writable`` may name directories (everything beneath becomes writable) or single files
    such as ``/dev/null``. Raises ``OSError`` when the kernel refuses.
    """
    abi = abi_version()
    if abi < 1:
        raise OSError("landlock is not available")
    fs = _write_rights(abi)
    net = _NET_BIND_TCP | _NET_CONNECT_TCP if deny_tcp and abi >= 4 else 0
    scoped = _SCOPE_SIGNAL | _SCOPE_ABSTRACT_UNIX_SOCKET if scope and abi >= 6 else 0
    if abi >= 6:
        attr = struct.pack("=QQQ", fs, net, scoped)
    elif abi >= 4:
        attr = struct.pack("=QQ", fs, net)
    else:
        attr = struct.pack("=Q", fs)
    buf = ctypes.create_string_buffer(attr, len(attr))
    ruleset = _libc.syscall(
        _SYS_CREATE_RULESET, buf, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0)
    )
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        for path in writable:
            _allow(int(ruleset), path, fs)
        if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(NO_NEW_PRIVS) failed")
        if _libc.syscall(_SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(int(ruleset))
    parts = [f"landlock-abi{abi}", "fs"]
    if net:
        parts.append("tcp")
    if scoped:
        parts.append("signal")
    return "+".join(parts)


def _allow(ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a path that does not exist here needs no rule
    try:
        if not os.path.isdir(path):
            rights &= _FILE_RIGHTS
        attr = struct.pack("=Qi", rights, fd)
        buf = ctypes.create_string_buffer(attr, len(attr))
        if (
            _libc.syscall(
                _SYS_ADD_RULE,
                ctypes.c_int(ruleset),
                ctypes.c_int(_RULE_PATH_BENEATH),
                buf,
                ctypes.c_uint32(0),
            )
            != 0
        ):
            raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
    finally:
        os.close(fd)
