"""Wiring for ``convtui bench live``: build the run's config from the options, open the store,
the backends and the executor, check them before any work starts, then play the run under a
progress bar and say how it went."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from convtui.benchmarks.lifecycle import open_run
from convtui.benchmarks.live import LiveResult, default_concurrency, live_run, run_live
from convtui.benchmarks.live import Progress as TurnProgress
from convtui.benchmarks.output import console, print_json, warn
from convtui.core.errors import ConvtuiError
from convtui.core.extract import ExtractMode
from convtui.core.feedback import PartialRule
from convtui.core.isolation import verdict_warning
from convtui.core.loaders import load_catalog
from convtui.core.omega import FeedbackConfig, parse_feedback
from convtui.core.protocol import build_config, simulator_for
from convtui.core.services import ModelOptions, open_executor, open_models
from convtui.core.session import ContextMode, ProtocolName, SessionConfig
from convtui.core.tasks import Task
from convtui.sessions import Store


def bench_live_command(
    *,
    protocol: ProtocolName,
    model: str,
    model_name: str | None,
    chat_template: Path | None,
    simulator: str | None,
    feedback: str,
    turns: int,
    context: ContextMode | None,
    partial_rule: PartialRule | None,
    extract: ExtractMode | None,
    max_tokens: int | None,
    db: Path,
    suite: str,
    data: Path | None,
    ids: str | None,
    lib: list[str] | None,
    stdlib_only: bool,
    concurrency: int | None,
    python: str | None,
    jobs: int | None,
    isolation: str,
    as_json: bool,
) -> int:
    """Exit code 0 when every session was played, 1 when some failed on model errors."""
    omegas = parse_feedback(feedback)
    config = build_config(
        protocol,
        model=model,
        feedback=omegas[0],
        simulator=simulator_for(model, simulator, omegas),
        turns=turns,
        context=context,
        partial_rule=partial_rule,
        extract=extract,
        max_tokens=max_tokens,
    )
    tasks = load_catalog(suite, data).select(ids, lib, stdlib_only)
    selection = f"suite={suite};ids={ids or ''};lib={','.join(lib or [])};stdlib_only={stdlib_only}"
    options = LiveOptions(
        config,
        omegas,
        ModelOptions(model_name, chat_template),
        db,
        selection,
        concurrency or default_concurrency(model),
        jobs,
        python,
        isolation,
        quiet=as_json,
    )
    result = execute_live(options, tasks)
    if as_json:
        print_json(
            {
                "run_id": result.run_id,
                "resumed": result.resumed,
                "sessions_played": result.sessions,
                "failed": result.failed,
                "db": str(db),
            }
        )
    else:
        console().print(
            f"run {result.run_id}: {result.sessions} session(s) played"
            f"{', resumed' if result.resumed else ''}; {result.failed} failed on "
            f"model errors. Tables: convtui report --db {db}"
        )
    return 0 if result.failed == 0 else 1


@dataclass(frozen=True)
class LiveOptions:
    config: SessionConfig
    feedback: tuple[FeedbackConfig, ...]
    models: ModelOptions
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
    models = open_models(config, options.models)
    # simulator_for left config.simulator None when no configuration has verbal feedback.
    simulator = models.user if config.simulator else None
    try:
        await models.check()
        executor = open_executor(
            python=options.python, jobs=options.jobs, isolation=options.isolation
        )
        with executor:
            options = _with_isolation(options, executor.isolation.label)
            with Store.open(options.db) as store:
                labels = [f.label for f in options.feedback]
                new = live_run(options.config, labels, options.selection, tasks)
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
    err = console(stderr=True)
    disable = options.quiet or os.environ.get("CI") == "true"
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("sessions"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err,
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
