"""Wiring for ``convtui bench static``: find the log sets in ``--logs`` (a convtui database, or
a folder in ConvCodeWorld's layout, imported first), bring their reference sessions into the
results database, then replay each set against the target model under one progress bar."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from convtui.benchmarks.failures import failure_groups, failure_lines
from convtui.benchmarks.output import console, print_json, warn
from convtui.benchmarks.progress import follow_turns, progress_bar, sessions_task
from convtui.benchmarks.runs.lifecycle import open_run
from convtui.benchmarks.runs.live import LiveResult, default_concurrency, run_live
from convtui.benchmarks.runs.static import ReplaySettings, replay_config, static_run
from convtui.benchmarks.settings import ExecutorSettings, ModelSettings, RunTarget, TaskSelection
from convtui.core.catalog.loaders import SUITE_PREFIX, load_catalog
from convtui.core.catalog.tasks import Task
from convtui.core.errors import ConvtuiError
from convtui.core.execution.backend import ExecutionBackend
from convtui.core.execution.isolation import verdict_warning
from convtui.core.models.base import ModelBackend
from convtui.core.plural import counted
from convtui.core.services import open_models
from convtui.core.settings.config import ContextMode, ProtocolName, SessionConfig
from convtui.core.settings.omega import FeedbackChoice
from convtui.sessions import Store
from convtui.sessions.exchange.ccw_import import import_logs
from convtui.sessions.merging.copying import copy_sessions
from convtui.sessions.reading.log_sets import LogSet, LogSetFilter, find_log_sets

_SQLITE_MAGIC = b"SQLite format 3\x00"


@dataclass(frozen=True)
class StaticOptions:
    """``bench static``'s options. The target plays under the reference's protocol, turns and
    context unless these name others; ``wanted`` picks the log sets, narrowed to those under
    the ``feedback`` configurations and to the tasks ``selection.ids`` names."""

    logs: Path
    models: ModelSettings
    wanted: LogSetFilter
    selection: TaskSelection
    executor: ExecutorSettings
    target: RunTarget
    protocol: ProtocolName | None = None
    turns: int | None = None
    context: ContextMode | None = None
    feedback: Sequence[FeedbackChoice] = ()


@dataclass(frozen=True)
class ReplayedSet:
    log_set: LogSet
    run_id: str
    resumed: bool
    sessions: int
    failed: int


def bench_static_command(options: StaticOptions) -> int:
    """Exit code 0 when every session was replayed, 1 when some failed on model errors."""
    wanted = _wanted(options)
    results = asyncio.run(_execute(replace(options, wanted=wanted)))
    db = options.target.db
    failures = failure_groups(db, [r.run_id for r in results if r.failed])
    if options.target.as_json:
        print_json(
            {
                "db": str(options.target.db),
                "runs": [
                    {
                        "run_id": r.run_id,
                        "log_set": r.log_set.name,
                        "reference_model": r.log_set.model,
                        "feedback": r.log_set.feedback,
                        "references": len(r.log_set.sessions),
                        "resumed": r.resumed,
                        "sessions_played": r.sessions,
                        "failed": r.failed,
                    }
                    for r in results
                ],
                "failures": [g.to_json() for g in failures],
            }
        )
    else:
        screen = console()
        for r in results:
            screen.print(
                f"run {r.run_id}: replayed {r.log_set.name} "
                f"({counted(len(r.log_set.sessions), 'task')}); "
                f"{counted(r.sessions, 'session')} played{', resumed' if r.resumed else ''}; "
                f"{r.failed} failed on model errors",
                soft_wrap=True,
            )
        for line in failure_lines(failures, db):
            screen.print(line, markup=False, highlight=False, soft_wrap=True)
        screen.print(f"Tables: convtui report --db {db}", soft_wrap=True)
    return 0 if all(r.failed == 0 for r in results) else 1


def _wanted(options: StaticOptions) -> LogSetFilter:
    """The log-set filter, with the Ω labels ``--feedback`` names and the tasks of ``--ids``
    (across the suites: ``13`` is BigCodeBench/13)."""
    labels = tuple(label for choice in options.feedback for label in choice.labels)
    ids = options.selection.ids
    task_ids = frozenset(t.id for t in options.selection.tasks()) if ids else None
    return replace(options.wanted, feedback=labels, task_ids=task_ids)


def _replay_settings(options: StaticOptions) -> ReplaySettings:
    models = options.models
    return ReplaySettings(
        models.model, options.protocol, options.turns, options.context, models.max_tokens
    )


async def _execute(options: StaticOptions) -> list[ReplayedSet]:
    with Store.open(options.target.db) as store:
        return await replay_log_sets(store, options, _log_sets(options, store))


async def replay_log_sets(
    store: Store, options: StaticOptions, log_sets: Sequence[LogSet]
) -> list[ReplayedSet]:
    """Replay ``log_sets`` (their reference sessions in ``store``) against ``options``'
    model, each as a static run recorded in ``store``: a run found again plays only what it
    had not finished. ``options.logs`` is where the sets came from, as the runs record it;
    its filters are not read here (``convtui study report`` chooses its sets itself)."""
    configs = [replay_config(s, _replay_settings(options)) for s in log_sets]
    tasks = _tasks(log_sets, options.selection.data)
    models = open_models(configs[0], options.models.options())
    try:
        await models.check()
        with options.executor.open() as executor:
            warning = verdict_warning(executor.isolation.label)
            if warning is not None:
                warn(warning)
            configs = [replace(c, isolation=executor.isolation.label) for c in configs]
            return await _play_all(store, options, log_sets, configs, tasks, executor, models.coder)
    finally:
        await models.aclose()


def _log_sets(options: StaticOptions, store: Store) -> list[LogSet]:
    """The log sets to replay, their reference sessions present in ``store``."""
    logs = options.logs
    if not logs.exists():
        raise ConvtuiError(
            f"--logs {logs} does not exist: give a convtui database (e.g. live.db) or a folder "
            "in ConvCodeWorld's static layout"
        )
    if logs.is_dir():
        # ConvCodeWorld's layout: imported into --db first (once), then replayed from there.
        import_logs(store, logs, options.selection.data)
        found = find_log_sets(
            store, replace(options.wanted, origin=f"imported from {logs.resolve()}")
        )
        return _found_or_explain(found, logs)
    with logs.open("rb") as handle:
        if handle.read(len(_SQLITE_MAGIC)) != _SQLITE_MAGIC:
            raise ConvtuiError(
                f"--logs {logs} is not a SQLite database: give the --db file a bench live or "
                "session run wrote"
            )
    if options.target.db.exists() and logs.samefile(options.target.db):
        found = find_log_sets(store, options.wanted)
    else:
        with Store.open(logs) as source:
            found = find_log_sets(source, options.wanted)
            copy_sessions(source, store, [row for s in found for row in s.sessions])
    return _found_or_explain(found, logs)


def _found_or_explain(found: list[LogSet], logs: Path) -> list[LogSet]:
    # CodeIF-Bench conversations are rounds of instructions, not feedback turns on one task's
    # tests: bench codeif --logs replays them.
    kept = [
        replace(s, sessions=tuple(r for r in s.sessions if not r.task_id.startswith("CodeIF/")))
        for s in found
    ]
    if found and not any(s.sessions for s in kept):
        raise ConvtuiError(
            f"the log sets in {logs} hold CodeIF-Bench conversations only: replay them with "
            f"convtui bench codeif --logs {logs} --model M --db OUT.db"
        )
    found = [s for s in kept if s.sessions]
    if not found:
        raise ConvtuiError(
            f"no log set in {logs} matches: a log set is the finished sessions of one model "
            "under one feedback configuration; check --run, --ref-model, --user, --feedback "
            "and --ids (convtui sessions list --db "
            f"{logs} shows what is there)"
        )
    return found


def _tasks(log_sets: Sequence[LogSet], data: Path | None) -> dict[str, Task]:
    ids = {row.task_id for s in log_sets for row in s.sessions}
    prefixes = {task_id.split("/")[0] for task_id in ids}
    suites = [suite for suite, prefix in SUITE_PREFIX.items() if prefix in prefixes]
    if not suites:
        raise ConvtuiError(f"the log sets hold tasks of no known suite: {sorted(ids)[:3]}")
    catalog = load_catalog(",".join(suites), data)
    return {task_id: catalog.get(task_id) for task_id in ids}


async def _play_all(
    store: Store,
    options: StaticOptions,
    log_sets: Sequence[LogSet],
    configs: Sequence[SessionConfig],
    tasks: dict[str, Task],
    executor: ExecutionBackend,
    backend: ModelBackend,
) -> list[ReplayedSet]:
    source = str(options.logs.resolve())
    planned = [
        (log_set, config, open_run(store, static_run(log_set, config, source)))
        for log_set, config in zip(log_sets, configs, strict=True)
    ]
    sessions = [row for *_, opened in planned for row in store.run_sessions(opened.run_id)]
    done: list[ReplayedSet] = []
    with progress_bar("sessions", quiet=options.target.as_json, counts_solved=True) as bar:
        tick = sessions_task(bar, "replaying", sessions)
        progress = follow_turns(bar, tick, with_feedback=False)

        for log_set, config, opened in planned:
            run_tasks = [tasks[row.task_id] for row in log_set.sessions]
            result: LiveResult = await run_live(
                store,
                opened.run_id,
                config,
                run_tasks,
                executor,
                backend,
                None,
                options.target.concurrency or default_concurrency(config.model),
                progress,
                replay=True,
            )
            done.append(
                ReplayedSet(log_set, opened.run_id, opened.resumed, result.sessions, result.failed)
            )
    return done
