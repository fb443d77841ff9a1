"""The CodeIF-Bench task the TUI tests play, the model they script for it and the
instructions the app offers a person on it."""

from __future__ import annotations

from tui_harness import AppFactory, fenced

from convtui.core.codeif.conversation import offered_message
from convtui.core.codeif.instructions import Instruction, instructions

TASK = "CodeIF/11"
# What a person appends to an offered instruction, making it their own words.
EDIT = " Also keep the function under ten lines."


def reference_model(apps: AppFactory) -> str:
    """A scripted model that always answers with the task's reference code, so the verdicts
    do not depend on what a model writes."""
    task = apps.catalog.get(TASK)
    return apps.script([fenced(task.ground_truth + "\n")], name="codeif.jsonl")


def offered(apps: AppFactory) -> tuple[tuple[Instruction, ...], list[str], str]:
    """The task's instructions in the benchmark's order, the words the app offers for each,
    and ``reference_model``."""
    task = apps.catalog.get(TASK)
    order = instructions(task)
    return order, [offered_message(i, task.prompt) for i in order], reference_model(apps)
