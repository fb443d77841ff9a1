"""Wiring for ``convtui sessions import DIR``: import the log sets of a folder in
ConvCodeWorld's static layout into the store (sessions/exchange/ccw_import.py ``import_logs``, which
``bench static --logs DIR`` calls too) and say what was imported."""

from __future__ import annotations

from pathlib import Path

from convtui.benchmarks.output import console, print_json
from convtui.core.plural import counted
from convtui.sessions import Store
from convtui.sessions.exchange.ccw_import import ImportedSet, import_logs


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
            f"{s.name}: {counted(s.sessions, 'session')}, {counted(s.turns, 'turn')} each at most, "
            f"{what} {db} "
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
