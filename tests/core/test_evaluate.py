"""The one evaluate path on code that does not compile, through the real sandbox: the
execution feedback a ConvCodeWorld turn reads for it (as a stale EF) is BigCodeBench's
``details["ALL"] = str(e)`` (BCB-fork ``bigcodebench/eval/__init__.py`` ``unsafe_execute``,
which compiles ``code + "\\n" + test_code`` as ``__test__.py``); convtui's own protocol says
it in a sentence instead."""

from __future__ import annotations

import asyncio
from pathlib import Path

from support.data import needs_bigcodebench

from convtui.core.catalog.tasks import Task
from convtui.core.execution.executor import Executor
from convtui.core.feedback.evaluate import Evaluation, FeedbackSettings, evaluate, render_execution
from convtui.core.play.loop import cached_execute

ROOT = Path(__file__).resolve().parents[2]
pytestmark = needs_bigcodebench

BROKEN = "import random\ndef task_func(LETTERS):\n    return {x for x in\n"
# The full execution feedback as ConvCodeWorld renders it, and as convtui's own protocol does.
CCW = FeedbackSettings("full", "ccw", source_lines=False, compile_compat="ccw")
OURS = FeedbackSettings("full", "first-tests")


def evaluated(
    executor: Executor, task: Task, *runs: tuple[str, FeedbackSettings]
) -> list[Evaluation]:
    """Each (code, settings) evaluated against ``task`` in the real sandbox, untrimmed."""

    async def each() -> list[Evaluation]:
        execute = cached_execute(executor, None)
        return [await evaluate(task, code, how, execute, trim=None) for code, how in runs]

    return asyncio.run(each())


def _bcb_all(code: str, test_code: str) -> str:
    """What BigCodeBench stores as ALL for code that does not compile with its tests."""
    try:
        compile(code + "\n" + test_code, "__test__.py", "exec")
    except SyntaxError as exc:
        return str(exc)
    raise AssertionError("the code was meant not to compile")


def test_code_that_does_not_compile_reads_as_bigcodebench_under_convcodeworld(
    bigcodebench, executor
):
    task = bigcodebench.get("BigCodeBench/2")
    under_ccw, under_ours = evaluated(executor, task, (BROKEN, CCW), (BROKEN, OURS))
    assert not under_ccw.compiled.ok and under_ccw.result.status == "error"
    # The loop shows compilation feedback for such code; the EF is what a later turn reads
    # as the stale EF of this turn, rendered from the stored result.
    text = render_execution(task, under_ccw.result, CCW, trim=None)
    assert text == f"ALL\n{_bcb_all(BROKEN, task.tests.source)}\n"
    assert render_execution(task, under_ours.result, OURS, trim=None) == (
        f"ALL\n{under_ours.result.detail}\n"
    )
    assert under_ours.result.detail.startswith("the code does not compile")


# Python 2 idiom at module level: compiles, then raises while the code loads, before any test.
LOAD_ERROR = (
    "import random\nimport statistics\nfor k, v in iteritems({}):\n    pass\n"
    "def task_func(LETTERS):\n    return {}\n"
)


def test_an_error_while_the_code_loads_is_a_traceback_under_convtui_and_str_exc_under_ccw(
    bigcodebench, executor
):
    task = bigcodebench.get("BigCodeBench/2")
    under_ccw, under_ours = evaluated(executor, task, (LOAD_ERROR, CCW), (LOAD_ERROR, OURS))
    assert under_ccw.compiled.ok and under_ccw.result.status == "error"
    # BigCodeBench's details["ALL"] = str(e), which ConvCodeWorld shows as it is.
    assert under_ccw.execution_feedback == "ALL\nname 'iteritems' is not defined\n"
    # convtui: the exception's type and the line that raised it, quoted.
    text = under_ours.execution_feedback
    assert text is not None
    assert text.startswith("ALL\nTraceback (most recent call last):\n"), text
    assert '  File "__test__.py", line 3, in <module>\n    for k, v in iteritems({}):\n' in text
    assert text.endswith("NameError: name 'iteritems' is not defined\n\n"), text
    # A later turn renders the stored result alike.
    assert render_execution(task, under_ours.result, OURS, trim=None) == text


