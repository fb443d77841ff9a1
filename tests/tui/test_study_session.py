"""`convtui session --study DB --annotator NAME`: the app opens the annotator's next
assignment, links the session it writes to that assignment, and once the session ends moves
them on (f10) to the next, until the study is done for them. Scripted model (the ``apps``
fixture's), real sandbox, a real SQLite study database in tmp_path."""

from __future__ import annotations

import asyncio
import shlex
from dataclasses import replace

import pytest
from rich.console import Console
from scripted import end_by
from support.studies import split_study
from textual.pilot import Pilot
from textual.widgets import Static
from tui_harness import (
    AppFactory,
    awaiting_feedback,
    notices,
    session_options,
    study_app,
    wait_until,
)

from convtui.sessions import Store
from convtui.sessions.studies.study_rows import assignments, load_study, start_assignment
from convtui.tui.controller import StudyRef
from convtui.tui.launch import MachineOptions, next_plan, session_config, study_ref
from convtui.tui.screens.assignments import AssignmentsModal
from convtui.tui.screens.session import SessionScreen


def listed(pilot: Pilot) -> str:
    """The assignments modal's table as text."""
    table = pilot.app.screen.query_one("#assignments-table", Static).content
    console = Console(width=120, no_color=True, force_terminal=False)
    with console.capture() as captured:
        console.print(table)
    return captured.get()


def held(apps: AppFactory, annotator: str) -> list[tuple[str, str | None, str]]:
    with Store.open(apps.db) as store:
        study = load_study(store)
        return [(r.task_id, r.session_id, r.state) for r in assignments(store, study.id, annotator)]


def test_an_annotator_is_moved_from_assignment_to_assignment_until_done(apps) -> None:
    split_study(apps.db, apps.model)
    (first, _, _), (second, _, _) = held(apps, "ana")
    app = study_app(apps, "ana")
    opened: list[tuple[str, str | None]] = []

    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot, 0)
        assert screen.plan.task.id == first
        assert not app.check_action("pick_task", ())  # the study gives the tasks
        assert not app.check_action("next_task", ())  # not before this one has ended
        opened.append((first, screen.controller.session_id))
        await end_by(pilot, "f9", "abandoned")
        await wait_until(
            pilot, lambda: any("f10 opens your next" in n for n in notices(pilot)), "the hint"
        )
        assert f"your next assignment, {second} (1 left)" in notices(pilot)[-1]
        # A double press opens the next assignment once (a second opening would find it
        # still pending and fail to start it): two presses land before either opening runs.
        app.action_next_task()
        app.action_next_task()
        await wait_until(
            pilot,
            lambda: (
                isinstance(pilot.app.screen, SessionScreen)
                and pilot.app.screen.plan.task.id == second
            ),
            "the next assignment",
        )
        screen = await awaiting_feedback(pilot, 0)
        assert not any("not an open assignment" in n for n in notices(pilot))
        opened.append((second, screen.controller.session_id))
        await end_by(pilot, "f8", "accepted")
        await wait_until(
            pilot, lambda: any("your last assignment" in n for n in notices(pilot)), "the end"
        )
        await pilot.press("f10")  # nothing left: the list, saying so
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, AssignmentsModal), "list")
        note = str(pilot.app.screen.query_one("#assignments-note", Static).render())
        assert "is done for ana" in note
        shown = listed(pilot)
        assert first in shown and second in shown and "abandoned" in shown

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await scenario(pilot)

    asyncio.run(main())
    # Each session is the one attached to its own assignment; ben's are untouched.
    assert held(apps, "ana") == [(task, sid, "done") for task, sid in opened]
    assert all(sid is None and state == "pending" for _t, sid, state in held(apps, "ben"))
    # As pasted, the command opens ana's assignments in this study's database, on what this
    # machine opened the app with (a host without a sandbox runs with --isolation none).
    app.launch = replace(app.launch, machine=MachineOptions(isolation="none"))
    said, command = app.farewell()[-1].split(": ", 1)
    assert said == "Your assignments go on with"
    assert shlex.split(command) == [
        "convtui",
        "session",
        "--study",
        str(apps.db.absolute()),
        "--annotator",
        "ana",
        "--isolation",
        "none",
    ]


def test_f4_lists_the_assignments_and_a_started_one_is_resumed(apps) -> None:
    split_study(apps.db, apps.model)
    (first, _, _), (second, _, _) = held(apps, "ben")
    with Store.open(apps.db) as store:
        ref, config, user = study_ref(store, "ben")
        started = start_assignment(store, ref.study_id, first, "ben", config, "human")
        plan = next_plan(store, apps.catalog, ref, config, user)
    # A started assignment comes up again, as its own session resumed.
    assert plan is not None and (plan.task.id, plan.resume_id) == (first, started)
    app = study_app(apps, "ben")

    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot, 0)
        assert screen.controller.session_id == started
        await pilot.press("f4")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, AssignmentsModal), "list")
        rows = [line.split() for line in listed(pilot).splitlines()]
        assert [first, "started"] == rows[1][1:3] and [second, "pending"] == rows[2][1:3]
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, SessionScreen), "back")

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await scenario(pilot)

    asyncio.run(main())
    assert held(apps, "ben")[0] == (first, started, "started")


def test_the_study_config_is_the_one_session_builds_from_the_same_options(apps) -> None:
    spec = split_study(apps.db, apps.model)
    options = session_options(
        spec.model,
        apps.db,
        feedback=spec.feedback,
        user=spec.user,
        turns=spec.turns,
        protocol=spec.protocol,
    )
    assert spec.config() == session_config(options, spec.user)
    assisted = replace(spec, user="assist:novice", simulator="mock:other.jsonl")
    assert assisted.config() == session_config(
        replace(options, user="assist:novice", simulator="mock:other.jsonl"), "assist:novice"
    )


def test_an_unknown_annotator_or_one_who_left_cannot_open_the_study(apps) -> None:
    split_study(apps.db, apps.model)
    with Store.open(apps.db) as store:
        with pytest.raises(Exception, match="has no annotator 'zed' \\(it has ana, ben\\)"):
            study_ref(store, "zed")
        store.db.execute("UPDATE study_annotators SET active = 0 WHERE name = 'ben'")
        store.db.conn.commit()
        with pytest.raises(Exception, match="ben has left study 'pilot'"):
            study_ref(store, "ben")
    assert StudyRef("x", "pilot", "ana").annotator == "ana"
