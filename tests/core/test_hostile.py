"""Hostile candidates (notes/harness.md §1.2 and §1.4.3): each probe must not pass, and its
side effect is checked on the host: no marker file, no connection accepted, no secret in the
result, no process left behind, the harness alive and its executor still working.

Every probe runs at each isolation level this machine offers (tests/conftest.py). The level
``none`` offers no filesystem, network or signal isolation: probes of those are skipped there
with that reason, the others (verdicts, clean-up, output caps, secrets) still run.

A hostile candidate here does not solve the task (``f`` returns a wrong answer) unless the
probe says otherwise: whatever the attack does, it must not turn a wrong answer into a pass."""

from __future__ import annotations

import json
import os
import random
import socket
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.processes import descendants, proc_table
from support.sandbox import ExecutorPool, python_script

from convtui.core.catalog.tasks import TestSpec as Spec
from convtui.core.execution.executor import Executor
from convtui.core.execution.types import ExecRequest, ExecResult, Limits

REPO_ROOT = Path(__file__).resolve().parents[2]
SECRET = f"s3cr3t-{uuid.uuid4().hex}"
SECRET_VAR = "CONVTUI_PROBE_SECRET"
LIMITS = Limits(per_test_s=2, wall_s=5)
SHORT = Limits(per_test_s=0.5, wall_s=4)
PRELOAD = ("unittest", "json", "socket", "subprocess")
PRIVATE_TMP = ("bwrap", "namespaces")  # levels whose sandbox has a /tmp of its own

TESTS = Spec(
    "unittest",
    source=textwrap.dedent(
        """\
        import unittest

        class TestCases(unittest.TestCase):
            def test_one(self):
                self.assertEqual(f(1), 2)

            def test_two(self):
                self.assertEqual(f(2), 3)
        """
    ),
)
ONE_TEST = Spec(
    "unittest",
    source="import unittest\n\nclass TestCases(unittest.TestCase):\n"
    "    def test_one(self):\n        self.assertEqual(f(1), 2)\n",
)
RIGHT = "def f(x):\n    return x + 1\n"
WRONG_F = "def f(x):\n    return x + 2\n"


# ---------------------------------------------------------------- the executors


@pytest.fixture(scope="module")
def pool() -> Iterator[ExecutorPool]:
    # The secret is in the harness's environment before any executor (or zygote) exists.
    saved = os.environ.get(SECRET_VAR)
    os.environ[SECRET_VAR] = SECRET
    executors = ExecutorPool(jobs=1, preload=PRELOAD)
    yield executors
    executors.close()
    if saved is None:
        os.environ.pop(SECRET_VAR, None)
    else:
        os.environ[SECRET_VAR] = saved


@pytest.fixture
def ex(pool, isolation_level) -> Iterator[Executor]:
    executor = pool(isolation_level)
    yield executor
    # After every probe: no stray process, and the executor still judges honest code.
    assert strays(pool) == []
    assert run(executor, RIGHT).status == "pass"
    assert strays(pool) == []


def run(ex: Executor, code: str, tests: Spec = TESTS, limits: Limits = LIMITS) -> ExecResult:
    return ex.run(ExecRequest(code, tests, limits=limits))


def assert_not_pass(result: ExecResult) -> None:
    assert result.status != "pass", result
    assert not result.passed


def needs_isolation(level: str) -> None:
    if level == "none":
        pytest.skip("isolation level 'none' offers no filesystem/network/signal isolation")


# ---------------------------------------------------------------- processes


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as fh:
            return fh.read().strip()
    except OSError:
        return ""


def left_by_tests(table: dict[int, int]) -> set[int]:
    """This process's descendants, less the servers a session fixture keeps up on purpose
    (and theirs)."""
    from support.llama_server import SESSION_SERVERS

    kept = set(SESSION_SERVERS)
    for pid in SESSION_SERVERS:
        kept |= descendants(pid, table)
    return descendants(os.getpid(), table) - kept


