"""Wiring for ``convtui bench live``: open the store, the backends and the executor, check
them before any work starts, then play the run under a progress bar."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from convtui.benchmarks.live import LiveResult, plan_run, run_live
from convtui.benchmarks.live import Progress as TurnProgress
from convtui.core.errors import ConvtuiError
from convtui.core.executor import Executor
from convtui.core.isolation import verdict_warning
from convtui.core.models.registry import open_backend
from convtui.core.omega import FeedbackConfig
from convtui.core.session import SessionConfig
from convtui.core.tasks import Task
from convtui.sessions import Store


@dataclass(frozen=True)
class LiveOptions:
    config: SessionConfig
    feedback: tuple[FeedbackConfig, ...]
    model_name: str | None
    db: Path
    selection: str
    concurrency: int
    jobs: int | None
    python: str | None
    isolation: str
    quiet: bool


def execute_live(options: LiveOptions, tasks: Sequence[Task]) -> LiveResult:
    if not tasks:
        raise ConvtuiError("the task selection is empty: check --ids, --lib and --stdlib-only")
    return asyncio.run(_execute(options, tasks))


async def _execute(options: LiveOptions, tasks: Sequence[Task]) -> LiveResult:
    config = options.config
    backend = open_backend(config.model, model_name=options.model_name)
    simulator = None
    needs_simulator = any(f.verbal != "none" for f in options.feedback)
    try:
        await backend.check()
        if needs_simulator and config.simulator:
            simulator = (
                backend if config.simulator == config.model else open_backend(config.simulator)
            )
            if simulator is not backend:
                await simulator.check()
        with Executor(
            python=options.python, jobs=options.jobs, isolation=options.isolation
        ) as executor:
            if executor.isolation.level == "none" and options.isolation != "none":
                raise ConvtuiError(
                    "no sandbox is available here (bubblewrap, namespaces or Landlock): "
                    "install convtui's exec extra (it bundles bubblewrap) or pass "
                    "--isolation none to run model code unconfined"
                )
            options = _with_isolation(options, executor.isolation.label)
            with Store.open(options.db) as store:
                labels = [f.label for f in options.feedback]
                run_id, resumed = plan_run(store, options.config, labels, options.selection, tasks)
                return await _play(
                    store, run_id, resumed, options, tasks, executor, backend, simulator
                )
    finally:
        await backend.aclose()
        if simulator is not None and simulator is not backend:
            await simulator.aclose()


def _with_isolation(options: LiveOptions, label: str) -> LiveOptions:
    """Record the isolation in force in the run's config, and say so when it changes
    verdicts (isolation.verdict_warning)."""
    warning = verdict_warning(label)
    if warning is not None:
        Console(stderr=True, highlight=False).print(
            Text.assemble(("warning: ", "bold yellow"), warning), soft_wrap=True
        )
    return replace(options, config=replace(options.config, isolation=label))


async def _play(store, run_id, resumed, options, tasks, executor, backend, simulator):
    sessions = store.run_sessions(run_id)
    console = Console(stderr=True)
    disable = options.quiet or os.environ.get("CI") == "true"
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("sessions"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=disable,
    ) as bar:
        what = "resuming run" if resumed else "run"
        tick = bar.add_task(
            f"{what} {run_id}", total=len(sessions), completed=sum(s.finished for s in sessions)
        )

        def progress(event: TurnProgress) -> None:
            if event.turn is not None:
                mark = "✓" if event.turn.passed else "✗"
                bar.update(
                    tick,
                    description=f"{event.task_id} {event.feedback} turn {event.turn.idx} {mark}",
                )
            else:
                bar.advance(tick, 1)

        result = await run_live(
            store,
            run_id,
            options.config,
            tasks,
            executor,
            backend,
            simulator,
            options.concurrency,
            progress,
        )
    return LiveResult(result.run_id, resumed, result.sessions, result.failed)
