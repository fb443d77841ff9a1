"""Typed records at the executor's seams: what a run is asked to do and what it found.

See docs/design.md#executor-contract."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

from convtui.core.catalog.tasks import TestSpec

RunStatus = Literal["pass", "fail", "error", "timeout", "crash", "env_error"]
# "missing": expected, never reported, though the run went on (cut short, or tampered with);
# "not_run": never reached because something outside any test raised first (the code did not
# compile or load).
TestStatus = Literal["pass", "fail", "error", "timeout", "skipped", "missing", "not_run"]
RUN_STATUSES: tuple[RunStatus, ...] = ("pass", "fail", "error", "timeout", "crash", "env_error")

# Bumped whenever verdict semantics or feedback-relevant text change: part of the cache key.
RUNNER_VERSION = "4"


@dataclass(frozen=True)
class Limits:
    """Resource limits for one run. ``wall_s`` bounds the whole run, ``per_test_s`` each test."""

    per_test_s: float = 120.0
    wall_s: float = 240.0
    memory_mb: int = 4096
    output_bytes: int = 128 * 1024
    file_size_mb: int = 256
    open_files: int = 1024
    processes: int = 512

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class ProjectRun:
    """A run inside a project (CodeIF-Bench's repository tasks): the child copies ``root``
    into its own run directory, writes ``files`` (path in the project, text) over the copy
    (the candidate spliced into its file, the benchmark's tests put into theirs) and runs
    pytest there with ``python``, the project's own environment. ``root`` stays read-only;
    ``digest`` names the tree and the environment in the result cache."""

    root: str
    python: str
    files: tuple[tuple[str, str], ...]
    digest: str
    # Folders of the project its code is imported from besides its root (a src layout).
    pythonpath: tuple[str, ...] = ()
    # A test pytest skips counts as passing, as in the authors' harness, which reads
    # pytest's exit status (0 when nothing failed); convtui's own rule: it did not pass.
    skips_pass: bool = False


@dataclass(frozen=True)
class ExecRequest:
    """One candidate against one set of tests.

    ``known_modules`` are modules the task itself needs (its libs, the imports of its header and
    tests): a missing one is the environment's fault (``env_error``), not the candidate's.
    ``task_imports`` are the dotted names the task's own code imports (never the candidate's):
    the executor may import the heavy ones once in its zygote instead of in every run.
    ``as_main``: the candidate's module is named ``__main__``, as when a harness runs it with
    ``python file.py`` (CodeIF-Bench's): an ``if __name__ == "__main__":`` block then runs,
    and what it raises counts. BigCodeBench loads it as a module, which is the default.
    ``project``: for tests of kind ``pytest``, the project they run in; ``code`` is then
    already spliced into ``project.files`` and kept here for the record and the cache key.
    """

    code: str
    tests: TestSpec
    known_modules: frozenset[str] = frozenset()
    task_imports: frozenset[str] = frozenset()
    limits: Limits = field(default_factory=Limits)
    task_id: str = ""
    as_main: bool = False
    project: ProjectRun | None = None  # tests of kind "pytest" run inside it


# What unittest files for a test: assertion failures, errors, and (ours) per-test timeouts.
IssueStatus = Literal["fail", "error", "timeout"]


@dataclass(frozen=True)
class TestIssue:
    """One entry unittest's result filed for a test: a failing subtest, named ``test_x
    (length=5)`` (the method, a space, the subtest's description, as unittest prints it), or
    the method's own failure, named as the method."""

    __test__ = False
    name: str
    status: IssueStatus
    traceback: str = ""


@dataclass(frozen=True)
class TestOutcome:
    """One expected test. ``status`` and ``traceback`` are its first problem; ``issues`` are
    set only when subtests of it failed: everything unittest filed for it, in the order it
    filed them (each failing subtest, then the method's own failure or error if it had one),
    which BigCodeBench's ``details`` lists one entry each (see core/feedback/render.py)."""

    __test__ = False  # not a pytest test class, whatever its name
    name: str
    status: TestStatus
    duration_s: float = 0.0
    traceback: str = ""
    issues: tuple[TestIssue, ...] = ()


@dataclass(frozen=True)
class ExecResult:
    """The verdict of one run. ``detail`` explains a non-pass that is not one test's fault
    (module-level error, crash signal, missing module, tampering)."""

    status: RunStatus
    tests: tuple[TestOutcome, ...] = ()
    duration_s: float = 0.0
    output: str = ""
    output_bytes: int = 0
    isolation: str = "none"
    detail: str = ""
    missing_module: str | None = None
    tampered: bool = False
    # The text of the exception that ended the run outside any test (str(exc)), as the
    # sandbox reported it; ``detail`` says the same in convtui's words.
    error_message: str = ""
    # The traceback of that exception, its frames tidied as the tests' are (source lines
    # quoted): what convtui's own protocol shows for it, where BigCodeBench showed str(exc).
    error_traceback: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    def counts(self) -> tuple[int, int]:
        """(passing tests, expected tests)."""
        return sum(t.status == "pass" for t in self.tests), len(self.tests)

    def to_dict(self) -> dict:
        data = asdict(self)
        if not self.error_message:  # results from before the field keep their hash
            del data["error_message"]
        if not self.error_traceback:
            del data["error_traceback"]
        for test in data["tests"]:  # so do tests without failing subtests
            if not test["issues"]:
                del test["issues"]
        return data