# BigCodeBench/1's test_generated_string_properties runs five subtests, one per length:
#     for length in [10, 50, 100, 150, 5]:
#         with self.subTest(length=length): ...
# A candidate whose counts are one too many fails all five; the second one also fails
# test_zero_length.
ONLY_SUBTESTS = (
    "import collections\nimport random\nimport string\n\n"
    "def task_func(length=100):\n"
    "    if length < 0:\n"
    "        raise ValueError\n"
    "    return {'a': length + 1} if length else {}\n"
)
ALSO_ZERO = ONLY_SUBTESTS.replace(" if length else {}", "")
LENGTHS = (10, 50, 100, 150, 5)


def _bcb_line(code: str, test_code: str, needle: str) -> int:
    """The line BigCodeBench's traceback names for the test line holding ``needle``: it runs
    ``code + "\\n" + test_code`` compiled as ``__test__.py`` (``unsafe_execute``)."""
    [index] = [i for i, line in enumerate(test_code.splitlines()) if needle in line]
    return code.count("\n") + 1 + index + 1


def _bcb_block(key: str, line: int, method: str, message: str) -> str:
    """One entry of CCW's full EF, ``f"{tc_id.upper()}\\n{tc_result}\\n"`` (sfc-gh-hhan/
    convcodeworld: convcodeworld/pot.py, get_execution_feedback), over the trace unittest's
    TestResult stores: its own frames dropped, no source line (the module has no file)."""
    return (
        f"{key.upper()}\nTraceback (most recent call last):\n"
        f'  File "__test__.py", line {line}, in {method}\n{message}\n\n'
    )


def test_bigcodebench_1_failing_subtests_render_as_bigcodebench_and_ccw_do(bigcodebench, executor):
    """BigCodeBench stores one ``details`` entry per failing subtest, keyed
    ``test.id().split(".")[-1]``: for ``__test__.TestCases.test_generated_string_properties
    (length=10)`` that is ``test_generated_string_properties (length=10)``, in the order
    unittest filed them; no entry for the method, whose own body did not fail. CCW's EF:full
    renders every entry; its EF:partial keeps an entry only if its key is in the list of
    visible names (``setUp``, ``test_generated_string_properties``, ``test_zero_length``
    here), which a subtest's key never is."""
    task = bigcodebench.get("BigCodeBench/1")
    ccw_full = FeedbackSettings("full", "ccw", source_lines=False, compile_compat="ccw")
    ccw_partial = FeedbackSettings("partial", "ccw", source_lines=False, compile_compat="ccw")

    only, also = evaluated(executor, task, (ONLY_SUBTESTS, ccw_full), (ALSO_ZERO, ccw_full))
    method = "test_generated_string_properties"
    for evaluation in (only, also):
        line = _bcb_line(evaluation.code, task.tests.source, "Total counts should sum to")
        subtests = "\n".join(
            _bcb_block(
                f"{method} (length={n})",
                line,
                method,
                f"AssertionError: {n + 1} != {n} : Total counts should sum to {n}",
            )
            for n in LENGTHS
        )
        if evaluation is only:
            assert evaluation.execution_feedback == subtests
            assert render_execution(task, evaluation.result, ccw_partial, trim=None) == (
                "Passed all test runs"
            )
            continue
        zero = _bcb_block(
            "test_zero_length",
            _bcb_line(evaluation.code, task.tests.source, "Result should be empty"),
            "test_zero_length",
            "AssertionError: 1 != 0 : Result should be empty for zero length",
        )
        assert evaluation.execution_feedback == subtests + "\n" + zero
        assert render_execution(task, evaluation.result, ccw_partial, trim=None) == zero

    # convtui's own protocol names the same blocks (no dot to cut here) and, under partial
    # coverage, shows the subtests of a visible test.
    for rule in ("first-tests", "ccw"):
        ours = FeedbackSettings("partial", rule)
        text = render_execution(task, only.result, ours, trim=None)
        headers = [line for line in text.splitlines() if line.startswith("TEST_")]
        assert headers == [f"{method.upper()} (LENGTH={n})" for n in LENGTHS]
