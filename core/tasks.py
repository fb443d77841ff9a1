"""Tasks: the unit of work convtui runs. A task has a prompt, a code header, tests and a
ground-truth solution; tests are either a unittest module (BigCodeBench) or a list of named
assert snippets (CodeIF-Bench)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

TestKind = Literal["unittest", "snippets"]
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
