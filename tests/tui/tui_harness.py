"""The TUI tests' harness: configs, an app factory over real parts (a SQLite store in
tmp_path, the sandboxed executor, the app's runner loop, and a model) and waiting helpers. A
plain module with its own name, so no other folder's conftest can shadow it.

The model is scripted (``mock:FILE``, core/models/mock.py) unless a test asks for the real
one: what a real model writes changes with the llama.cpp build, so a test that checks code or
test outcomes scripts them. The tests on the embedded SmolLM2 (``REAL_MODEL``) check only
what no model can change: a turn recorded, its calls journaled."""

from __future__ import annotations

import asyncio
import io
import json
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from textual.app import App
from textual.command import CommandInput, CommandList, CommandPalette
from textual.pilot import Pilot

from convtui.core.catalog.loaders import TaskCatalog
from convtui.core.execution.executor import Executor
from convtui.core.models.registry import open_backend
from convtui.core.models.types import GenerationParams
from convtui.core.services import Models
from convtui.core.settings.config import SessionConfig
from convtui.core.settings.omega import FeedbackChoice, parse_feedback
from convtui.sessions import Store
from convtui.tui import make_app
from convtui.tui.app import ConvTuiApp, Launch
from convtui.tui.controller import AppServices, SessionPlan, UserMode
from convtui.tui.launch import SessionOptions
from convtui.tui.runner import AsyncRunner
from convtui.tui.screens.session import SessionScreen
from convtui.tui.widgets.composer import FeedbackComposer

REPO_ROOT = Path(__file__).resolve().parents[2]

# BigCodeBench/2 needs only the standard library. The scripted replies below are its code.
TASK = "BigCodeBench/2"
REAL_MODEL = "local:smollm2"
MODEL = REAL_MODEL  # the default of config_for and AppFactory when no script is given


def fenced(code: str) -> str:
    """A reply as a chat model writes it: the code in a python fence."""
    return f"```python\n{code}```"


HEADER = "import random\nimport statistics\n"
# Fails only test_case_5 (no letter is a key): tests 4/5, "Tests · ✗".
WRONG = fenced(HEADER + "def task_func(LETTERS):\n    return {}\n")
# Every letter, but sorted by ascending mean: fails only test_case_4, 4/5.
ASCENDING = fenced(
    HEADER + "def task_func(LETTERS):\n    return {k: [i] for i, k in enumerate(LETTERS)}\n"
)
# Does not compile (an unclosed bracket).
BROKEN = fenced("def task_func(LETTERS):\n    return {k: [] for k in LETTERS\n")
# What the scripted novice says; it copies nothing from the ground truth.
NOVICE_SAYS = "Every letter should be a key, and sort by the mean, highest first."


def right(catalog: TaskCatalog, task: str = TASK) -> str:
    """A reply that passes every test: the task's ground truth."""
    return fenced(catalog.get(task).ground_truth)


