"""The candidate side of one run: runs in a child forked from the zygote, never in the harness.

Set-up order matters: the process is confined (session, limits, environment, Landlock)
before any candidate byte is compiled, and the result class and the unittest entry points are
captured before the candidate's code can patch them. Each finished test is written at once as
one JSON line on the result pipe, so a run killed half-way still reports what it did.
"""

from __future__ import annotations

import contextlib
import ctypes
import inspect
import json
import linecache
import os
import random
import re
import resource
import signal
import sys
import sysconfig
import time
import traceback
import types
import unittest

import landlock

MODULE_FILE = "__test__.py"
_PR_SET_PDEATHSIG = 1
_PR_CAPBSET_DROP = 24
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
_HERE = os.path.dirname(os.path.abspath(__file__))
_STDLIB = os.path.dirname(os.__file__)
_SITE_DIRS = sorted(
    {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}, key=len, reverse=True
)
_UNITTEST_DIR = os.path.dirname(unittest.__file__)
# Captured now, before any candidate code runs, so patching unittest cannot change how we run.
_CASE_RUN = unittest.TestCase.run
_LOADER_NAMES = unittest.TestLoader().getTestCaseNames
# How unittest describes a subtest, "(length=5)" or "[msg] (k=v)" (the part of its id() after
# the method), captured for the same reason. A private class, which typeshed leaves out.
_SUBTEST_DESCRIPTION = unittest.case._SubTest._subDescription  # type: ignore[attr-defined]
# Failing subtests recorded per test: BigCodeBench keeps them all, but a loop of subtests over
# the candidate's output could otherwise fill the harness's memory through the result pipe.
_MAX_SUBTEST_ISSUES = 100
# Longer descriptions (a subtest parameter with a huge repr) are cut to this many characters.
_MAX_SUBTEST_NAME = 2000


class TestTimeout(BaseException):
    """Raised by the per-test timer. A BaseException so `except Exception` cannot swallow it."""


# Loaded once, in the zygote: a dlopen in every run cost about half a millisecond.
_LIBC = ctypes.CDLL(None, use_errno=True)


class _Emitter:
    def __init__(self, fd: int, rundir: str) -> None:
        self._fd = fd
        self._rundir = rundir

    def emit(self, record: dict) -> None:
        data = (json.dumps(record) + "\n").encode()
        while data:
            data = data[os.write(self._fd, data) :]

    def clean(self, text: str) -> str:
        """Strip the run directory so feedback reads the same on every machine."""
        return text.replace(self._rundir + os.sep, "").replace(self._rundir, ".")


def _normalise_path(filename: str) -> str | None:
    """Map a frame's file to a machine-independent name; None hides the frame."""
    if filename.startswith(_HERE) or filename.startswith(_UNITTEST_DIR):
        return None
    for site in _SITE_DIRS:
        if filename.startswith(site + os.sep):
            return "<site-packages>/" + filename[len(site) + 1 :]
    if filename.startswith(_STDLIB + os.sep):
        return "<stdlib>/" + filename[len(_STDLIB) + 1 :]
    return filename


def _tidy(te: traceback.TracebackException, seen: set[int]) -> None:
    if id(te) in seen:
        return
    seen.add(id(te))
    frames = []
    for frame in te.stack:
        name = _normalise_path(frame.filename)
        if name is None:
            continue
        frame.line  # noqa: B018 - read by its real path, before the path is renamed
        frame.filename = name
        frames.append(frame)
    te.stack = traceback.StackSummary.from_list(frames)
    for linked in (te.__cause__, te.__context__):
        if linked is not None:
            _tidy(linked, seen)


def format_exc(exc: BaseException, emitter: _Emitter) -> str:
    # Lines are read for the frames kept (_tidy), not for unittest's own, which are dropped.
    te = traceback.TracebackException.from_exception(exc, capture_locals=False, lookup_lines=False)
    _tidy(te, set())
    return emitter.clean("".join(te.format()))


_NLTK_RESOURCE = re.compile(r"nltk\.download\(\s*['\"]([\w./-]+)")


def _missing_module(exc: BaseException) -> str | None:
    """The module (or NLTK data package, as ``nltk:NAME``) whose absence raised ``exc``."""
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        return exc.name
    text = str(exc)
    if isinstance(exc, LookupError) and "nltk.download(" in text:
        found = _NLTK_RESOURCE.search(text)
        return f"nltk:{found.group(1) if found else 'data'}"
    if "textblob.download_corpora" in text:  # TextBlob's MissingCorpusError
        return "nltk:textblob-corpora"
    return None


