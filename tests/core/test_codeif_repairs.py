"""Each repair kind of core/codeif/repairs.py on a task where it applies: the repaired test
passes on an answer that meets its instruction and fails on one that does not, while the test
as written could not tell them apart. The real executor and the committed errata: CodeIF/11
from ../shared/data (``else-raise``), v0's CodeIF/24 (``import-stdlib``), and the small
project tests/support/projects.py makes (``dedent-source``, ``event-loop``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.data import data_file
from support.projects import ADD, TASK, make_project

from convtui.core.catalog.loaders import load_codeif
from convtui.core.catalog.tasks import TestSpec
from convtui.core.codeif.audit import placeholder
from convtui.core.codeif.instructions import instructions
from convtui.core.codeif.programs import round_request
from convtui.core.codeif.repairs import Erratum, repaired
from convtui.core.codeif.test_defects import text_digest
from convtui.core.execution.executor import Executor
from convtui.core.execution.types import ExecRequest, ExecResult, Limits
from convtui.core.projects.checkout import Checkout

RAISES = (
    "def remove_occ(s, ch):\n"
    "    if not isinstance(ch, str) or len(ch) != 1:\n"
    "        raise ValueError('Second parameter must be a single character.')\n"
    "    i = s.find(ch)\n"
    "    if i >= 0:\n"
    "        s = s[:i] + s[i + 1 :]\n"
    "    j = s.rfind(ch)\n"
    "    if j >= 0:\n"
    "        s = s[:j] + s[j + 1 :]\n"
    "    return s\n"
)


def _statuses(executor: Executor, request: ExecRequest) -> dict[str, str]:
    return {t.name: t.status for t in executor.run(request).tests}


def test_else_raise_fails_an_answer_that_raises_nothing(executor: Executor) -> None:
    task = next(
        t for t in load_codeif(data_file("CodeIF-Bench-L1-function.jsonl")) if t.id == "CodeIF/11"
    )
    given = [i for i in instructions(task) if i.category in ("Base", "Exception Handling")]
    (name, _), *_ = given[1].tests
    found = {
        (protocol, answer): _statuses(
            executor, round_request(task, code, given, preprocess=protocol == "codeif")
        )[name]
        for protocol in ("convtui", "codeif")
        for answer, code in (("meets", RAISES), ("placeholder", placeholder(task)))
    }
    assert found[("convtui", "meets")] == "pass"
    assert found[("convtui", "placeholder")] == "fail"
    # The authors' protocol keeps their test, which passes an answer that raises nothing.
    assert found[("codeif", "placeholder")] == "pass"


def test_import_stdlib_lets_a_test_read_the_source(executor: Executor) -> None:
    """v0's CodeIF/24 Annotation Coverage test calls inspect.getsource without importing
    inspect: a NameError for every answer, until the errata's import-stdlib repair."""
    task = next(
        t
        for t in load_codeif(data_file("CodeIF-Bench-L1-function-v0.jsonl"))
        if t.id == "CodeIF/24"
    )
    given = [i for i in instructions(task) if i.category in ("Base", "Annotation Coverage")]
    (name, _), *_ = given[1].tests
    annotated = task.ground_truth.replace("(binary):", "(binary: str) -> int:")
    found = {
        (protocol, answer): _statuses(
            executor, round_request(task, code, given, preprocess=protocol == "codeif")
        )[name]
        for protocol in ("convtui", "codeif")
        for answer, code in (("meets", annotated), ("reference", task.ground_truth))
    }
    assert found[("convtui", "meets")] == "pass"
    assert found[("convtui", "reference")] == "fail"
    assert found[("codeif", "meets")] == "error"  # the authors' test as written


ASYNC_ID = "tests/test_core.py::test_add_async"
# Module-level, as CodeIF/1004's are (unittest would call an async method and pass it).
ASYNC_TEST = "async def test_add_async():\n    assert Counter().add(2) == 2\n"
SIMPLE_ID = "tests/test_core.py::CounterTest::test_add_is_simple"
# As CodeIF-Bench's Code Complexity tests read a method, parsed by the standard library's
# ast where theirs use radon (the small project's environment has no radon).
SIMPLE_TEST = (
    "def test_add_is_simple(self):\n"
    "    import ast, inspect\n"
    "    source = inspect.getsource(Counter.add)\n"
    "    assert not any(isinstance(n, ast.If) for n in ast.walk(ast.parse(source)))\n"
)
# Meets neither instruction: it branches, and it returns nothing.
WRONG = "def add(self, amount):\n    if amount < 0:\n        return None\n    return None\n"
REPAIRED = {SIMPLE_ID: "dedent-source", ASYNC_ID: "event-loop"}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    found = tmp_path_factory.mktemp("projects")
    make_project(found)
    return found


def _run(executor: Executor, root: Path, code: str, fixes: dict[str, str]) -> dict[str, str]:
    """The status of each test of REPAIRED on ``code`` in the small project, with ``fixes``
    (id -> repair) applied as the errata would ({} for the tests as written)."""
    tests = ((SIMPLE_ID, SIMPLE_TEST), (ASYNC_ID, ASYNC_TEST))
    errata = {
        (TASK.id, name, text_digest(code)): Erratum(TASK.id, name, text_digest(code), "d", fix)
        for name, code in tests
        if (fix := fixes.get(name))
    }
    spec = TestSpec("pytest", snippets=repaired(TASK.id, tests, errata))
    request = ExecRequest(
        code=code,
        tests=spec,
        project=Checkout(TASK, root).run(code, spec),
        limits=Limits(wall_s=60),
        task_id=TASK.id,
    )
    result: ExecResult = executor.run(request)
    return {t.name: t.status for t in result.tests}


def test_repository_repairs_judge_answers(executor: Executor, root: Path) -> None:
    """dedent-source: radon (here ast) reads a method's source; event-loop: an async test
    runs. As written, neither passes on the reference, which meets both instructions."""
    as_written = _run(executor, root, ADD, {})
    assert as_written[SIMPLE_ID] == "fail"  # IndentationError for any answer
    assert as_written[ASYNC_ID] != "pass"  # never ran
    assert _run(executor, root, ADD, REPAIRED) == {SIMPLE_ID: "pass", ASYNC_ID: "pass"}
    assert _run(executor, root, WRONG, REPAIRED) == {SIMPLE_ID: "fail", ASYNC_ID: "fail"}
