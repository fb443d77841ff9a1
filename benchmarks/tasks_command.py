"""Wiring for ``convtui tasks list|show``: load the catalog, select, print."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from convtui.benchmarks.output import console, print_json
from convtui.benchmarks.views import task_detail, task_table
from convtui.core.loaders import load_catalog


def list_tasks(
    suite: str,
    data: Path | None,
    ids: str | None,
    lib: list[str] | None,
    stdlib_only: bool,
    as_json: bool,
) -> None:
    tasks = load_catalog(suite, data).select(ids, lib, stdlib_only)
    if as_json:
        print_json(
            [{"id": t.id, "libs": list(t.libs), "entry_point": t.entry_point} for t in tasks]
        )
        return
    console().print(task_table(tasks))


def show_task(task_id: str, suite: str, data: Path | None, as_json: bool) -> None:
    task = load_catalog(suite_for(task_id, suite), data).get(task_id)
    if as_json:
        print_json(asdict(task))
        return
    console().print(task_detail(task))


def suite_for(task_id: str, suite: str) -> str:
    """Load only the suite an id names, so a missing other dataset does not get in the way."""
    if suite != "all":
        return suite
    prefix = task_id.split("/", 1)[0].lower() if "/" in task_id else "bigcodebench"
    return {"bigcodebench": "bigcodebench", "codeif": "codeif"}.get(prefix, "all")
