"""The candidate side of a run inside a project: runs in the forked, confined child only.

The child copies the project into its run directory (the project's own tree is read-only to
it), writes the files the harness prepared over the copy (the candidate spliced into its
file, the benchmark's tests put into theirs), and runs pytest there on the expected ids,
in this process, with a plugin that writes one record per expected id as soon as it is
known: the same records as the other kinds of test (runner.py), so the harness decides the
verdict the same way (core/execution/verdict.py).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable

COPY_DIR = "project"  # inside the run directory; tracebacks name files under it
_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", ".git", ".pytest_cache", ".tox")
# Worst outcome first: a test whose setup errs and whose call fails is an error.
_RANK = {"error": 3, "fail": 2, "skipped": 1, "pass": 0}
# An async test with no plugin to run it: pytest 7 skips it with a warning (which a project
# that makes warnings errors turns into a failure: Jinja2), pytest 8.4 fails it. It never ran
# either way, and the authors' published verdicts pass such tests: a skip.
_UNRUN_COROUTINE = "async def functions are not natively supported"


def prepare(project: dict, rundir: str) -> str:
    """The project's copy in ``rundir`` with the harness's files written over it."""
    copy = os.path.join(rundir, COPY_DIR)
    shutil.copytree(project["root"], copy, symlinks=True, ignore=_IGNORED)
    for relative, text in project["files"]:
        target = os.path.normpath(os.path.join(copy, relative))
        if not target.startswith(copy + os.sep):
            raise ValueError(f"refusing to write outside the project copy: {relative}")
        if os.path.islink(target):  # never follow a link the project ships
            os.unlink(target)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as fh:
            fh.write(text)
    return copy


def _expected_for(nodeid: str, expected: list[str]) -> str | None:
    """The expected id a collected test belongs to: itself, or the test it parametrizes."""
    for name in expected:
        if nodeid == name or (nodeid.startswith(name) and nodeid[len(name)] == "["):
            return name
    return None


class Reporter:
    """A pytest plugin that turns reports into the runner's records."""

    def __init__(
        self,
        expected: list[str],
        emit: Callable[[dict], None],
        clean: Callable[[str], str],
        skips_pass: bool = False,
    ) -> None:
        self._expected = expected
        self._skips_pass = skips_pass
        self._emit = emit
        self._clean = clean
        self._outcome: dict[str, tuple[str, str, float]] = {}
        self._started: dict[str, float] = {}
        self._sent: set[str] = set()
        self._broken: set[str] = set()  # modules whose collection failed

    def pytest_collection_modifyitems(self, session: object, config, items: list) -> None:
        """Only the expected tests run; an expected id no module defines is an error of its
        own (pytest, given such an id, would stop before running any test at all)."""
        kept = [item for item in items if _expected_for(item.nodeid, self._expected)]
        dropped = [item for item in items if not _expected_for(item.nodeid, self._expected)]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        # In the order the ids were given, as pytest runs ids named on its command line (and
        # as the authors' harness ran them, one by one): the first failure is the first id's.
        place = {name: i for i, name in enumerate(self._expected)}
        items[:] = sorted(
            kept, key=lambda item: place.get(_expected_for(item.nodeid, self._expected) or "", 0)
        )
        found = {_expected_for(item.nodeid, self._expected) for item in kept}
        for name in self._expected:
            if name in found or name.split("::", 1)[0] in self._broken:
                continue
            self._outcome[name] = ("error", f"not found: no test {name} in the project", 0.0)

    def pytest_runtest_logstart(self, nodeid: str, location: object) -> None:
        name = _expected_for(nodeid, self._expected)
        if name is not None and name not in self._started:
            self._started[name] = time.monotonic()
            self._emit({"t": "start", "name": name})

    def pytest_runtest_logreport(self, report) -> None:
        name = _expected_for(report.nodeid, self._expected)
        if name is None:
            return
        if report.passed:
            status = "pass"
        elif report.skipped or _UNRUN_COROUTINE in report.longreprtext:
            status = "pass" if self._skips_pass else "skipped"
        elif report.when == "call":
            status = "fail"
        else:
            status = "error"  # setup or teardown raised
        text = self._clean(report.longreprtext) if not report.passed else ""
        before = self._outcome.get(name)
        # A test's time is its setup, call and teardown together (and every parametrized
        # case's): each phase reports apart, and keeping one report's kept the setup's, ~0 s.
        spent = report.duration + (before[2] if before is not None else 0.0)
        if before is None or _RANK[status] > _RANK[before[0]]:
            self._outcome[name] = (status, text, spent)
        else:
            self._outcome[name] = (before[0], before[1], spent)

    def pytest_runtest_logfinish(self, nodeid: str, location: object) -> None:
        name = _expected_for(nodeid, self._expected)
        if name is not None and nodeid == name:  # not parametrized: known now
            self._send(name)

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self._broken.add(report.nodeid.split("::", 1)[0])
            text = self._clean(report.longreprtext)
            self._emit(
                {
                    "t": "module_error",
                    "exc": "CollectionError",
                    "msg": f"collecting {report.nodeid or 'the tests'} failed",
                    "tb": text,
                    "module": _missing_module(text),
                    "timeout": False,
                    "dur": 0.0,
                }
            )

    def pytest_sessionfinish(self, session: object, exitstatus: int) -> None:
        for name in self._expected:
            if name in self._outcome:
                self._send(name)

    def _send(self, name: str) -> None:
        if name in self._sent or name not in self._outcome:
            return
        self._sent.add(name)
        status, text, duration = self._outcome[name]
        self._emit(
            {
                "t": "test",
                "name": name,
                "status": status,
                "dur": round(duration, 4),
                "tb": text,
                "exc": "",
                "module": _missing_module(text),
            }
        )


def _missing_module(text: str) -> str | None:
    marker = "ModuleNotFoundError: No module named '"
    at = text.rfind(marker)
    if at < 0:
        return None
    rest = text[at + len(marker) :]
    return rest.split("'", 1)[0] or None


def run(
    project: dict,
    expected: list[str],
    rundir: str,
    emit: Callable[[dict], None],
    clean: Callable[[str], str],
) -> None:
    """Copy, write, then run pytest on ``expected`` in the copy. The wall limit is the
    zygote's to enforce (it kills the child and names the test that was running): pytest
    catches whatever a test raises, a timer's exception included."""
    copy = prepare(project, rundir)
    os.chdir(copy)
    # The root, as `python setup.py pytest` run there has it, and a src layout's folder,
    # which that command's develop step would have made importable.
    for folder in reversed([".", *project.get("pythonpath", [])]):
        sys.path.insert(0, os.path.normpath(os.path.join(copy, folder)))
    import pytest

    # Whole modules, the tests not expected deselected: an expected id that no module defines
    # then fails alone (see Reporter.pytest_collection_modifyitems).
    modules = list(dict.fromkeys(name.split("::", 1)[0] for name in expected))
    args = [
        *modules,
        "--rootdir",
        copy,
        "-p",
        "no:cacheprovider",
        "-q",
        "--no-header",
    ]
    pytest.main(args, plugins=[Reporter(expected, emit, clean, bool(project.get("skips_pass")))])