class StreamingResult(unittest.TestResult):
    """Collects one test's outcome; subclassed here so patches to TestResult do not reach it.

    ``outcome`` is the test's first problem (its verdict). ``issues`` is what unittest's
    result files under ``failures`` and ``errors`` for it, in order: each failing subtest (the
    subtest object itself: it is named in :func:`_record`, once the test is over, as
    BigCodeBench names it once its suite is over) and the method's own failure or error
    (``None`` in place of a subtest)."""

    def __init__(self) -> None:
        super().__init__()
        self.outcome: tuple[str, BaseException | None] = ("pass", None)
        self.issues: list[tuple[object | None, str, BaseException | None]] = []
        self.failed_subtests = 0

    def _set(self, status: str, err) -> None:
        if self.outcome[0] == "pass":  # the first problem is the one to report
            self.outcome = (status, err[1] if err else None)

    def own(self, status: str, exc: BaseException | None) -> None:
        """File the method's own failure or error (outside any subtest)."""
        self.issues.append((None, status, exc))

    def addFailure(self, test, err) -> None:
        self._set("fail", err)
        self.own("fail", err[1])

    def addError(self, test, err) -> None:
        status = "timeout" if isinstance(err[1], TestTimeout) else "error"
        self._set(status, err)
        self.own(status, err[1])

    def addSubTest(self, test, subtest, err) -> None:
        if err is not None:
            failed = issubclass(err[0], test.failureException)
            self._set("fail" if failed else "error", err)
            self.failed_subtests += 1
            if self.failed_subtests <= _MAX_SUBTEST_ISSUES:
                timeout = isinstance(err[1], TestTimeout)
                status = "fail" if failed else "timeout" if timeout else "error"
                self.issues.append((subtest, status, err[1]))

    def addSkip(self, test, reason) -> None:
        self._set("skipped", None)
        self.skip_reason = reason

    def addExpectedFailure(self, test, err) -> None:
        pass

    def addUnexpectedSuccess(self, test) -> None:
        self._set("fail", None)


def _alarm(signum, frame):
    raise TestTimeout("test did not finish in time")


def _traceback(exc: BaseException | None, emitter: _Emitter, per_test_s: float) -> str:
    if isinstance(exc, TestTimeout):
        return format_exc(exc, emitter).replace(
            "test did not finish in time", f"test did not finish within {per_test_s:g} s"
        )
    return format_exc(exc, emitter) if exc is not None else ""


def _subtest_name(method: str, subtest: object, per_test_s: float) -> str:
    """``test_x (length=5)``: what unittest's ``_SubTest.id()`` gives after the class path
    (``__test__.TestCases.test_x (length=5)``). BigCodeBench keys its ``details`` by
    ``test.id().split(".")[-1]`` (bigcode-project/bigcodebench: bigcodebench/eval/__init__.py,
    ``unsafe_execute``), which is this name unless the description holds a dot; the feedback
    renderer applies that split where the reference's names are wanted (core/feedback/render.py).
    The description calls repr() on the candidate's values, so it runs under the per-test
    timer and anything it raises gives a placeholder instead."""
    try:
        _timed(per_test_s)
        description = _SUBTEST_DESCRIPTION(subtest)
        _untimed()
        if not isinstance(description, str):
            raise TypeError("a subtest description must be a string")
    except BaseException:
        _untimed()
        description = "(<unprintable subtest>)"
    return f"{method} {description[:_MAX_SUBTEST_NAME]}"


def _record(
    emitter: _Emitter,
    name: str,
    status: str,
    exc: BaseException | None,
    started: float,
    per_test_s: float,
    issues: list[tuple[object | None, str, BaseException | None]] | None = None,
) -> None:
    record = {
        "t": "test",
        "name": name,
        "status": status,
        "dur": round(time.monotonic() - started, 4),
        "tb": _traceback(exc, emitter, per_test_s),
        "exc": type(exc).__name__ if exc is not None else "",
        "module": _missing_module(exc) if exc is not None else None,
    }
    # Only a test with failing subtests lists its issues: for any other test they are its one
    # outcome above. The harness reads them as evidence under this expected test, never as
    # tests of their own (core/execution/verdict.py).
    if issues and any(subtest is not None for subtest, _, _ in issues):
        record["issues"] = [
            {
                "name": name if subtest is None else _subtest_name(name, subtest, per_test_s),
                "status": issue_status,
                "tb": _traceback(issue_exc, emitter, per_test_s),
            }
            for subtest, issue_status, issue_exc in issues
        ]
    emitter.emit(record)


def _timed(per_test_s: float):
    signal.setitimer(signal.ITIMER_REAL, per_test_s)


def _untimed():
    signal.setitimer(signal.ITIMER_REAL, 0)


class ReplacedTest(Exception):
    """A test method that is not the one the test code defines (the candidate swapped it)."""


