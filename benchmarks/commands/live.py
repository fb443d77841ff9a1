"""Wiring for ``convtui bench live``: build the run's config from the options, open the store,
the backends and the executor, check them before any work starts, then play the run under a
progress bar and say how it went."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace

from convtui.benchmarks.failures import failure_groups, failure_lines
from convtui.benchmarks.output import console, print_json, warn
from convtui.benchmarks.progress import follow_turns, progress_bar, sessions_task
from convtui.benchmarks.runs.lifecycle import open_run
from convtui.benchmarks.runs.live import (
    LiveResult,
    default_concurrency,
    live_run,
    run_live,
)
from convtui.benchmarks.settings import (
    ExecutorSettings,
    ModelSettings,
    ProtocolSettings,
    RunTarget,
    TaskSelection,
)
from convtui.core.catalog.tasks import Task
from convtui.core.errors import ConvtuiError
from convtui.core.execution.isolation import verdict_warning
from convtui.core.plural import counted
from convtui.core.services import ModelOptions, open_models
from convtui.core.settings.config import SessionConfig
from convtui.core.settings.omega import FeedbackConfig
from convtui.sessions import Store


def bench_live_command(
    selection: TaskSelection,
    models: ModelSettings,
    rules: ProtocolSettings,
    executor: ExecutorSettings,
    target: RunTarget,
) -> int:
    """Exit code 0 when every session was played, 1 when some failed on model errors."""
    config, omegas = rules.config(models)
    tasks = selection.tasks()
    options = LiveOptions(config, omegas, models.options(), executor, target, selection.key())
    result = execute_live(options, tasks)
    failures = failure_groups(target.db, [result.run_id]) if result.failed else []
    if target.as_json:
        print_json(
            {
                "run_id": result.run_id,
                "resumed": result.resumed,
                "sessions_played": result.sessions,
                "failed": result.failed,
                "failures": [g.to_json() for g in failures],
                "db": str(target.db),
            }
        )
    else:
        screen = console()
        screen.print(
            f"run {result.run_id}: {counted(result.sessions, 'session')} played"
            f"{', resumed' if result.resumed else ''}; {result.failed} failed on "
            f"model errors. Tables: convtui report --db {target.db}",
            soft_wrap=True,
        )
        for line in failure_lines(failures, target.db):
            screen.print(line, markup=False, highlight=False, soft_wrap=True)
    return 0 if result.failed == 0 else 1


@dataclass(frozen=True)
class LiveOptions:
    config: SessionConfig
    feedback: tuple[FeedbackConfig, ...]
    models: ModelOptions
    executor: ExecutorSettings
    target: RunTarget
    selection: str  # TaskSelection.key(): with the config, what makes the run the same run


def execute_live(options: LiveOptions, tasks: Sequence[Task]) -> LiveResult:
    if not tasks:
        raise ConvtuiError("the task selection is empty: check --ids, --lib and --stdlib-only")
    return asyncio.run(_execute(options, tasks))


async def _execute(options: LiveOptions, tasks: Sequence[Task]) -> LiveResult:
    config = options.config
    models = open_models(config, options.models)
    # simulator_for left config.simulator None when no configuration has verbal feedback.
    simulator = models.user if config.simulator else None
    try:
        await models.check()
        with options.executor.open() as executor:
            options = _with_isolation(options, executor.isolation.label)
            with Store.open(options.target.db) as store:
                new = live_run(options.config, options.feedback, options.selection, tasks)
                opened = open_run(store, new)
                return await _play(
                    store,
                    opened.run_id,
                    opened.resumed,
                    options,
                    tasks,
                    executor,
                    models.coder,
                    simulator,
                )
    finally:
        await models.aclose()


def _with_isolation(options: LiveOptions, label: str) -> LiveOptions:
    """Record the isolation in force in the run's config, and say so when it changes
    verdicts (isolation.verdict_warning)."""
    warning = verdict_warning(label)
    if warning is not None:
        warn(warning)
    return replace(options, config=replace(options.config, isolation=label))


async def _play(store, run_id, resumed, options, tasks, executor, backend, simulator):
    sessions = store.run_sessions(run_id)
    with progress_bar("sessions", quiet=options.target.as_json, counts_solved=True) as bar:
        what = "resuming run" if resumed else "run"
        tick = sessions_task(bar, f"{what} {run_id}", sessions)
        progress = follow_turns(bar, tick)
        result = await run_live(
            store,
            run_id,
            options.config,
            tasks,
            executor,
            backend,
            simulator,
            options.target.concurrency or default_concurrency(options.config.model),
            progress,
        )
    return LiveResult(result.run_id, resumed, result.sessions, result.failed)
