"""Apps driven by the scripted ``mock:FILE`` backend (core/models/mock.py): the model's
replies and the simulated user's words come from a JSONL script, so a test never depends on
what a model writes. Everything else is real: a SQLite store in tmp_path, the sandboxed
executor running the task's tests, the app's runner loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Static
from tui_harness import (
    HEADER,
    TASK,
    WRONG,
    AppFactory,
    awaiting_feedback,
    fenced,
    wait_until,
    write_script,
)
from tui_harness import session_screen as screen_of

from convtui.core.catalog.loaders import TaskCatalog
from convtui.core.execution.executor import Executor
from convtui.core.models.types import GenerationParams
from convtui.core.settings.config import SessionConfig
from convtui.core.settings.omega import parse_feedback
from convtui.tui import make_app
from convtui.tui.app import ConvTuiApp, Launch
from convtui.tui.controller import SessionPlan, UserMode
from convtui.tui.screens.session import SessionScreen

# Passes BigCodeBench/2's tests.
RIGHT = fenced(
    HEADER + "def task_func(LETTERS):\n"
    "    data = {k: [random.randint(0, 100) for _ in range(random.randint(1, 10))]"
    " for k in LETTERS}\n"
    "    return dict(sorted(data.items(), key=lambda kv: statistics.mean(kv[1]),"
    " reverse=True))\n"
)
# A reply scripted to stream over SLOW_S holds its phase for the whole test (the app's exit
# or a cancel ends it); SLOW's words arrive about one a second.
SLOW_S = 120.0
SLOW = WRONG + "\n\nThis returns an empty dictionary for now." + " Still thinking." * 60


class ScriptedApps(AppFactory):
    """Builds apps over one store file in ``tmp_path``, each playing a script of its own, and
    closes what they opened."""

    def __init__(self, tmp_path: Path, executor: Executor, catalog: TaskCatalog) -> None:
        super().__init__(tmp_path / "sessions.db", executor, catalog)
        self.tmp_path = tmp_path

    def app(
        self,
        generate: list[str],
        simulate: tuple[str, ...] = (),
        *,
        delay_s: float = 0.0,
        simulate_delay_s: float = 0.0,
        feedback: str = "CF,EF:full,VF:novice",
        user: UserMode = "human",
        turns: int = 10,
        task: str = TASK,
    ) -> ConvTuiApp:
        script = self.tmp_path / f"script-{len(self._opened)}.jsonl"
        spec = write_script(
            script, generate, simulate, delay_s=delay_s, simulate_delay_s=simulate_delay_s
        )
        [omega] = parse_feedback(feedback)
        config = SessionConfig(
            model=spec,
            feedback=omega,
            simulator=spec if omega.verbal != "none" else None,
            context="full",
            max_turns=turns,
            params=GenerationParams(max_tokens=256),
            simulator_params=GenerationParams(max_tokens=64),
        )
        services = self.services(spec, clock=lambda: 0)
        plan = SessionPlan(self.catalog.get(task), config, user)
        return make_app(services, Launch(self.catalog, config, user, plan))


def run(app: ConvTuiApp, scenario: Callable[[Pilot], object], size=(120, 35)) -> None:
    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await scenario(pilot)  # type: ignore[misc]

    asyncio.run(main())


def text_of(pilot: Pilot, selector: str) -> str:
    return str(screen_of(pilot).query_one(selector, Static).render())


async def streaming(pilot: Pilot) -> SessionScreen:
    """Turn 0's reply is streaming in (the script's slow reply holds it there)."""
    await wait_until(
        pilot,
        lambda: (
            getattr(pilot.app.screen, "phase", None) == "generating"
            and "streaming" in pilot.app.screen.query_one("#code-pane").border_title
        ),
        "the reply to stream",
    )
    return screen_of(pilot)


async def ended(pilot: Pilot, *phases: str) -> SessionScreen:
    await wait_until(
        pilot, lambda: getattr(pilot.app.screen, "phase", None) in phases, f"phase {phases}"
    )
    return screen_of(pilot)


async def end_by(pilot: Pilot, key: str, status: str) -> None:
    """End the session with ``key`` (f8 accepts, f9 gives up), saying yes to the question,
    and wait for the ``status`` it ends with."""
    await pilot.press(key)
    await confirm(pilot, "y")
    await ended(pilot, status)


async def confirm(pilot: Pilot, answer: str) -> None:
    from convtui.tui.screens.confirm import ConfirmModal

    await wait_until(pilot, lambda: isinstance(pilot.app.screen, ConfirmModal), "the question")
    await pilot.press(answer)
    await wait_until(
        pilot, lambda: not isinstance(pilot.app.screen, ConfirmModal), "the answer to land"
    )


async def given_up_after_two_turns(pilot: Pilot) -> SessionScreen:
    """Turn 0 goes on without words (ctrl+n), then the person gives up at turn 1 (f9,
    confirmed); the ended session's screen."""
    await awaiting_feedback(pilot, 0)
    await pilot.press("ctrl+n")
    await awaiting_feedback(pilot, 1)
    await pilot.press("f9")
    await confirm(pilot, "y")
    return await ended(pilot, "abandoned")
