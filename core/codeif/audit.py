"""Does each CodeIF-Bench instruction test judge an answer? The audit's rules.

Every instruction test runs, under ``--protocol convtui`` and before any errata repair, on two
answers: the task's reference solution and a placeholder, the reference's function with its
signature and decorators and a body that does nothing. From what the test text is and what it
did on each, it is classed:

- ``judges``: it passes on one answer and fails on the other;
- ``cannot-pass``: it fails for a reason no answer can change: its text does not parse, it
  uses a name nothing defines, it hands indented source to a parser, its id names no test,
  or it fails on the reference where the reference meets the instruction (the initial one);
- ``never-runs``: skipped, or never collected;
- ``passes-any``: the placeholder passes it (a form instruction, Code Standard, Code
  Complexity or Annotation Coverage, is the exception: a placeholder may meet those, and the
  test is ``judges`` when the reference fails it, ``unconfirmed`` when both pass);
- ``unconfirmed``: it fails on both answers for a reason inside the answer; the dataset's
  reference was written for the initial instruction only, so no answer known to meet the
  follow-up is at hand (published completions may confirm it);
- ``not-run``: its project is not usable here; only what its text tells is known.
"""

from __future__ import annotations

import ast
import re
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Literal

from convtui.core.catalog.tasks import Task
from convtui.core.codeif.instructions import BASE, instructions
from convtui.core.codeif.test_defects import (
    is_async_test,
    parsed,
    parses_indented_source,
    passes_without_raise,
    syntax_error,
    text_digest,
    written_name,
)
from convtui.core.execution.types import TestOutcome
from convtui.core.syntax import parse_python

AuditClass = Literal["judges", "cannot-pass", "never-runs", "passes-any", "unconfirmed", "not-run"]
AUDIT_CLASSES: tuple[AuditClass, ...] = (
    "judges",
    "cannot-pass",
    "never-runs",
    "passes-any",
    "unconfirmed",
    "not-run",
)
# Instructions about the code's form, which a placeholder of the right signature may meet.
FORM_CATEGORIES = frozenset({"Code Standard", "Code Complexity", "Annotation Coverage"})
_DEF = re.compile(r"^\s*(async\s+)?def\s")
# Exceptions no answer changes when both answers raise them with the same message.
_TEXT_ERRORS = ("IndentationError", "SyntaxError", "TabError")
# What --protocol convtui does about a defect it repairs for every test as splice puts the
# test into its project (core/projects/splice.py), and the repairs the errata name
# (core/codeif/repairs.py).
_RUNS_REPAIRED = ("id-names-no-test", "no-self")  # splice repairs them before the run
_REPAIR_OF = {
    "no-self": "self added",
    "id-names-no-test": "renamed to its id",
    "indented-source": "dedent-source",
    "async-test": "event-loop",
    "no-raise-check": "else-raise",
    "missing-import": "import-stdlib",
}


@dataclass(frozen=True)
class AuditRow:
    """One instruction test's verdict. ``reference`` and ``placeholder``: its status on each
    answer ("" where it did not run); ``digest``: the version of its text; ``convtui``: what
    ``--protocol convtui`` does about the defect (a repair, ``left out``, or "")."""

    data: str
    level: str
    task: str
    category: str
    test: str
    verdict: AuditClass
    defect: str
    evidence: str
    reference: str
    placeholder: str
    digest: str
    convtui: str
    # The repaired test on the same answers ("" where not re-run): what shows the repair
    # judges answers.
    repaired: str = ""

    def to_json(self) -> dict:
        return asdict(self)


def placeholder(task: Task) -> str:
    """The reference's function with its signature and decorators and a body that does
    nothing (``pass``): an answer that meets no instruction but the form of its signature."""
    code = textwrap.dedent(task.ground_truth)
    try:
        tree = parse_python(code)
    except SyntaxError:
        # Some references' first line sits at another column than their body: cut the
        # signature out of the text instead.
        return _signature_text(task.ground_truth)
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    named = [n for n in functions if n.name == task.entry_point] or functions
    if not named:
        raise ValueError(f"{task.id}: the reference defines no function")
    function = named[0]
    function.body = [ast.Pass()]
    return ast.unparse(function) + "\n"


