"""``convtui tasks``: the catalog."""

from __future__ import annotations

import typer

from convtui.errors import user_errors
from convtui.option_groups import SelectionGroup, takes_groups
from convtui.options import DataOpt, JsonOpt, SuiteOpt, TaskIdArg

app = typer.Typer(no_args_is_help=True, help="Browse the task catalog.")


@app.command("list")
@takes_groups
def tasks_list(*, selection: SelectionGroup, as_json: JsonOpt = False) -> None:
    """List tasks, filtered by number, library or standard-library-only.

    Example: [bold]convtui tasks list --lib pandas --ids 0-99[/bold]"""
    from convtui.benchmarks.commands.catalog.tasks import list_tasks

    with user_errors():
        list_tasks(selection.settings(), as_json)


@app.command("show")
def tasks_show(
    task_id: TaskIdArg,
    suite: SuiteOpt = "all",
    data: DataOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show a task: prompt, code header, libraries, tests and ground truth."""
    from convtui.benchmarks.commands.catalog.tasks import show_task
    from convtui.benchmarks.settings import TaskSelection

    with user_errors():
        show_task(task_id, TaskSelection(suite, data), as_json)
