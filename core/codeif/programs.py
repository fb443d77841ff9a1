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

The rest of the ``codeif`` protocol, also read from the authors' harness
(zhu-zhu-ding/CodeIF-Bench, branch v1, ``static_conversation/function/test/evaluation.py``
and ``execution.py``): the code is the first ```` ```python ```` block of the reply, else the
whole reply (``extract_fortran``, :func:`first_python_block`); the base answer is checked as
extracted, without the pre-processing (``way == 1``), the follow-ups pre-processed
(``way`` 3 to 7); each check is one script run as ``python file.py`` (so the code's
``if __name__ == "__main__":`` block runs), the code then the asserts, under a 3-second
limit (``run_test.sh``: ``--timeout 3.0``; :func:`benchmark_limits`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Literal

from convtui.core.catalog.repo_rows import as_held
from convtui.core.catalog.tasks import Task, TestKind, TestSpec
from convtui.core.codeif.instructions import BASE, Instruction, checked_by
from convtui.core.codeif.repairs import repaired
from convtui.core.execution.requests import task_imports, task_modules
from convtui.core.execution.types import ExecRequest, ExecResult, Limits
from convtui.core.projects.splice import named_as

# How candidates are checked: codeif as the benchmark's evaluation does (benchmark_preprocess
# first; dynamic conversations as the authors' script plays them), convtui as written.
CodeifProtocol = Literal["codeif", "convtui"]

# The benchmark's pattern, read from its evaluation script: four spaces, three double quotes,
# a newline, anything, three double quotes.
_INDENTED_DOCSTRING = re.compile(r'    """\r?\n(.*?)"""', re.DOTALL)
# ``extract_fortran``'s pattern: the first block fenced as python, its closing fence anywhere.
_FIRST_PYTHON_BLOCK = re.compile(r"```python\r?\n(.*?)```", re.DOTALL)
_BENCHMARK_TIMEOUT_S = 3.0  # run_test.sh: --timeout 3.0, for the whole script


def first_python_block(reply: str) -> str:
    """The code CodeIF-Bench's harness reads out of a reply: the first ```` ```python ````
    block, else the reply as it is."""
    found = _FIRST_PYTHON_BLOCK.search(reply)
    return found.group(1) if found else reply


def benchmark_limits(limits: Limits, tests: int) -> Limits:
    """``limits`` with the harness's time limit, 3 seconds, for each of ``tests`` asserts.

    The harness checks an instruction on its own asserts (IA, IFR) in a script of its own,
    each with 3 seconds: so one assert that hangs must not take the others' verdicts with it,
    and the run as a whole gets 3 seconds per assert (and 3 for loading the code). An
    accumulated check (CA), one script in the harness, fails here too when any of its asserts
    times out; one whose asserts each finish within 3 seconds but not all together passes
    here where the harness's would time out, which none of the published verdicts shows."""
    return replace(
        limits, per_test_s=_BENCHMARK_TIMEOUT_S, wall_s=_BENCHMARK_TIMEOUT_S * (tests + 1)
    )


def benchmark_preprocess(code: str) -> str:
    """The candidate as CodeIF-Bench's evaluation runs it for instruction tests."""
    stripped = _INDENTED_DOCSTRING.sub("", code)
    return "\n".join(line for line in stripped.splitlines() if line.strip())


def round_tests(given: Sequence[Instruction], kind: TestKind = "snippets") -> TestSpec:
    """Every test of the instructions given so far, each once, in the order given: asserts,
    or pytest ids in a repository task's project (``kind``)."""
    seen: dict[str, str] = {}
    for instruction in given:
        for name, code in instruction.tests:
            seen.setdefault(name, code)
    return TestSpec(kind, snippets=tuple(seen.items()))