def _check_origin(cls: type, name: str, first_test_line: int) -> None:
    """Tripwire: the method must come from the test code's own lines, not the candidate's."""
    func = inspect.unwrap(getattr(cls, name))  # mock.patch decorators wrap the test
    code = getattr(func, "__code__", None)
    if code is None or code.co_filename != MODULE_FILE or code.co_firstlineno < first_test_line:
        raise ReplacedTest(f"{name} is not the test method the test code defines")


def run_unittest(
    module: types.ModuleType,
    canaries: list[str],
    emitter: _Emitter,
    per_test_s: float,
    only: list[str] | None = None,
    first_test_line: int = 1,
) -> None:
    cls = module.__dict__.get("TestCases")
    if not isinstance(cls, type) or not issubclass(cls, unittest.TestCase):
        raise LookupError("the test module defines no TestCases class")
    names = list(_LOADER_NAMES(cls))
    if only is not None:  # one shard of a task whose tests are split across workers
        names = [n for n in names if n in only]
    for name in [*names, *canaries]:
        emitter.emit({"t": "start", "name": name})
        result = StreamingResult()
        started = time.monotonic()
        try:
            _check_origin(cls, name, first_test_line)
            _timed(per_test_s)
            _CASE_RUN(cls(name), result)
            _untimed()
        except TestTimeout as timeout:  # fired outside the test body (setUp's caller, teardown)
            result.outcome = ("timeout", timeout)
            result.own("timeout", timeout)
        except BaseException as raised:
            _untimed()
            result.outcome = ("error", raised)
            result.own("error", raised)
        status, error = result.outcome
        _record(emitter, name, status, error, started, per_test_s, result.issues)


def run_snippets(
    module: types.ModuleType, snippets: list[list[str]], emitter: _Emitter, per_test_s: float
) -> None:
    for name, code in snippets:
        emitter.emit({"t": "start", "name": name})
        filename = f"<{name}>"
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        started = time.monotonic()
        status: str = "pass"
        error: BaseException | None = None
        try:
            _timed(per_test_s)
            # dont_inherit: this module's `from __future__ import annotations` must not reach
            # the test (it would turn the candidate's annotations into strings).
            exec(compile(code, filename, "exec", dont_inherit=True), dict(module.__dict__))
            _untimed()
        except TestTimeout as exc:
            status, error = "timeout", exc
        except AssertionError as exc:
            _untimed()
            status, error = "fail", exc
        except BaseException as exc:
            _untimed()
            status, error = "error", exc
        _record(emitter, name, status, error, started, per_test_s)


def _confine(request: dict, rundir: str) -> str:
    limits = request["limits"]
    os.setsid()
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    mem = int(limits["memory_mb"]) * 1024 * 1024
    cpu = int(limits["wall_s"]) + 5
    fsize = int(limits["file_size_mb"]) * 1024 * 1024
    for res, value in (
        (resource.RLIMIT_AS, mem),
        (resource.RLIMIT_CPU, cpu),
        (resource.RLIMIT_FSIZE, fsize),
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_NOFILE, int(limits["open_files"])),
    ):
        resource.setrlimit(res, (value, value))
    if os.getuid() != 0:  # RLIMIT_NPROC counts every process of the uid; root ignores it
        resource.setrlimit(resource.RLIMIT_NPROC, (limits["processes"], limits["processes"]))
    env = {**os.environ, **request["env"]}  # the zygote started with an allow-listed env
    env.update(
        HOME=rundir,
        TMPDIR=rundir,
        MPLCONFIGDIR=rundir,
        XDG_CACHE_HOME=rundir,
        XDG_CONFIG_HOME=rundir,
        XDG_DATA_HOME=rundir,
        PWD=rundir,
    )
    os.environ.clear()
    os.environ.update(env)
    time.tzset()
    os.chdir(rundir)
    level = []
    sandbox = request["sandbox"]
    if sandbox["landlock"]:
        writable = [
            *sandbox["writable"],
            rundir,
            "/dev/null",
            "/dev/zero",
            "/dev/full",
            "/dev/shm",
            "/dev/tty",
        ]
        level.append(landlock.restrict(writable, deny_tcp=sandbox["deny_tcp"], scope=True))
    if _drop_capabilities():
        level.append("nocaps")
    return "+".join(level)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _drop_capabilities() -> bool:
    """Give up every capability (True when there were some to give up).

    Run as root without a user namespace (``landlock``/``none`` levels), the candidate would
    keep CAP_SYS_PTRACE and friends: enough to read the harness's /proc/PID/environ (API keys
    exported in its shell) in spite of Landlock, or to reboot the machine. Without them, the
    harness (non-dumpable, see executor.py) is out of reach even for uid 0."""
    libc = _LIBC
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capget failed")
    if not any(d.effective or d.permitted or d.inheritable for d in data):
        return False
    try:
        with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as fh:
            last = int(fh.read())
    except (OSError, ValueError):
        last = 63
    for cap in range(last + 1):  # so that an exec'd program cannot get them back either
        libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    if libc.capset(ctypes.byref(header), (_CapData * 2)()) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")
    return True


