"""Two annotators who work offline in the terminal app (Pilot), each on their own copy of
the study database, merged back with `convtui sessions merge`: `convtui study report` on the
merged database equals the report of the same work done in the app on one host, and merging
a file again adds nothing. Scripted model, real sandbox, real SQLite files."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
from pathlib import Path

from scripted import end_by, ended
from support.cli import invoke
from support.studies import study_spec, write_study
from textual.pilot import Pilot
from tui_harness import AppFactory, awaiting_feedback, study_app, type_feedback, wait_until

from convtui.tui.screens.assignments import AssignmentsModal

TASKS = ("BigCodeBench/2", "BigCodeBench/3")


async def play_every_assignment(pilot: Pilot, annotator: str) -> None:
    """ana writes feedback after turn 0 and the budget ends her sessions; ben gives up on
    his at turn 0. Then f10, to the next, until none is left."""
    for _ in TASKS:
        await awaiting_feedback(pilot, 0)
        if annotator == "ana":
            await type_feedback(pilot, "return the dictionary sorted by mean")
            await pilot.press("ctrl+j")
            await ended(pilot, "exhausted")
        else:
            await end_by(pilot, "f9", "abandoned")
        await pilot.press("f10")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, AssignmentsModal), "the end")


def annotate(apps: AppFactory, annotator: str) -> None:
    app = study_app(apps, annotator)

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await play_every_assignment(pilot, annotator)

    asyncio.run(main())


def report(db: Path) -> dict:
    done = invoke("study", "report", "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    # The database's own path is the one thing two databases' reports may differ by.
    return json.loads(done.stdout.replace(json.dumps(str(db))[1:-1], "STUDY.db"))


def dump(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return list(conn.iterdump())


def test_offline_annotators_merged_report_as_the_same_work_on_one_host(
    apps: AppFactory, tmp_path: Path
) -> None:
    spec = study_spec(tasks=TASKS, model=apps.model, annotators=("ana", "ben"), turns=1)
    host = AppFactory(tmp_path / "host.db", apps.executor, apps.catalog, apps.model)
    copies = {
        name: AppFactory(tmp_path / f"{name}.db", apps.executor, apps.catalog, apps.model)
        for name in ("ana", "ben")
    }
    try:
        write_study(host.db, spec)
        write_study(apps.db, spec)  # the study database the annotators took copies of
        for factory in copies.values():
            shutil.copy(apps.db, factory.db)
        for name in ("ana", "ben"):
            annotate(host, name)  # on the host, one after the other
            annotate(copies[name], name)  # offline, each on their own copy
    finally:
        host.close()
        for factory in copies.values():
            factory.close()
    for name in ("ana", "ben"):  # each file as the annotator who recorded it hands it in
        merged = invoke(
            "sessions", "merge", str(copies[name].db), "--annotator", name, "--db", str(apps.db)
        )
        assert merged.returncode == 0, merged.stderr
    on_host, after_merge = report(host.db), report(apps.db)
    assert after_merge["progress"] == on_host["progress"]
    assert on_host["progress"]["done"] == 4  # every assignment, both annotators
    # Each play took seconds of its own; the merged copies' turns are all timed, as the host's.
    timed = [
        {name: (t["turns"], t["measured"]) for name, t in r.pop("time_per_turn").items()}
        for r in (on_host, after_merge)
    ]
    assert timed[0] == timed[1] == {"ana": (2, 2), "ben": (2, 2)}
    assert after_merge == on_host
    before = dump(apps.db)
    again = invoke(
        "sessions", "merge", str(copies["ana"].db), str(copies["ben"].db), "--db", str(apps.db)
    )
    assert again.returncode == 0, again.stderr
    assert dump(apps.db) == before
