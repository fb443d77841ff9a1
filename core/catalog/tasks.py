"""Tasks: the unit of work convtui runs. A task has a prompt, a code header, tests and a
ground-truth solution; tests are a unittest module (BigCodeBench), a list of named assert
snippets (CodeIF-Bench's function tasks) or pytest ids inside a project (its repository
tasks, which also say where in the project their function lives: :class:`ProjectSite`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

TestKind = Literal["unittest", "snippets", "pytest"]
# The benchmarks a task comes from; what --suite takes adds "all" (declared here, where
# ``convtui --help`` can read them without loading the data-file code).
Suite = Literal["bigcodebench", "codeif"]
SuiteOrAll = Literal[Suite, "all"]


@dataclass(frozen=True)
class TestSpec:
    """The tests a candidate is judged by.

    ``unittest``: ``source`` is a module defining ``class TestCases(unittest.TestCase)``.
    ``snippets``: ``snippets`` holds ``(name, code)`` pairs, each one test that passes when its
    code runs without raising.
    ``pytest``: ``snippets`` holds ``(pytest id, code)`` pairs run inside the task's project:
    ``code`` is a test function CodeIF-Bench wrote, put into the module or class the id names
    before the run, or empty for a test the project itself holds.
    """

    __test__ = False  # not a pytest test class, whatever its name

    kind: TestKind
    source: str = ""
    snippets: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Requirement:
    """A CodeIF-Bench follow-up instruction with the tests that verify it."""

    category: str
    text: str
    tests: TestSpec
    # The data file holds this ``unit_test`` as one bare string, not a list of snippets: the
    # loader reads it as one snippet, but the authors' dynamic script iterates it character by
    # character (core/codeif/authors_dynamic.py), which needs to know.
    one_string: bool = False


@dataclass(frozen=True)
class ProjectSite:
    """Where a repository task's function lives in its project, in DevEval's layout (paths
    relative to the folder that holds every project, ``Source_Code``), and the context the
    benchmark gives the model about it."""

    level: int  # CodeIF-Bench's level: 1 (standalone), 2 (class or file context), 3 (cross-file)
    namespace: str  # the function's dotted name, the key the benchmark's own files use
    project_path: str  # "Database/sqlitedict"
    completion_path: str  # "Database/sqlitedict/sqlitedict.py"
    signature_line: int  # 1-based: the candidate replaces signature_line..body_end
    body_start: int
    body_end: int
    # The column the benchmark's harness indents a candidate to, as the row records it; in
    # every L-3 row (and the first L-1 file) it is 4 more than ``column``.
    indent: int
    column: int  # the column the reference code's first line sits at in the project
    context: str = ""  # L-2: the class or file around the function
    intra_context: str = ""  # L-3: the function's own file
    cross_context: tuple[tuple[str, str], ...] = ()  # L-3: (dotted name, source of its file)
    # (pytest id, test code) where the authors' copy of the project ran other code under the
    # id than this task's own (core/catalog/repo_rows.py ``as_the_authors_held_them``).
    authors_tests: tuple[tuple[str, str], ...] = ()

    @property
    def project(self) -> str:
        """The project's own name (``sqlitedict``)."""
        return self.project_path.rsplit("/", 1)[-1]

    @property
    def file_in_project(self) -> str:
        """The completion file relative to the project's root."""
        return self.completion_path[len(self.project_path) :].lstrip("/")


@dataclass(frozen=True)
class Task:
    id: str
    suite: Literal["bigcodebench", "codeif"]
    prompt: str
    code_header: str
    entry_point: str
    tests: TestSpec
    ground_truth: str
    libs: tuple[str, ...] = ()
    complete_prompt: str = ""
    requirements: tuple[Requirement, ...] = field(default=())
    instruction_order: tuple[str, ...] = ()
    site: ProjectSite | None = None  # repository tasks only

    @property
    def level(self) -> str:
        """A CodeIF-Bench task's level as reports name it: ``L-1 function`` (the 50 MBPP
        tasks), ``L-1 repository``, ``L-2`` or ``L-3``; "" for other suites."""
        if self.suite != "codeif":
            return ""
        if self.site is None:
            return "L-1 function"
        return "L-1 repository" if self.site.level == 1 else f"L-{self.site.level}"

    @property
    def number(self) -> int:
        """The numeric part of the id (``BigCodeBench/13`` -> 13)."""
        return int(self.id.rsplit("/", 1)[1])

    @property
    def import_header(self) -> str:
        """What precedes ``def <entry_point>`` in the code header: the task's imports."""
        marker = f"def {self.entry_point}"
        head, sep, _ = self.code_header.partition(marker)
        return head if sep else ""
