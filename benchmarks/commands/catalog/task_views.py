"""Rich renderings for ``convtui tasks``: the task list and one task in full.

Foreign text (prompts, code, tests) is always passed as ``Text``/``Syntax``, never
interpolated into markup, since it is full of square brackets."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from convtui.core.catalog.tasks import ProjectSite, Task


def _code(code: str) -> Syntax:
    return Syntax(code.rstrip("\n"), "python", line_numbers=True, word_wrap=True, theme="ansi_dark")


def _cut(text: str) -> Text:
    """A cell that ends in an ellipsis where its column is narrower, instead of wrapping."""
    return Text(text, no_wrap=True, overflow="ellipsis")


def task_table(tasks: Sequence[Task]) -> Table:
    """One line per task at any width from 80 columns: the id and the test count stay whole,
    the libraries and the prompt's first line give way with an ellipsis (``--json`` and
    ``tasks show`` have everything).

    rich narrows only columns that may wrap, and the widest first: the libs and prompt
    columns are declared wrappable so they are the ones that give, and their cells cut
    themselves instead of wrapping. The id and tests columns may not wrap, so they never
    lose a character."""
    title = f"{len(tasks)} task{'' if len(tasks) == 1 else 's'}"
    table = Table(title=title, header_style="bold", expand=False)
    table.add_column("id", no_wrap=True)
    levels = any(task.level for task in tasks)  # CodeIF-Bench: its level and project
    if levels:
        table.add_column("level", no_wrap=True)
        table.add_column("project", overflow="ellipsis", min_width=6, max_width=24)
    table.add_column("libs", overflow="ellipsis", min_width=6, max_width=28)
    table.add_column("tests", justify="right", no_wrap=True)
    table.add_column("prompt", overflow="ellipsis", min_width=10)
    for task in tasks:
        count = (
            task.tests.source.count("def test")
            if task.tests.kind == "unittest"
            else len(task.tests.snippets)
        )
        first_line = task.prompt.strip().splitlines()[0] if task.prompt.strip() else ""
        libs = ", ".join(task.libs) or "-"
        where = [Text(task.level), _cut(task.site.project if task.site else "-")] if levels else []
        table.add_row(Text(task.id), *where, _cut(libs), str(count), _cut(first_line))
    return table


def _all_tests(task: Task) -> list[tuple[str, str]]:
    found = list(task.tests.snippets)
    for requirement in task.requirements:
        found.extend(requirement.tests.snippets)
    return found


def _site(site: ProjectSite) -> list[RenderableType]:
    """Where a repository task's function sits, and the context its prompt carries."""
    where = Text.assemble(
        ("project: ", "bold"),
        f"{site.project_path} · {site.file_in_project}, lines {site.signature_line}-"
        f"{site.body_end} · L-{site.level} · {site.namespace}",
    )
    parts: list[RenderableType] = [where]
    if site.context:
        parts.append(Panel(_code(site.context), title="context (L-2)", title_align="left"))
    if site.intra_context:
        parts.append(
            Panel(_code(site.intra_context), title="intra-file context", title_align="left")
        )
    for name, source in site.cross_context:
        parts.append(
            Panel(_code(source), title=Text(f"cross-file context · {name}"), title_align="left")
        )
    return parts


def task_detail(task: Task) -> RenderableType:
    parts: list[RenderableType] = [
        Panel(Text(task.prompt.strip()), title=Text(f"{task.id} · prompt"), title_align="left"),
        Text.assemble(("libs: ", "bold"), ", ".join(task.libs) or "standard library only"),
    ]
    if task.site is not None:
        parts.extend(_site(task.site))
    if task.code_header.strip():
        parts.append(Panel(_code(task.code_header), title="code header", title_align="left"))
    if task.tests.kind == "pytest":
        body = "\n\n".join(
            f"# {name}\n{code}" if code else f"# {name} (the project's own)"
            for name, code in _all_tests(task)
        )
        parts.append(Panel(_code(body), title="tests (pytest ids)", title_align="left"))
    elif task.tests.kind == "unittest":
        parts.append(Panel(_code(task.tests.source), title="tests", title_align="left"))
    else:
        body = "\n\n".join(f"# {name}\n{code}" for name, code in task.tests.snippets)
        parts.append(Panel(_code(body), title="tests", title_align="left"))
    for req in task.requirements:
        parts.append(
            Panel(Text(req.text), title=Text(f"instruction · {req.category}"), title_align="left")
        )
    parts.append(Panel(_code(task.ground_truth), title="ground truth", title_align="left"))
    return Group(*parts)