class Clock:
    """The app's clock (AppServices.clock) or a turn timer's, set by the test."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def write_script(
    path: Path,
    generate: Sequence[str],
    simulate: Sequence[str] = (),
    *,
    delay_s: float = 0.0,
    simulate_delay_s: float | None = None,
) -> str:
    """Write a ``mock:`` script (turn i gets ``generate[i]``, the last one repeating; the
    simulator's answers come in order) and return its spec. ``delay_s`` is how long each
    reply takes to stream in (``simulate_delay_s`` for the simulator's, if different)."""
    simulate_s = delay_s if simulate_delay_s is None else simulate_delay_s
    lines = [
        json.dumps({"purpose": purpose, "text": text, "delay_s": seconds})
        for purpose, texts, seconds in (
            ("generate", generate, delay_s),
            ("simulate", simulate, simulate_s),
        )
        for text in texts
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f"mock:{path}"


def config_for(
    feedback: str = "CF,EF:full,VF:novice", *, turns: int = 3, model: str = MODEL
) -> SessionConfig:
    params = GenerationParams(max_tokens=96)
    [omega] = parse_feedback(feedback)
    return SessionConfig(
        model=model,
        feedback=omega,
        # The app's simulator is its model (AppServices.models.simulator is None): say so.
        simulator=model if omega.verbal != "none" else None,
        context="full",
        max_turns=turns,
        params=params,
        simulator_params=GenerationParams(max_tokens=48),
    )


class AppFactory:
    """Builds apps over one store file; closes what it opened (the executor is shared).
    ``model`` is the spec every app gets unless it names another."""

    def __init__(
        self, db: Path, executor: Executor, catalog: TaskCatalog, model: str = MODEL
    ) -> None:
        self.db = db
        self.executor = executor
        self.catalog = catalog
        self.model = model
        self._opened: list[AppServices] = []

    def script(
        self,
        generate: Sequence[str],
        simulate: Sequence[str] = (),
        *,
        delay_s: float = 0.0,
        name: str = "script.jsonl",
    ) -> str:
        """A ``mock:`` spec for a script written beside the store (see ``write_script``)."""
        return write_script(self.db.parent / name, generate, simulate, delay_s=delay_s)

    def services(
        self, model: str | None = None, clock: Callable[[], float] | None = None
    ) -> AppServices:
        backend = open_backend(model or self.model)
        services = AppServices(
            Store.open(self.db), Models(backend, None), self.executor, AsyncRunner()
        )
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
        model: str | None = None,
        resume: str | None = None,
        clock: Callable[[], float] | None = None,
        annotator: str | None = None,
    ) -> ConvTuiApp:
        model = model or self.model
        services = self.services(model, clock)
        config = config_for(feedback, turns=turns, model=model)
        plan = SessionPlan(
            self.catalog.get(task), config, user, resume_id=resume, annotator=annotator
        )
        if resume is not None:
            from convtui.tui.launch import resumed_plan

            plan = resumed_plan(services.store, self.catalog, resume)
        return make_app(services, Launch(self.catalog, config, user, plan, annotator=annotator))

    def store(self) -> Store:
        store = Store.open(self.db)
        self._opened.append(AppServices(store, None, None, None))  # type: ignore[arg-type]
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


async def palette_search(pilot: Pilot, typed: str) -> Callable[[], list[str]]:
    """Open the palette and put ``typed`` in its input, as if typed (the input's change starts
    the search; a key per letter is slow); returns the titles of its hits as they stand."""
    app = pilot.app
    await pilot.press("ctrl+p")
    await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
    app.screen.query_one(CommandInput).value = typed

    def titles() -> list[str]:
        hits = app.screen.query_one(CommandList)
        return [str(hits.get_option_at_index(i).hit.text) for i in range(hits.option_count)]  # type: ignore[attr-defined]

    return titles


async def close_palette(pilot: Pilot) -> None:
    """Escape from the palette and wait until it has closed."""
    await pilot.press("escape")
    await wait_until(pilot, lambda: not isinstance(pilot.app.screen, CommandPalette), "it to close")


async def from_palette(
    pilot: Pilot, typed: str, title: str, chosen: Callable[[str], bool] | None = None
) -> None:
    """Open the palette, type ``typed`` and run the hit titled ``title`` (or the first for
    which ``chosen`` holds)."""
    app = pilot.app
    titles = await palette_search(pilot, typed)
    matches = chosen or (lambda text: text == title)

    def index() -> int | None:
        return next((i for i, text in enumerate(titles()) if matches(text)), None)

    await wait_until(pilot, lambda: index() is not None, f"the command {title!r}")
    app.screen.query_one(CommandList).highlighted = index()
    await pilot.press("enter")
    await wait_until(pilot, lambda: not isinstance(app.screen, CommandPalette), "it to run")


def phase_is(pilot: Pilot, *phases: str) -> Callable[[], bool]:
    return lambda: getattr(pilot.app.screen, "phase", None) in phases


def rows(db: Path, sql: str, *args: object) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql, args).fetchall()


def screen_text(app: App) -> list[str]:
    """The screen as drawn, one string per row: what a person reads, modals over what they
    cover (the same composition as ``App.export_screenshot``, as plain text)."""
    width, height = app.size
    console = Console(
        width=width, height=height, file=io.StringIO(), record=True, legacy_windows=False
    )
    console.print(
        app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    )
    return console.export_text().splitlines()


def notices(pilot: Pilot) -> list[str]:
    return [n.message for n in pilot.app._notifications]


def session_screen(pilot: Pilot) -> SessionScreen:
    screen = pilot.app.screen
    assert isinstance(screen, SessionScreen), type(screen).__name__
    return screen


async def awaiting_feedback(pilot: Pilot, turn: int = 0) -> SessionScreen:
    """Turn ``turn`` waits for feedback and the composer has the focus the app gives it then
    (``focus()`` is applied later, by a callback: a key pressed before it lands went to the
    pane a test had focused, then the composer took the focus, and the key's effect never
    came)."""

    def settled() -> bool:
        screen = pilot.app.screen
        if not (
            getattr(screen, "phase", None) == "awaiting_feedback"
            and screen.live is not None
            and screen.live.idx == turn
            and screen.live.result is not None
        ):
            return False
        composer = screen.query_one(FeedbackComposer)
        return screen.focused is composer or not composer.display

    await wait_until(pilot, settled, f"turn {turn} to wait for feedback")
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


def session_options(model: str, db: Path, **given: Any) -> SessionOptions:
    """``convtui session``'s options as the command line leaves them when only ``given``
    (and the model and database) are named."""
    defaults: dict[str, Any] = dict(
        task=None,
        resume=None,
        model_name=None,
        simulator=None,
        feedback="CF,EF:full,VF:novice",
        user="human",
        turns=2,
        context=None,
        max_tokens=None,
        python=None,
        jobs=None,
        isolation="auto",
    )
    options = {**defaults, **given}
    options["feedback"] = FeedbackChoice.parse(options["feedback"])  # as the option parses it
    return SessionOptions(model=model, db=db, **options)


def study_app(apps: AppFactory, annotator: str):
    """The app of ``session --study`` for ``annotator``, opened on their next assignment of
    the study in ``apps``' database."""
    from convtui.tui import make_app
    from convtui.tui.app import Launch
    from convtui.tui.launch import next_plan, study_ref
    from convtui.tui.study_app import StudyApp

    services = apps.services()
    ref, config, user = study_ref(services.store, annotator)
    plan = next_plan(services.store, apps.catalog, ref, config, user)
    assert plan is not None
    app = make_app(
        services, Launch(apps.catalog, config, user, plan, annotator=annotator, study=ref)
    )
    assert isinstance(app, StudyApp)
    return app
