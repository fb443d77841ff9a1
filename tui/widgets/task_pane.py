"""The task the model is solving: its prompt as Markdown, collapsible to one line."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Markdown

from convtui.core.printable import printable
from convtui.core.tasks import Task
from convtui.tui import render


def task_markdown(task: Task, *, with_reference: bool) -> str:
    """The prompt, plus the reference solution when the person plays the expert (who sees
    the ground truth, like the simulated expert)."""
    text = task.prompt.strip()
    if with_reference:
        reference = f"```python\n{task.ground_truth}\n```"
        text += f"\n\n**Reference solution** (do not paste it):\n\n{reference}"
    return text


class TaskPane(VerticalScroll):
    """``-collapsed`` shows only the title; ctrl+t toggles it."""

    help = "The task as the model received it. ctrl+t folds it away to give the code room."

    def __init__(self, task: Task, *, with_reference: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        self._markdown = printable(task_markdown(task, with_reference=with_reference))
        self.border_title = render.title(f"Task {task.id}")
        self.can_focus = True

    def compose(self) -> ComposeResult:
        yield Markdown(self._markdown, id="task-markdown")

    def toggle(self) -> None:
        self.toggle_class("-collapsed")
        collapsed = self.has_class("-collapsed")
        self.border_subtitle = "ctrl+t shows it" if collapsed else ""
