"""The TUI tests' harness: configs, an app factory over real parts (a SQLite store in
tmp_path, the sandboxed executor, the embedded SmolLM2, the app's runner loop) and waiting
helpers. A plain module with its own name, so no other folder's conftest can shadow it."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot

from convtui.core.executor import Executor
from convtui.core.loaders import TaskCatalog
from convtui.core.models.registry import open_backend
from convtui.core.models.types import GenerationParams
from convtui.core.omega import parse_feedback
from convtui.core.session import SessionConfig
from convtui.sessions import Store
from convtui.tui.app import ConvTuiApp, Launch, make_app
from convtui.tui.controller import Services, SessionPlan, UserMode
from convtui.tui.runner import AsyncRunner
from convtui.tui.screens.session import SessionScreen
from convtui.tui.widgets.composer import FeedbackComposer

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = Path(
    os.environ.get("CONVTUI_DATA_DIR") or REPO_ROOT.parent / "shared" / "data"
).resolve()

# BigCodeBench/2 needs only the standard library and SmolLM2 never solves it, so every turn
# fails its tests and asks for feedback.
TASK = "BigCodeBench/2"
MODEL = "local:smollm2"


def config_for(
    feedback: str = "CF,EF:full,VF:novice", *, turns: int = 3, model: str = MODEL
) -> SessionConfig:
    params = GenerationParams(max_tokens=96)
    [omega] = parse_feedback(feedback)
    return SessionConfig(
        model=model,
        feedback=omega,
        simulator=MODEL if omega.verbal != "none" else None,
        context="full",
        max_turns=turns,
        params=params,
        simulator_params=GenerationParams(max_tokens=48),
    )


class AppFactory:
    """Builds apps over one store file; closes what it opened (the executor is shared)."""

    def __init__(self, db: Path, executor: Executor, catalog: TaskCatalog) -> None:
        self.db = db
        self.executor = executor
        self.catalog = catalog
        self._opened: list[Services] = []

    def services(self, model: str = MODEL, clock: Callable[[], float] | None = None) -> Services:
        services = Services(Store.open(self.db), open_backend(model), self.executor, AsyncRunner())
        if clock is not None:
            services.clock = clock
        self._opened.append(services)
        return services

    def app(
        self,
        task: str = TASK,
        *,
        feedback: str = "CF,EF:full,VF:novice",
        user: UserMode = "human",
        turns: int = 3,
        model: str = MODEL,
        resume: str | None = None,
        clock: Callable[[], float] | None = None,
    ) -> ConvTuiApp:
        services = self.services(model, clock)
        config = config_for(feedback, turns=turns, model=model)
        plan = SessionPlan(self.catalog.get(task), config, user, resume_id=resume)
        if resume is not None:
            from convtui.tui.launch import resumed_plan

            plan = resumed_plan(services.store, self.catalog, resume)
        return make_app(services, Launch(self.catalog, config, user, plan))

    def store(self) -> Store:
        store = Store.open(self.db)
        self._opened.append(Services(store, None, None, None))  # type: ignore[arg-type]
        return store

    def close(self) -> None:
        for services in self._opened:
            if services.runner is not None:
                services.runner.close()
            services.store.close()


async def wait_until(
    pilot: Pilot, condition: Callable[[], bool], what: str, timeout_s: float = 180.0
) -> None:
    """Let the app run until ``condition`` holds; fail naming ``what`` after the deadline."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not condition():
        if loop.time() > deadline:
            phase = getattr(pilot.app.screen, "phase", "?")
            raise AssertionError(f"timed out waiting for {what} (phase {phase})")
        await pilot.pause(0.05)


def phase_is(pilot: Pilot, *phases: str) -> Callable[[], bool]:
    return lambda: getattr(pilot.app.screen, "phase", None) in phases


def rows(db: Path, sql: str, *args: object) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql, args).fetchall()


def notices(pilot: Pilot) -> list[str]:
    return [n.message for n in pilot.app._notifications]


def session_screen(pilot: Pilot) -> SessionScreen:
    screen = pilot.app.screen
    assert isinstance(screen, SessionScreen), type(screen).__name__
    return screen


async def awaiting_feedback(pilot: Pilot, turn: int = 0) -> SessionScreen:
    await wait_until(
        pilot,
        lambda: (
            getattr(pilot.app.screen, "phase", None) == "awaiting_feedback"
            and pilot.app.screen.live is not None
            and pilot.app.screen.live.idx == turn
            and pilot.app.screen.live.result is not None
        ),
        f"turn {turn} to wait for feedback",
    )
    return session_screen(pilot)


async def type_feedback(pilot: Pilot, text: str) -> None:
    composer = pilot.app.screen.query_one(FeedbackComposer)
    composer.focus()
    composer.insert(text)
    await pilot.pause()


def play(apps: AppFactory, scenario, size: tuple[int, int] = (120, 40), hook=None, **app_args):
    """Run ``scenario(pilot)`` in a fresh app; returns the app after it closed."""

    async def main():
        app = apps.app(**app_args)
        async with app.run_test(size=size, message_hook=hook) as pilot:
            await scenario(pilot)
        return app

    return asyncio.run(main())


def record_one_human_turn(apps: AppFactory, text: str) -> str:
    """Play turn 0 with ``text`` as the person's feedback, up to turn 1 waiting for more;
    returns the session's id."""

    async def record(pilot: Pilot) -> None:
        await awaiting_feedback(pilot)
        await type_feedback(pilot, text)
        await pilot.press("ctrl+j")
        await awaiting_feedback(pilot, turn=1)

    play(apps, record)
    [(session_id,)] = rows(apps.db, "SELECT id FROM sessions")
    return session_id
