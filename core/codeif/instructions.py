"""A CodeIF-Bench task's instructions: the initial one (the task's prompt, verified by its
``test`` asserts) and the follow-up ``requirements`` in the task's ``multi-turn`` order, the
predefined order in which none conflicts with those before it."""

from __future__ import annotations

from dataclasses import dataclass

from convtui.core.catalog.tasks import Task

BASE = "Base"  # the initial instruction's category, as the benchmark's own logs name it
FUNCTIONALITY_EXTENSION = "Functionality Extension"
CONTEXT_USAGE = "Context Usage Verification"
CONTEXT_CORRECTNESS = "Context Usage Correctness Verification"
CATEGORIES: tuple[str, ...] = (
    "Input-Output Conditions",
    "Exception Handling",
    "Edge Case Handling",
    FUNCTIONALITY_EXTENSION,
    "Annotation Coverage",
    "Code Complexity",
    "Code Standard",
    # The repository levels' two (L-2, L-3): does the code use the context it was given, and
    # use it correctly.
    CONTEXT_USAGE,
    CONTEXT_CORRECTNESS,
)


@dataclass(frozen=True)
class Instruction:
    """One instruction: its category (the key that names it within a task), its words, and
    the names and code of the asserts that check it. ``own_tests_only``: checked by its own
    asserts alone (Functionality Extension changes the function, so the initial asserts need
    not hold any more); every other instruction is checked together with the initial asserts,
    as the benchmark's evaluation does."""

    category: str
    text: str
    tests: tuple[tuple[str, str], ...]

    @property
    def own_tests_only(self) -> bool:
        return self.category in (BASE, FUNCTIONALITY_EXTENSION)

    @property
    def counts_for_ca(self) -> bool:
        """The paper's CA leaves Functionality Extension out."""
        return self.category != FUNCTIONALITY_EXTENSION


def instructions(task: Task) -> tuple[Instruction, ...]:
    """The initial instruction, then the requirements in the task's ``multi-turn`` order
    (requirements that order leaves out follow in the file's order)."""
    if task.suite != "codeif":
        raise ValueError(f"{task.id} is not a CodeIF-Bench task")
    base = Instruction(BASE, task.prompt, task.tests.snippets)
    by_category = {r.category: r for r in task.requirements}
    order = [c for c in task.instruction_order if c in by_category]
    order += [c for c in by_category if c not in order]
    follow_ups = tuple(
        Instruction(c, by_category[c].text, by_category[c].tests.snippets) for c in order
    )
    return (base, *follow_ups)


def checked_by(instruction: Instruction, base: Instruction) -> tuple[str, ...]:
    """The test names whose passing means ``instruction`` is followed."""
    own = tuple(name for name, _ in instruction.tests)
    if instruction.own_tests_only:
        return own
    return tuple(name for name, _ in base.tests) + own
