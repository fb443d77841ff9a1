"""Bad input inside the app: a clear message on screen, and nothing recorded is lost."""

from __future__ import annotations

import asyncio
import socket
import sqlite3
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input
from tui_harness import (
    AppFactory,
    config_for,
    notices,
    phase_is,
    record_one_human_turn,
    session_options,
    wait_until,
)

from convtui.tui import make_app
from convtui.tui.launch import SessionOptions, plan_launch
from convtui.tui.screens.session import SessionScreen
from convtui.tui.screens.task_picker import TaskPickerScreen


def options(db: Path, model: str, **changes: object) -> SessionOptions:
    """The session's options with a small budget, as these tests start it."""
    small = dict(turns=3, context="full", max_tokens=96, jobs=1)
    return session_options(model, db, **{**small, **changes})


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_an_unknown_task_opens_the_picker_on_it_with_the_error_shown(apps: AppFactory):
    """Scripted: the session that opens at last plays the apps fixture's script."""
    services = apps.services()
    config = config_for(model=apps.model)
    launch = plan_launch(
        options(apps.db, apps.model, task="BigCodeBench/99999"),
        apps.catalog,
        services.store,
        config,
    )

    async def main() -> None:
        app = make_app(services, launch)
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(
                pilot, lambda: isinstance(pilot.app.screen, TaskPickerScreen), "the picker"
            )
            assert pilot.app.screen.query_one(Input).value == "BigCodeBench/99999"
            [notice] = notices(pilot)
            assert "unknown task 'BigCodeBench/99999'" in notice and "BigCodeBench/999" in notice
            pilot.app.screen.query_one(Input).value = "BigCodeBench/2"
            await pilot.pause()
            await pilot.press("enter")
            await wait_until(
                pilot, lambda: isinstance(pilot.app.screen, SessionScreen), "a session"
            )
            assert pilot.app.screen.plan.task.id == "BigCodeBench/2"
            pilot.app.screen.stop()

    asyncio.run(main())


@pytest.mark.slow
def test_an_unreachable_model_server_is_a_message_and_records_nothing(apps: AppFactory):
    url = f"http://127.0.0.1:{closed_port()}/v1"

    async def main() -> None:
        app = apps.app(model=url)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, phase_is(pilot, "failed"), "the model check to fail", 60)
            assert any("cannot reach the model server" in n for n in notices(pilot))
            status = str(pilot.app.screen.query_one("#status-line").render())
            assert "turn failed: ctrl+s runs it again" in status
            await pilot.press("f5")
            await wait_until(pilot, phase_is(pilot, "failed"), "the retry to fail", 60)

    asyncio.run(main())
    with sqlite3.connect(apps.db) as conn:
        assert conn.execute("SELECT count(*) FROM sessions").fetchone() == (0,)


@pytest.mark.slow
def test_an_unreachable_server_on_resume_keeps_every_recorded_turn(apps: AppFactory):
    """A session recorded on a scripted model (turns 0 and 1 fail a test each), resumed
    against a server that is down."""
    session_id = record_one_human_turn(apps, "Use statistics.mean.")
    with sqlite3.connect(apps.db) as conn:
        conn.execute(
            "UPDATE sessions SET config_json = replace(config_json, ?, ?)",
            (apps.model, f"http://127.0.0.1:{closed_port()}/v1"),
        )

    async def resumed(pilot: Pilot) -> None:
        await wait_until(pilot, phase_is(pilot, "failed"), "the model check to fail", 60)
        assert any("cannot reach the model server" in n for n in notices(pilot))

    services = apps.services()
    launch = plan_launch(
        options(apps.db, apps.model, resume=session_id),
        apps.catalog,
        services.store,
        config_for(model=apps.model),
    )

    async def main() -> None:
        # The resumed session runs under its recorded config: the server that is down.
        assert launch.plan.config.model.startswith("http://127.0.0.1:")
        from convtui.core.models.registry import open_backend
        from convtui.core.services import Models

        services.models = Models(open_backend(launch.plan.config.model), None)
        app = make_app(services, launch)
        async with app.run_test(size=(120, 40)) as pilot:
            await resumed(pilot)

    asyncio.run(main())
    with sqlite3.connect(apps.db) as conn:
        assert conn.execute("SELECT idx, verbal_feedback FROM turns").fetchall() == [
            (0, "Use statistics.mean.")
        ]
        assert conn.execute("SELECT status, turns_done FROM sessions").fetchone() == ("running", 1)


def test_the_chosen_theme_is_remembered_and_an_unknown_one_falls_back(apps, own_settings):
    async def choose(pilot: Pilot) -> None:
        pilot.app.theme = "textual-light"
        await pilot.pause()

    async def check(pilot: Pilot) -> None:
        await pilot.pause()
        assert pilot.app.theme == "textual-light"

    async def fallback(pilot: Pilot) -> None:
        await pilot.pause()
        assert pilot.app.theme == "textual-dark"
        assert any("unknown theme 'no-such-theme'" in n for n in notices(pilot))

    for scenario in (choose, check):
        services = apps.services()
        launch = plan_launch(
            options(apps.db, apps.model), apps.catalog, services.store, config_for(model=apps.model)
        )
        asyncio.run(_run(make_app(services, launch), scenario))
    assert '"theme": "textual-light"' in own_settings.read_text()
    own_settings.write_text('{"theme": "no-such-theme"}')
    services = apps.services()
    launch = plan_launch(
        options(apps.db, apps.model), apps.catalog, services.store, config_for(model=apps.model)
    )
    asyncio.run(_run(make_app(services, launch), fallback))


async def _run(app, scenario) -> None:
    async with app.run_test(size=(100, 30)) as pilot:
        await scenario(pilot)
