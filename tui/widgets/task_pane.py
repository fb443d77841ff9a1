"""The task the model is solving: its prompt as Markdown, collapsible to one line, with the
code header the model must start from pinned at its foot (the prompt scrolls, the header
stays in view whatever the prompt's length)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownFence

from convtui.core.catalog.tasks import ProjectSite, Task
from convtui.core.printable import printable
from convtui.tui import render


def task_markdown(task: Task, *, with_reference: bool) -> str:
    """The prompt, plus the reference solution when the person plays the expert (who sees
    the ground truth, like the simulated expert). A repository task's prompt carries code
    (the context the model was given): shown as code, after where the function goes."""
    text = task.prompt.strip() if task.site is None else _repository(task.prompt, task.site)
    if with_reference:
        reference = f"```python\n{task.ground_truth}\n```"
        text += f"\n\n**Reference solution** (do not paste it):\n\n{reference}"
    return text


def _fenced(code: str) -> str:
    fence = "````" if "```" in code else "```"
    return f"{fence}python\n{code.rstrip()}\n{fence}"


def _repository(prompt: str, site: ProjectSite) -> str:
    """Where the function goes in its project (first, so it is on screen before any
    scrolling), the words of the prompt, and the context the prompt carries, fenced
    (Markdown would read its comments as headings)."""
    context = site.context or site.intra_context
    words = prompt.split(context, 1)[0] if context and context in prompt else prompt
    parts = [
        f"**Goes into** `{site.project_path}/{site.file_in_project}`, lines "
        f"{site.signature_line}-{site.body_end} (L-{site.level}, `{site.namespace}`).",
        words.strip(),
    ]
    if site.context:
        parts += ["**Context** (the class or file around it):", _fenced(site.context)]
    if site.intra_context:
        parts += ["**Context in its own file:**", _fenced(site.intra_context)]
    for name, source in site.cross_context:
        parts += [f"**Context from another file** (`{name}`):", _fenced(source)]
    return "\n\n".join(parts)


class PythonFence(MarkdownFence):
    """A code block of a task, Python unless it says otherwise. Textual guesses the language
    of a block that names none by loading and trying each of Pygments' 170-odd lexers: a
    third of a second of every app's start, and its guess for a prompt is Python anyway."""

    @classmethod
    def highlight(cls, code: str, language: str, ansi: bool = False, dark: bool = False) -> Content:
        return super().highlight(code, language or "python", ansi, dark)


class TaskMarkdown(Markdown):
    BLOCKS = {**Markdown.BLOCKS, "fence": PythonFence, "code_block": PythonFence}


class TaskPane(VerticalScroll):
    """``-collapsed`` shows only the title; ctrl+o toggles it."""

    help = "The task as the model received it. ctrl+o folds it away to give the code room."

    def __init__(self, task: Task, *, with_reference: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        self._markdown = printable(task_markdown(task, with_reference=with_reference))
        self._imports = task.import_header.strip()
        self._signature = task.code_header[len(task.import_header) :].strip()
        self.border_title = render.title(f"Task {task.id}")
        self.can_focus = True

    def compose(self) -> ComposeResult:
        yield TaskMarkdown(self._markdown, id="task-markdown")
        if self._signature:
            # Docked: it does not scroll with the prompt. A short terminal shows only the
            # signature (the imports are in the code pane too).
            with Vertical(id="task-header"):
                if self._imports:
                    yield Static(render.highlighted_code(self._imports), id="task-imports")
                yield Static(render.highlighted_code(self._signature), id="task-signature")

    def toggle(self) -> None:
        self.toggle_class("-collapsed")
        collapsed = self.has_class("-collapsed")
        self.border_subtitle = "ctrl+o shows it" if collapsed else ""
