"""Wiring for ``convtui tasks list|show``: load the catalog, select, print."""

from __future__ import annotations

from dataclasses import asdict

from convtui.benchmarks.commands.catalog.task_views import task_detail, task_table
from convtui.benchmarks.output import console, print_json
from convtui.benchmarks.settings import TaskSelection


def list_tasks(selection: TaskSelection, as_json: bool) -> None:
    tasks = selection.tasks()
    if as_json:
        print_json(
            [
                {"id": t.id, "libs": list(t.libs), "entry_point": t.entry_point}
                | (
                    {"level": t.level, "project": t.site.project_path if t.site else None}
                    if t.level
                    else {}
                )
                for t in tasks
            ]
        )
        return
    console().print(task_table(tasks))


def show_task(task_id: str, selection: TaskSelection, as_json: bool) -> None:
    task = selection.task(task_id)
    if as_json:
        print_json(asdict(task))
        return
    console().print(task_detail(task))
