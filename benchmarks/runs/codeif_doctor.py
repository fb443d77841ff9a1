"""``convtui doctor --suite codeif --instructions``: do CodeIF-Bench's instruction tests
behave as the benchmark intends here? Per instruction category: how many tasks carry it, how
many reference-style solutions the dataset gives for it, how many of those pass, whether its
asserts compile, and how many the task's own code (written for the initial instruction only)
already follows.

The dataset holds one solution per task, the task's ``code``, written for the initial
instruction: that is the only reference-style solution there is, so only the initial
instruction's tests can be checked against a known-good answer. For the follow-up categories
the check is weaker and says so: their asserts must compile, and the share the initial code
already follows shows which instructions ask for nothing new (an instruction a model meets
without being told says little about following it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from convtui.core.catalog.tasks import Task
from convtui.core.codeif.instructions import BASE, CATEGORIES, instructions
from convtui.core.codeif.programs import round_request, verdicts
from convtui.core.execution.backend import ExecutionBackend
from convtui.core.execution.types import ExecResult
from convtui.core.syntax import parse_python


@dataclass(frozen=True)
class CategoryCheck:
    category: str
    tasks: int  # tasks that carry an instruction of this category
    references: int  # reference-style solutions the dataset gives for it
    references_pass: int
    asserts: int
    asserts_compile: int
    followed_by_task_code: int  # tasks whose own code already follows it

    def to_json(self) -> dict:
        return self.__dict__.copy()


def run_codeif_doctor(
    tasks: Sequence[Task],
    executor: ExecutionBackend,
    *,
    preprocess: bool,
    progress: Callable[[str, ExecResult], None] | None = None,
) -> list[CategoryCheck]:
    """One execution per task (its code against every instruction), counted by category."""
    found: dict[str, list[bool]] = {}
    compiled: dict[str, list[bool]] = {}
    requests = [
        round_request(t, t.ground_truth, instructions(t), preprocess=preprocess) for t in tasks
    ]

    def done(index: int, result: ExecResult) -> None:
        task = tasks[index]
        for category, ok in verdicts(result, list(instructions(task))).items():
            found.setdefault(category, []).append(ok)
        if progress is not None:
            progress(task.id, result)

    executor.run_many(requests, on_result=done)
    for task in tasks:
        for instruction in instructions(task):
            compiled.setdefault(instruction.category, []).extend(
                _compiles(code) for _, code in instruction.tests
            )
    checks = []
    for category in (BASE, *CATEGORIES):
        if category not in found:
            continue
        followed = found[category]
        # Only the initial instruction has a known-good answer in the dataset: the task code.
        references = len(followed) if category == BASE else 0
        checks.append(
            CategoryCheck(
                category=category,
                tasks=len(followed),
                references=references,
                references_pass=sum(followed) if category == BASE else 0,
                asserts=len(compiled[category]),
                asserts_compile=sum(compiled[category]),
                followed_by_task_code=sum(followed),
            )
        )
    return checks


def _compiles(code: str) -> bool:
    try:
        parse_python(code)
    except SyntaxError:
        return False
    return True


def codeif_doctor_table(checks: Sequence[CategoryCheck], preprocess: bool):
    from rich.table import Table

    table = Table(
        title="CodeIF-Bench instruction tests by category",
        header_style="bold",
        caption=(
            "The dataset's only reference-style solution per task is its code, written for "
            "the initial instruction (Base): follow-up categories have none to check against; "
            "their asserts must compile, and 'task code follows' counts instructions met "
            "without being asked. Checked "
            + ("after the benchmark's pre-processing." if preprocess else "as written.")
        ),
    )
    for name in (
        "category",
        "tasks",
        "references",
        "references pass",
        "asserts compile",
        "task code follows",
    ):
        table.add_column(name, justify="left" if name == "category" else "right")
    for c in checks:
        table.add_row(
            c.category,
            str(c.tasks),
            str(c.references),
            f"{c.references_pass}/{c.references}" if c.references else "-",
            f"{c.asserts_compile}/{c.asserts}",
            f"{c.followed_by_task_code}/{c.tasks}",
        )
    return table


def codeif_doctor_ok(checks: Sequence[CategoryCheck]) -> bool:
    """Every reference passes and every assert compiles."""
    return all(c.references_pass == c.references and c.asserts_compile == c.asserts for c in checks)