def zygote_processes(executors: list[Executor], table: dict[int, int]) -> set[int]:
    """The processes that make up the executors' zygotes: the process each started (bwrap or
    the zygote itself) and, under bwrap, the chain down to the zygote. Never its children."""
    infra = set()
    for executor in executors:
        for zygote in executor._all:
            if zygote.proc is None:
                continue
            pid = zygote.proc.pid
            infra.add(pid)
            while comm(pid) == "bwrap":  # bwrap, bwrap's init in the namespace, the zygote
                kids = [p for p, pp in table.items() if pp == pid]
                if len(kids) != 1:
                    break
                pid = kids[0]
                infra.add(pid)
    return infra


def strays(pool: ExecutorPool) -> list[str]:
    """Descendants of this test process that are not zygote infrastructure (zombies count).

    Checked right after a run returns, with no grace period: the zygote replies only once it
    has killed and reaped everything the run started."""
    table = proc_table()
    allowed = zygote_processes(list(pool.executors.values()), table)
    return [f"{p}: {cmdline(p)[:120]}" for p in sorted(left_by_tests(table) - allowed)]


def marked(marker: str) -> list[int]:
    """Processes anywhere on the machine whose command line holds ``marker``."""
    me = os.getpid()
    return [p for p in proc_table() if p != me and marker in cmdline(p)]


def sleep_marker() -> str:
    """A unique argument for ``sleep`` that a /proc scan can find."""
    return f"31337.{random.randrange(10**8):08d}"


def zygote_pid(ex: Executor) -> int | None:
    procs = [z.proc for z in ex._all if z.proc is not None and z.proc.poll() is None]
    return procs[0].pid if procs else None


# ---------------------------------------------------------------- processes and exits


@pytest.mark.slow
def test_fork_bomb(ex, pool):
    # A fork bomb capped at 2**7 processes (an unbounded one would take the shared host's
    # pid space with it): every child leaves the process group, and all of them sleep forever.
    code = textwrap.dedent(
        """\
        import os, time
        def f(x):
            n = 0
            while True:
                if n == 7:
                    break
                n += 1
                if os.fork() == 0:
                    try:
                        os.setsid()
                    except OSError:
                        pass
            time.sleep(1000)
        """
    )
    started = time.monotonic()
    result = run(ex, code, ONE_TEST, SHORT)
    assert_not_pass(result)
    assert result.status == "timeout"
    assert time.monotonic() - started < 4
    assert strays(pool) == []


def exiting(where: str, module: str, call: str, then: str) -> str:
    """Code that makes ``call`` (``module``'s) as it is imported, before defining ``then``,
    or, ``where`` "test", inside f, while the test that called f runs."""
    if where == "module":
        return f"import {module}\n{call}\n{then}"
    return f"import {module}\ndef f(x):\n    {call}\n"


@pytest.mark.parametrize("where", ["module", "test"])
def test_os_exit_is_crash(ex, where):
    result = run(ex, exiting(where, "os", "os._exit(0)", WRONG_F))
    assert_not_pass(result)
    assert result.status == "crash"
    assert result.status != "timeout"
    assert result.duration_s < 2
    if where == "test":
        assert "test_one" in result.detail  # the test that was running when it ended


@pytest.mark.parametrize("where", ["module", "test"])
def test_sys_exit_is_not_a_pass(ex, where):
    result = run(ex, exiting(where, "sys", "sys.exit(0)", RIGHT))
    assert_not_pass(result)
    assert result.status in ("error", "fail")


def test_kill_parent_with_os_kill(ex, isolation_level):
    before = zygote_pid(ex)
    code = "import os\ndef f(x):\n    os.kill(os.getppid(), 9)\n    return x + 1\n"
    result = run(ex, code)
    assert_not_pass(result)
    if isolation_level != "none":  # the signal never reached the zygote
        assert result.status == "fail"
        assert "PermissionError" in result.tests[0].traceback
        assert zygote_pid(ex) == before
    else:
        assert result.status == "crash"
    assert run(ex, RIGHT).status == "pass"  # the harness and its executor carry on