def _signature_text(code: str) -> str:
    """The decorators and signature lines of ``code``'s first function, then ``pass``."""
    lines = code.splitlines()
    start = next(i for i, line in enumerate(lines) if _DEF.match(line))
    first = start
    while first > 0 and lines[first - 1].lstrip().startswith("@"):
        first -= 1
    end = start
    while not lines[end].rstrip().endswith(":") and end + 1 < len(lines):
        end += 1
    column = len(lines[start]) - len(lines[start].lstrip())
    pad = " " * column
    head = [
        line[column:] if line.startswith(pad) else line.lstrip() for line in lines[first : end + 1]
    ]
    return "\n".join(head) + "\n    pass\n"


@dataclass(frozen=True)
class TestText:
    """What the audit knows of one test before it runs."""

    __test__ = False
    task: Task
    category: str
    name: str
    code: str

    @property
    def project(self) -> bool:
        return self.task.site is not None


def instruction_tests(task: Task) -> list[TestText]:
    """Every test of every instruction of ``task``, each once, in the instructions' order."""
    seen: dict[str, TestText] = {}
    for instruction in instructions(task):
        for name, code in instruction.tests:
            if name not in seen and (code or instruction.category != BASE):
                seen[name] = TestText(task, instruction.category, name, code)
    return list(seen.values())


def _without_self(code: str) -> bool:
    tree = parsed(code)
    first = tree.body[0] if tree and tree.body else None
    return isinstance(first, ast.FunctionDef | ast.AsyncFunctionDef) and not first.args.args


def _decorated(task: Task) -> bool:
    return any(line.lstrip().startswith("@") for line in task.ground_truth.splitlines()[:3])


def static_defect(text: TestText) -> tuple[AuditClass, str, str] | None:
    """A defect the text alone shows: (class, defect kind, evidence)."""
    error = syntax_error(text.code) if text.code else None
    if error is not None:
        return "cannot-pass", "syntax-error", error
    site = text.task.site
    if site is None:
        return None
    if is_async_test(text.code):
        return "never-runs", "async-test", "async def: pytest without an async plugin skips it"
    method = text.task.entry_point if site.column > 0 else None
    if parses_indented_source(text.code, method, _decorated(text.task)):
        return (
            "cannot-pass",
            "indented-source",
            f"parses inspect.getsource of a method (column {site.column}) without dedent",
        )
    wanted = text.name.rsplit("::", 1)[-1]
    written = written_name(text.code)
    if written is not None and written != wanted:
        return "cannot-pass", "id-names-no-test", f"written as {written}, run as {wanted}"
    if text.name.count("::") >= 2 and _without_self(text.code):
        return "not-run", "no-self", "written without self for an id that names a class"
    return None