def project_round_tests(
    task: Task, given: Sequence[Instruction], *, preprocess: bool, repair: bool = True
) -> TestSpec:
    """The pytest ids a repository task's round runs, each with the test it runs: under the
    authors' protocol what their copy of the project held under the id (another task's test
    of the same name: core/catalog/repo_rows.py ``as_held``), else the test as written; under
    convtui's the task's own test, named as its id says, with the errata's repairs
    (core/codeif/repairs.py; ``repair`` False: as written, what the audit checks)."""
    tests = round_tests(given, "pytest")
    if preprocess:
        return replace(tests, snippets=as_held(task, tests.snippets))
    snippets = repaired(task.id, tests.snippets) if repair else tests.snippets
    return replace(tests, snippets=tuple((n, named_as(c, n)) for n, c in snippets))


def round_request(
    task: Task,
    code: str,
    given: Sequence[Instruction],
    *,
    preprocess: bool,
    limits: Limits | None = None,
    repair: bool = True,
) -> ExecRequest:
    """The execution that checks ``code`` against every instruction in ``given``. With
    ``preprocess`` (the ``codeif`` protocol) the harness's time limit holds and the code is
    pre-processed, unless only the initial instruction is checked: the harness checks base
    answers as extracted. Without it (convtui's protocol) the tests get the errata's repairs
    unless ``repair`` is False (the audit checks them as written)."""
    if task.site is not None:
        return _project_round(
            task, code, given, preprocess=preprocess, limits=limits, repair=repair
        )
    base_only = all(i.category == BASE for i in given)
    limits = limits or Limits()
    if preprocess:
        # The harness's script is the code, a newline, then the asserts: the newline ends
        # the code's last line (pycodestyle's W292 reads inspect.getsource of it).
        code = (code if base_only else benchmark_preprocess(code)) + "\n"
    tests = round_tests(given)
    if repair and not preprocess:
        tests = replace(tests, snippets=repaired(task.id, tests.snippets))
    return ExecRequest(
        code=code,
        tests=tests,
        known_modules=task_modules(task),
        task_imports=task_imports(task),
        limits=benchmark_limits(limits, len(tests.snippets)) if preprocess else limits,
        as_main=preprocess,  # the harness runs `python file.py`
        task_id=task.id,
    )


def _project_round(
    task: Task,
    code: str,
    given: Sequence[Instruction],
    *,
    preprocess: bool,
    limits: Limits | None,
    repair: bool = True,
) -> ExecRequest:
    """A repository task's round: pytest in its project on the tests of every instruction
    given. The authors' repository harness (repo/test/run_pass@k.py) neither pre-processes
    the code nor limits a test on its own: 60 s for them all (``func_set_timeout(60)``), and
    it indents the code to the row's ``indent``, which in L-3 is 4 more than the function's
    column (no L-3 candidate then compiles), and it reads pytest's exit status, so a skipped
    test passes; an instruction test written under a name other than its id's is not found
    there (an error). convtui's protocol puts the code where the reference is, runs each
    instruction test under its id's name, and a skipped test did not pass."""
    from convtui.core.projects.checkout import PROJECT_LIMITS, project_request

    indent = None
    if preprocess:
        limits = replace(limits or PROJECT_LIMITS, per_test_s=60.0, wall_s=60.0)
        indent = task.site.indent if task.site else None
    return project_request(
        task,
        code,
        project_round_tests(task, given, preprocess=preprocess, repair=repair),
        limits=limits,
        indent=indent,
        skips_pass=preprocess,
    )


def verdicts(result: ExecResult, given: Sequence[Instruction]) -> dict[str, bool]:
    """Instruction category -> followed, from one round's execution. A run that never
    reached the tests (the code does not compile, a module-level error) follows nothing."""
    passed = {t.name for t in result.tests if t.status == "pass"}
    base = given[0]
    return {i.category: all(n in passed for n in checked_by(i, base)) for i in given}


def own_verdicts(result: ExecResult, given: Sequence[Instruction]) -> dict[str, bool]:
    """Instruction category -> its own asserts all pass (the initial instruction's are the
    task's base asserts): what the authors' scripts check an instruction on."""
    passed = {t.name for t in result.tests if t.status == "pass"}
    return {i.category: all(name in passed for name, _ in i.tests) for i in given}


def unmet(found: Mapping[str, bool]) -> list[str]:
    """The categories not followed, in the order given."""
    return [category for category, ok in found.items() if not ok]