def test_kill_parent_with_posix_kill(ex, isolation_level):
    before = zygote_pid(ex)
    code = "import posix\ndef f(x):\n    posix.kill(posix.getppid(), 9)\n    return x + 1\n"
    result = run(ex, code)
    assert_not_pass(result)
    if isolation_level != "none":
        assert zygote_pid(ex) == before
    assert run(ex, RIGHT).status == "pass"  # the harness and its executor carry on


def test_kill_the_ancestors_from_a_grandchild(ex, isolation_level):
    # A forked child walks up the ppid chain from its parent and SIGKILLs every ancestor
    # (the zygote, bwrap's init): never this test process, which runs the probe.
    code = textwrap.dedent(
        f"""\
        import os
        HARNESS = {os.getpid()}
        def _ppid(pid):
            with open(f"/proc/{{pid}}/stat", "rb") as fh:
                stat = fh.read()
            return int(stat[stat.rfind(b")") + 2:].split()[1])
        def f(x):
            child = os.fork()
            if child == 0:
                pid = os.getppid()
                for _ in range(3):
                    try:
                        pid = _ppid(pid)
                    except (OSError, ValueError):
                        break
                    if pid in (0, 1, HARNESS):
                        break
                    try:
                        os.kill(pid, 9)
                    except OSError:
                        pass
                os._exit(0)
            os.waitpid(child, 0)
            return x + 2
        """
    )
    before = zygote_pid(ex)
    result = run(ex, code)
    assert_not_pass(result)
    if isolation_level != "none":
        assert result.status == "fail"
        assert zygote_pid(ex) == before
    else:
        assert result.status == "crash"
    assert run(ex, RIGHT).status == "pass"  # the harness and its executor carry on


def test_daemon_that_left_the_session_is_killed(ex):
    marker = sleep_marker()
    code = textwrap.dedent(
        f"""\
        import os, time
        def f(x):
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    os.execvp("sleep", ["sleep", "{marker}"])
                os._exit(0)
            deadline = time.time() + 2
            while time.time() < deadline:  # wait until the daemon is running
                for pid in os.listdir("/proc"):
                    try:
                        if b"{marker}" in open(f"/proc/{{pid}}/cmdline", "rb").read():
                            return x + 2
                    except OSError:
                        pass
                time.sleep(0.01)
            raise RuntimeError("the daemon did not start")
        """
    )
    result = run(ex, code)
    assert_not_pass(result)
    assert result.status == "fail", result  # the daemon did start
    assert marked(marker) == []


@pytest.mark.slow
def test_sleeping_forever_is_timeout_and_leaves_nothing(ex, pool):
    marker = sleep_marker()
    code = textwrap.dedent(
        f"""\
        import subprocess, time
        def f(x):
            subprocess.Popen(["sleep", "{marker}"])
            time.sleep(10**6)
        """
    )
    result = run(ex, code, ONE_TEST, SHORT)
    assert_not_pass(result)
    assert result.status == "timeout"
    assert result.tests[0].status == "timeout"
    assert marked(marker) == []


@pytest.mark.slow
def test_endless_output_is_bounded(ex):
    code = textwrap.dedent(
        """\
        import os, sys
        def f(x):
            while True:
                sys.stdout.write("x" * 65536)
                os.write(2, b"y" * 65536)
        """
    )
    limits = Limits(per_test_s=0.5, wall_s=4, output_bytes=8192)
    result = run(ex, code, ONE_TEST, limits)
    assert_not_pass(result)
    assert len(result.output.encode()) <= limits.output_bytes + 200
    assert result.output_bytes > 10 * limits.output_bytes