def _last_line(outcome: TestOutcome | None) -> str:
    if outcome is None:
        return ""
    lines = [line.strip() for line in outcome.traceback.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else outcome.status


def classify(
    text: TestText,
    reference: TestOutcome | None,
    dummy: TestOutcome | None,
    published: tuple[int, int] = (0, 0),
) -> tuple[AuditClass, str, str]:
    """The test's class, defect kind and evidence, from its text, its outcomes on the
    reference and on the placeholder (None: not run) and ``published``: on how many of how
    many published completions it passed."""
    found = _classify(text, reference, dummy)
    passed, total = published
    if not total or found[0] != "unconfirmed":
        return found
    both_pass = reference is not None and reference.status == "pass"
    if (passed < total) if both_pass else passed:
        return "judges", "", f"passes on {passed} of {total} published completions"
    if both_pass:
        return "unconfirmed", "", f"{found[2]}, and all {total} published completions"
    return "unconfirmed", "", f"{found[2]}; fails on all {total} published completions too"


def _classify(
    text: TestText, reference: TestOutcome | None, dummy: TestOutcome | None
) -> tuple[AuditClass, str, str]:
    static = static_defect(text)
    if static is not None and static[1] in _RUNS_REPAIRED:
        # --protocol convtui runs it under its id's name: what it does then is its verdict.
        verdict, _, evidence = classify_run(text, reference, dummy)
        return verdict, static[1], "; ".join(e for e in (static[2], evidence) if e)
    if static is not None:
        return static
    return classify_run(text, reference, dummy)


def classify_run(
    text: TestText, reference: TestOutcome | None, dummy: TestOutcome | None
) -> tuple[AuditClass, str, str]:
    """The class from the test's outcomes alone (the text parses)."""
    if reference is None or dummy is None:
        return "not-run", "", "its project is not usable here"
    ref, ph = reference.status, dummy.status
    if ref == ph == "skipped":
        return "never-runs", "skipped", _last_line(reference)
    if ref in ("missing", "not_run") and ph in ("missing", "not_run"):
        return "never-runs", "not-collected", _last_line(reference) or "never reported"
    cause = _answer_independent(reference, dummy)
    if cause is not None and cause[0] == "environment":
        return "not-run", *cause  # the machine's fault, not the test's
    if cause is not None:
        return "cannot-pass", *cause
    if ph == "pass":
        if text.category in FORM_CATEGORIES:
            if ref == "pass":
                return "unconfirmed", "", "both answers pass (the placeholder meets this form)"
            return "judges", "", "the placeholder meets this form; the reference does not"
        if passes_without_raise(text.code):
            return "passes-any", "no-raise-check", "passes when nothing is raised"
        return "passes-any", "passes-placeholder", "passes on a placeholder that does nothing"
    if ref == "pass":
        return "judges", "", ""
    if text.category == BASE:
        return "cannot-pass", "fails-on-reference", _last_line(reference)
    return "unconfirmed", "", f"fails on both: {_last_line(reference)}"


def _answer_independent(reference: TestOutcome, dummy: TestOutcome) -> tuple[str, str] | None:
    """(defect, evidence) when both answers fail the same way for a reason in the test."""
    # pytest files an exception inside a test as a failure, the snippet runner as an error.
    if {reference.status, dummy.status} - {"error", "fail"}:
        return None
    ref, ph = _last_line(reference), _last_line(dummy)
    if ref != ph:
        return None
    if ref.startswith("NameError"):
        # Only a standard-library module is certainly missing: another name may be one the
        # instruction asks the answer to define.
        name = ref.split("'")[1] if ref.count("'") >= 2 else ""
        return ("missing-import", ref) if name in sys.stdlib_module_names else None
    if ref.startswith(_TEXT_ERRORS):
        return "indented-source" if "indent" in ref.lower() else "syntax-error", ref
    if ref.startswith(("ModuleNotFoundError", "ImportError")):
        return "environment", ref
    return None


def action(defect: str, verdict: AuditClass) -> str:
    """What ``--protocol convtui`` does about a defect: its repair, else ``left out`` for a
    test that cannot judge, else nothing."""
    if defect in _REPAIR_OF:
        return _REPAIR_OF[defect]
    if verdict in ("cannot-pass", "never-runs", "passes-any") and defect != "environment":
        return "left out"
    return ""


def audit_row(
    data: str,
    text: TestText,
    reference: TestOutcome | None,
    dummy: TestOutcome | None,
    published: tuple[int, int] = (0, 0),
) -> AuditRow:
    """The row of one test (``published``: see :func:`classify`)."""
    verdict, defect, evidence = classify(text, reference, dummy, published)
    return AuditRow(
        data=data,
        level=text.task.level,
        task=text.task.id,
        category=text.category,
        test=text.name,
        verdict=verdict,
        defect=defect,
        evidence=evidence,
        reference=reference.status if reference else "",
        placeholder=dummy.status if dummy else "",
        digest=text_digest(text.code),
        convtui=action(defect, verdict),
    )


def counts(rows: Sequence[AuditRow], key: str) -> dict[tuple[str, str], int]:
    """How many rows per (``key``'s value, verdict or defect): key is "category" or "task"."""
    found: dict[tuple[str, str], int] = {}
    for row in rows:
        group = (getattr(row, key), row.verdict)
        found[group] = found.get(group, 0) + 1
    return found
