"""The TUI tests' harness: configs, an app factory over real parts (a SQLite store in
tmp_path, the sandboxed executor, the embedded SmolLM2, the app's runner loop) and waiting
helpers. A plain module with its own name, so no other folder's conftest can shadow it."""

from __future__ import annotations

import asyncio
import os
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