def test_huge_allocation_is_a_memory_error(ex):
    code = "def f(x):\n    block = bytearray(50 * 2**30)\n    return x + 1\n"
    result = run(ex, code)
    assert_not_pass(result)
    assert result.status == "fail"
    assert all(t.status == "error" for t in result.tests)
    assert "MemoryError" in result.tests[0].traceback


# ---------------------------------------------------------------- filesystem and network


def test_write_outside_to_tmp(ex, isolation_level):
    needs_isolation(isolation_level)
    target = Path(f"/tmp/convtui-probe-{uuid.uuid4().hex}")
    code = f"def f(x):\n    open({str(target)!r}, 'w').write('owned')\n    return x + 1\n"
    try:
        result = run(ex, code)
        assert not target.exists()
        if isolation_level in PRIVATE_TMP:
            # The sandbox has its own /tmp (wiped after each run): the write landed there,
            # and tasks that write to /tmp keep working, so this may pass.
            assert result.status in ("pass", "fail")
        else:
            assert_not_pass(result)
            assert "Permission denied" in result.tests[0].traceback
    finally:
        target.unlink(missing_ok=True)


@pytest.fixture
def outside() -> Iterator[Path]:
    """A file name beside the checkout, out of the sandbox's reach; whatever a probe managed
    to write there is removed after the test."""
    path = REPO_ROOT.parent / f"convtui-probe-{uuid.uuid4().hex}"
    yield path
    path.unlink(missing_ok=True)


def test_write_next_to_the_repo(ex, isolation_level, outside):
    needs_isolation(isolation_level)
    code = f"def f(x):\n    open({str(outside)!r}, 'w').write('owned')\n    return x + 1\n"
    result = run(ex, code)
    # Under bwrap or namespaces /tmp is the sandbox's own tmpfs: a checkout under /tmp (as
    # in CI) puts the target there, where the write succeeds and vanishes with the run.
    if not (isolation_level in PRIVATE_TMP and str(outside).startswith("/tmp/")):
        assert_not_pass(result)
    assert not outside.exists()


def test_own_namespaces_do_not_make_the_root_writable(ex, isolation_level, outside):
    # A run that makes its own user and mount namespaces holds every capability there: it
    # tries to remount the root read-write (and to mount over the target's folder) and write.
    needs_isolation(isolation_level)
    code = textwrap.dedent(
        f"""\
        import ctypes, os
        TARGET = {str(outside)!r}
        def _escape():
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.unshare(0x10000000 | 0x00020000) == 0:  # CLONE_NEWUSER | CLONE_NEWNS
                for flags in (0x20 | 0x1000, 0x20):  # MS_REMOUNT | MS_BIND, MS_REMOUNT
                    libc.mount(None, b"/", None, flags, None)
                libc.mount(b"none", os.path.dirname(TARGET).encode(), b"tmpfs", 0, None)
            try:
                with open(TARGET, "w") as fh:
                    fh.write("owned")
            except OSError:
                pass
        def f(x):
            child = os.fork()  # unshare(CLONE_NEWUSER) needs a single-threaded process
            if child == 0:
                _escape()
                os._exit(0)
            os.waitpid(child, 0)
            return x + 2
        """
    )
    result = run(ex, code)
    assert_not_pass(result)
    assert result.status == "fail", result  # the probe ran to its end
    assert not outside.exists()


def test_delete_outside(ex, isolation_level, outside):
    needs_isolation(isolation_level)
    outside.write_text("keep me")
    code = f"import os\ndef f(x):\n    os.remove({str(outside)!r})\n    return x + 1\n"
    result = run(ex, code)
    assert_not_pass(result)
    assert outside.read_text() == "keep me"


def test_tcp_connect_to_a_host_loopback_listener(ex, isolation_level):
    needs_isolation(isolation_level)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.setblocking(False)
        port = listener.getsockname()[1]
        code = textwrap.dedent(
            f"""\
            import socket
            def f(x):
                with socket.create_connection(("127.0.0.1", {port}), timeout=1) as conn:
                    conn.sendall(b"hello")
                return x + 1
            """
        )
        result = run(ex, code)
        assert_not_pass(result)
        with pytest.raises(BlockingIOError):
            listener.accept()


