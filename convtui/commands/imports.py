"""Wiring for ``convtui sessions import DIR``: find the log sets of a folder in
ConvCodeWorld's static layout, load the tasks they name, and import them into the store
(sessions/ccw_import.py)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from convtui.benchmarks.output import console, print_json
from convtui.core.errors import ConvtuiError
from convtui.core.loaders import SUITE_PREFIX, load_catalog
from convtui.core.tasks import Task
from convtui.sessions import Store
from convtui.sessions.ccw_import import FolderSet, ImportedSet, find_sets, import_folder


def import_logs(store: Store, folder: Path, data: Path | None = None) -> list[ImportedSet]:
    """Import every log set of ``folder`` into ``store`` (again: nothing new)."""
    found = find_sets(folder)
    return import_folder(store, folder, _tasks(found, data), selected=found)


def import_command(folder: Path, db: Path, as_json: bool, data: Path | None = None) -> None:
    with Store.open(db) as store:
        imported = import_logs(store, folder, data)
    if as_json:
        print_json([_json(s) for s in imported])
        return
    screen = console()
    for s in imported:
        what = "already in" if s.already else "imported into"
        restored = "; as recorded, from convtui's export manifest" if s.restored else ""
        screen.print(
            f"{s.name}: {s.sessions} sessions, {s.turns} turns each at most, {what} {db} "
            f"as run {s.run_id} ({s.model}, {s.feedback}, --protocol {s.protocol}{restored})",
            soft_wrap=True,
        )
    screen.print(
        f"browse with convtui sessions list --db {db}; replay with convtui bench static "
        f"--logs {db} --model M --db replay.db",
        soft_wrap=True,
    )


def _json(imported: ImportedSet) -> dict:
    return {
        "run_id": imported.run_id,
        "log_set": imported.name,
        "model": imported.model,
        "feedback": imported.feedback,
        "sessions": imported.sessions,
        "turns": imported.turns,
        "already_imported": imported.already,
        "protocol": imported.protocol,
        # Config, users, statuses and turns as our export's manifest recorded them.
        "restored": imported.restored,
    }


def _tasks(found: Sequence[FolderSet], data: Path | None) -> dict[str, Task]:
    ids: set[str] = set()
    for folder_set in found:
        with folder_set.files[0].open(encoding="utf-8") as handle:
            for text in handle:
                if text.strip():
                    try:
                        ids.add(str(json.loads(text)["task_id"]))
                    except (ValueError, KeyError, TypeError):
                        raise ConvtuiError(
                            f"{folder_set.files[0]}: a line without a task_id"
                        ) from None
    prefixes = {task_id.split("/")[0] for task_id in ids}
    suites = [suite for suite, prefix in SUITE_PREFIX.items() if prefix in prefixes]
    if not suites:
        raise ConvtuiError(f"the logs hold tasks of no known suite: {sorted(ids)[:3]}")
    catalog = load_catalog(",".join(suites), data)
    # Ids the catalog lacks are left out here: the import names the first one in its error.
    return {task_id: catalog.get(task_id) for task_id in ids if task_id in catalog}