def _reseed() -> None:
    # Forked children share the zygote's RNG state; give each its own, as a fresh interpreter.
    random.seed()
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(int.from_bytes(os.urandom(4), "little"))


def child_main(request: dict, rundir: str, out_fd: int, res_fd: int) -> None:
    """Entry point in the forked child; never returns."""
    code = 70
    try:
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        os.dup2(res_fd, 3)
        os.closerange(4, 65536)
        emitter = _Emitter(3, rundir)
        confined = _confine(request, rundir)
        emitter.emit({"t": "ready", "confined": confined})
        _reseed()
        code = _run(request, emitter)
    except BaseException as exc:
        with contextlib.suppress(BaseException):
            emitter.emit({"t": "setup_error", "msg": f"{type(exc).__name__}: {exc}"})
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
        os._exit(code)


def _module_error(emitter: _Emitter, exc: BaseException, started: float) -> None:
    """Report an exception raised outside any test (loading the code, or the runner)."""
    emitter.emit(
        {
            "t": "module_error",
            "exc": type(exc).__name__,
            "msg": emitter.clean(str(exc)),
            "tb": format_exc(exc, emitter),
            "module": _missing_module(exc),
            "timeout": isinstance(exc, TestTimeout),
            "dur": round(time.monotonic() - started, 4),
        }
    )


def _run(request: dict, emitter: _Emitter) -> int:
    limits = request["limits"]
    per_test = float(limits["per_test_s"])
    signal.signal(signal.SIGALRM, _alarm)
    tests = request["tests"]
    if tests["kind"] == "pytest":
        return _run_in_project(request, emitter)
    source = request["code"]
    if tests["kind"] == "unittest":
        source = source + "\n" + tests["source"] + "\n" + request["canary_source"]
    lines = source.splitlines(True)
    linecache.cache[MODULE_FILE] = (len(source), None, lines, MODULE_FILE)
    with open(MODULE_FILE, "w", encoding="utf-8") as fh:  # inspect.getsource needs a real file
        fh.write(source)
    # Run as a script (``python file.py``) when the harness being reproduced does so.
    module = types.ModuleType("__main__" if request.get("as_main") else "__test__")
    module.__file__ = MODULE_FILE
    sys.modules["__test__"] = module
    if request.get("as_main"):
        sys.modules["__main__"] = module
    started = time.monotonic()
    try:
        _timed(float(limits["wall_s"]))
        # dont_inherit: the candidate is compiled with its own __future__ flags only, never this
        # module's (`annotations` would make `f.__annotations__` hold strings, not types).
        exec(compile(source, MODULE_FILE, "exec", dont_inherit=True), module.__dict__)
        _untimed()
    except BaseException as exc:
        _untimed()
        _module_error(emitter, exc, started)
        emitter.emit({"t": "done"})
        return int(request.get("exit_code", 0))
    try:
        if tests["kind"] == "unittest":
            # The tests start on the line after the candidate's code (see the source above).
            first_test_line = request["code"].count("\n") + 2
            run_unittest(
                module,
                request["canaries"],
                emitter,
                per_test,
                request.get("only"),
                first_test_line,
            )
        else:
            snippets = tests["snippets"]
            if request.get("only") is not None:
                snippets = [s for s in snippets if s[0] in request["only"]]
            run_snippets(module, [*snippets, *request["canary_snippets"]], emitter, per_test)
    except BaseException as exc:
        _module_error(emitter, exc, started)
    emitter.emit({"t": "done"})
    # A per-run exit status, so a candidate's own os._exit(0) after forged records is seen.
    return int(request.get("exit_code", 0))


def _run_in_project(request: dict, emitter: _Emitter) -> int:
    """A repository task's run: pytest inside a copy of its project (project_tests.py)."""
    import project_tests  # beside this file, on the zygote's path

    started = time.monotonic()
    expected = [name for name, _ in request["tests"]["snippets"]]
    if request.get("only") is not None:
        expected = [name for name in expected if name in request["only"]]
    try:
        project_tests.run(request["project"], expected, os.getcwd(), emitter.emit, emitter.clean)
    except BaseException as exc:
        _module_error(emitter, exc, started)
    emitter.emit({"t": "done"})
    return int(request.get("exit_code", 0))