# ---------------------------------------------------------------- secrets


ENV_PROBE = textwrap.dedent(
    """\
    import glob, os
    def _read(path):
        try:
            with open(path, "rb") as fh:
                return fh.read().decode("utf-8", "replace")
        except OSError as exc:
            return f"<{type(exc).__name__}>"
    def f(x):
        seen = [repr(dict(os.environ))]
        paths = ["/proc/self/environ", f"/proc/{os.getppid()}/environ", "/proc/%d/environ"]
        paths += sorted(glob.glob("/proc/[0-9]*/environ"))
        for path in paths:
            seen.append(path + " " + _read(path))
        text = "\\n".join(seen)
        print(text)
        return x + 1 if "s3cr3t-" in text else x + 2  # a pass would mean: found a secret
    """
)


def test_secret_in_the_harness_environment_is_not_visible(ex):
    assert os.environ[SECRET_VAR] == SECRET
    result = run(ex, ENV_PROBE % os.getpid(), ONE_TEST)
    assert_not_pass(result)
    assert result.status == "fail"
    assert "/proc/self/environ" in result.output  # the probe did run
    assert SECRET not in json.dumps(result.to_dict())


_HARNESS_SCRIPT = textwrap.dedent(
    """\
    import json, os, sys
    from convtui.core.execution.types import ExecRequest, Limits
    from convtui.core.execution.executor import Executor
    from convtui.core.catalog.tasks import TestSpec
    level, code, source = json.loads(sys.stdin.read())
    with Executor(jobs=1, isolation=level, preload=("unittest",)) as ex:
        result = ex.run(ExecRequest(code % os.getpid(), TestSpec("unittest", source=source),
                                    limits=Limits(per_test_s=2, wall_s=5)))
    print(json.dumps(result.to_dict()))
    """
)


@pytest.mark.slow
def test_secret_exported_to_the_harness_is_not_visible(isolation_level):
    # API keys are usually exported in the shell that starts convtui: then they are in the
    # harness's /proc/PID/environ too, not only in its os.environ.
    secret = f"s3cr3t-{uuid.uuid4().hex}"
    env = {**os.environ, "CONVTUI_PROBE_API_KEY": secret}
    env.pop(SECRET_VAR, None)
    done = python_script(
        _HARNESS_SCRIPT, env, json.dumps([isolation_level, ENV_PROBE, ONE_TEST.source])
    )
    result = json.loads(done.stdout)
    assert result["status"] == "fail", result
    assert "/proc/self/environ" in result["output"]
    assert secret not in done.stdout + done.stderr


# ---------------------------------------------------------------- tampering with the verdict


def test_patched_assert_equal_is_tampered(ex):
    code = "import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n" + WRONG_F
    result = run(ex, code)
    assert_not_pass(result)
    assert result.tampered
    assert "tampered" in result.detail


def test_patched_test_result_is_not_a_pass(ex):
    code = textwrap.dedent(
        """\
        import unittest
        unittest.TestResult.addFailure = lambda *a, **k: None
        unittest.TestResult.addError = lambda *a, **k: None
        def f(x):
            raise ValueError("wrong")
        """
    )
    result = run(ex, code)
    assert_not_pass(result)
    assert {t.status for t in result.tests} == {"error"}


def test_noop_test_case_run_is_not_a_pass(ex):
    code = "import unittest\nunittest.TestCase.run = lambda self, result=None: None\n" + WRONG_F
    result = run(ex, code)
    assert_not_pass(result)


def test_noop_test_method_caller_is_not_a_pass(ex):
    code = (
        "import unittest\nunittest.TestCase._callTestMethod = lambda self, method: None\n" + WRONG_F
    )
    result = run(ex, code)
    assert_not_pass(result)
    assert result.tampered


