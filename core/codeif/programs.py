"""What runs to check a CodeIF-Bench answer, through the executor like any candidate.

The benchmark checks an instruction by running one script, the candidate then that
instruction's asserts (with the initial asserts first, except for Functionality Extension),
and calls it followed when the script exits cleanly. Here one execution per round runs the
candidate once and every assert of every instruction given so far as its own snippet test
(each in a fresh copy of the candidate's namespace); an instruction is followed when all the
tests :func:`instructions.checked_by` names pass. The verdicts agree with the benchmark's for
asserts that do not depend on one another, which holds for every L1 task's asserts.

The benchmark's evaluation also pre-processes the candidate before instruction tests: it
deletes docstrings that open on their own line at four spaces of indentation
(``remove_triple_quotes_comments``) and drops blank lines (``remove_blank_lines_with_spaces``).
That is the ``codeif`` protocol's behaviour (:func:`benchmark_preprocess`); it changes what
some tests see (a docstring so removed is gone from ``__doc__``, and lines numbers shift).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from convtui.core.codeif.instructions import Instruction, checked_by
from convtui.core.execution import ExecRequest, ExecResult, Limits
from convtui.core.requests import task_imports, task_modules
from convtui.core.tasks import Task, TestSpec

# The benchmark's pattern, read from its evaluation script: four spaces, three double quotes,
# a newline, anything, three double quotes.
_INDENTED_DOCSTRING = re.compile(r'    """\r?\n(.*?)"""', re.DOTALL)


def benchmark_preprocess(code: str) -> str:
    """The candidate as CodeIF-Bench's evaluation runs it for instruction tests."""
    stripped = _INDENTED_DOCSTRING.sub("", code)
    return "\n".join(line for line in stripped.splitlines() if line.strip())


def round_tests(given: Sequence[Instruction]) -> TestSpec:
    """Every assert of the instructions given so far, each once, in the order given."""
    seen: dict[str, str] = {}
    for instruction in given:
        for name, code in instruction.tests:
            seen.setdefault(name, code)
    return TestSpec("snippets", snippets=tuple(seen.items()))


def round_request(
    task: Task,
    code: str,
    given: Sequence[Instruction],
    *,
    preprocess: bool,
    limits: Limits | None = None,
) -> ExecRequest:
    """The execution that checks ``code`` against every instruction in ``given``."""
    return ExecRequest(
        code=benchmark_preprocess(code) if preprocess else code,
        tests=round_tests(given),
        known_modules=task_modules(task),
        task_imports=task_imports(task),
        limits=limits or Limits(),
        task_id=task.id,
    )


def verdicts(result: ExecResult, given: Sequence[Instruction]) -> dict[str, bool]:
    """Instruction category -> followed, from one round's execution. A run that never
    reached the tests (the code does not compile, a module-level error) follows nothing."""
    passed = {t.name for t in result.tests if t.status == "pass"}
    base = given[0]
    return {i.category: all(n in passed for n in checked_by(i, base)) for i in given}


def unmet(found: Mapping[str, bool]) -> list[str]:
    """The categories not followed, in the order given."""
    return [category for category, ok in found.items() if not ok]