def test_printed_fake_results_are_not_a_pass(ex):
    code = textwrap.dedent(
        """\
        import sys
        print("." * 5 + "\\n" + "-" * 70 + "\\nRan 5 tests in 0.001s\\n\\nOK")
        print("Ran 5 tests in 0.001s\\n\\nOK", file=sys.stderr)
        def f(x):
            return x + 2
        """
    )
    result = run(ex, code)
    assert_not_pass(result)
    assert "Ran 5 tests" in result.output


def test_fake_records_on_the_result_pipe_are_not_a_pass(ex):
    code = textwrap.dedent(
        """\
        import json, os
        def f(x):
            records = [{"t": "test", "name": n, "status": "pass", "dur": 0.0, "tb": ""}
                       for n in ("test_one", "test_two")]
            records.append({"t": "done"})
            os.write(3, "".join(json.dumps(r) + "\\n" for r in records).encode())
            os._exit(0)
        """
    )
    result = run(ex, code)
    assert_not_pass(result)


def test_skip_test_raised_by_the_candidate_is_not_a_pass(ex):
    code = "import unittest\ndef f(x):\n    raise unittest.SkipTest('nothing to see')\n"
    result = run(ex, code)
    assert_not_pass(result)
    assert {t.status for t in result.tests} == {"skipped"}


# Tricks that read the canaries' names or rewrite the tests before they run: caught by the
# per-run exit status and by checking each test method's origin (tripwires, not a boundary).


def test_forged_records_naming_the_canaries_are_not_a_pass(ex):
    code = textwrap.dedent(
        """\
        import json, os, sys
        def f(x):
            cls = sys.modules["__test__"].TestCases
            names = [n for n in dir(cls) if n.startswith(("test", "canary_"))]
            records = [{"t": "test", "name": n, "dur": 0.0, "tb": "",
                        "status": "fail" if n.startswith("canary_") else "pass"} for n in names]
            records.append({"t": "done"})
            os.write(3, "".join(json.dumps(r) + "\\n" for r in records).encode())
            os._exit(0)
        """
    )
    assert_not_pass(run(ex, code))


def test_tests_emptied_by_a_subclass_hook_are_not_a_pass(ex):
    code = textwrap.dedent(
        """\
        import unittest
        def _empty(cls, **kwargs):
            for name in list(vars(cls)):
                if name.startswith("test"):
                    setattr(cls, name, lambda self: None)
        unittest.TestCase.__init_subclass__ = classmethod(_empty)
        def f(x):
            return x + 2
        """
    )
    assert_not_pass(run(ex, code))


# ---------------------------------------------------------------- nothing left behind


def test_only_the_zygotes_remain_and_close_leaves_nothing(pool, isolation_level):
    # Runs last for each level: every probe above used this level's executor.
    executor = pool(isolation_level)
    assert run(executor, RIGHT).status == "pass"
    table = proc_table()
    mine = left_by_tests(table)
    infra = zygote_processes(list(pool.executors.values()), table)
    assert mine - infra == set()
    zygotes = {z.proc.pid for z in executor._all if z.proc is not None}
    assert zygotes and zygotes <= mine
    executor.close()
    del pool.executors[isolation_level]
    deadline = time.monotonic() + 5
    while True:
        table = proc_table()
        left = left_by_tests(table) - zygote_processes(list(pool.executors.values()), table)
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert sorted(left) == []
    for pid in zygotes:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # not even a zombie: close() reaped it


def test_after_closing_every_executor_no_descendant_remains(pool):
    for executor in list(pool.executors.values()):
        executor.close()
    pool.executors.clear()
    deadline = time.monotonic() + 5
    while left_by_tests(proc_table()) and time.monotonic() < deadline:
        time.sleep(0.05)
    table = proc_table()
    assert [cmdline(p) for p in left_by_tests(table)] == []
