"""Wiring for ``convtui bench codeif``: the run's config and selection from the options, the
model and the executor checked before any work, then the conversations under a progress bar
(benchmarks/runs/codeif.py); with ``--score-only FILE``, the file's completions checked and
recorded instead, no model called (benchmarks/runs/codeif_score.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from convtui.benchmarks.failures import failure_groups, failure_lines
from convtui.benchmarks.output import console, print_json, warn
from convtui.benchmarks.progress import progress_bar, sessions_task
from convtui.benchmarks.runs.codeif import (
    CodeifPlayer,
    CodeifProgress,
    CodeifSettings,
    codeif_run,
    most_rounds,
    run_codeif,
)
from convtui.benchmarks.runs.codeif_replay import (
    gather_references,
    replay_run,
    replay_scripts,
    replay_selection,
)
from convtui.benchmarks.runs.codeif_score import (
    CodeifScorer,
    CompletionsFile,
    read_completions,
    score_codeif,
)
from convtui.benchmarks.runs.lifecycle import NewRun, open_run
from convtui.benchmarks.runs.live import default_concurrency
from convtui.benchmarks.settings import ExecutorSettings, ModelSettings, RunTarget, TaskSelection
from convtui.core.catalog.tasks import Task
from convtui.core.codeif.conversation import BenchMode, Prompting
from convtui.core.codeif.data_file import CodeifData, load_codeif_data
from convtui.core.codeif.metrics import MetricsDefinition
from convtui.core.codeif.programs import CodeifProtocol
from convtui.core.errors import ConvtuiError
from convtui.core.execution.backend import ExecutionBackend
from convtui.core.execution.isolation import verdict_warning
from convtui.core.play.loop import cached_execute
from convtui.core.plural import counted
from convtui.core.projects.checkout import FETCH_HINT, task_problem
from convtui.core.services import open_models
from convtui.core.settings.config import SessionConfig
from convtui.core.settings.omega import FeedbackConfig
from convtui.core.settings.protocol import build_config
from convtui.sessions import Store


@dataclass(frozen=True)
class CodeifOptions:
    mode: BenchMode
    protocol: CodeifProtocol
    models: ModelSettings
    selection: TaskSelection  # its data file and ids (the suite is CodeIF-Bench's)
    executor: ExecutorSettings
    target: RunTarget
    score_only: Path | None = None  # a completions file to score instead of playing
    logs: Path | None = None  # a database of people's conversations to replay
    metrics: MetricsDefinition = "authors"  # what report scores the run by unless told otherwise
    prompting: Prompting = "direct"  # cot: each round asks for reasoning before the code


def bench_codeif_command(options: CodeifOptions) -> int:
    """Exit code 0 when every conversation was played, 1 when some failed on model errors."""
    if options.score_only is not None:
        if options.logs is not None:
            raise ConvtuiError("--score-only and --logs are two different runs: give one")
        return _score_command(options, options.score_only)
    if options.logs is not None:
        return _replay_command(options, options.logs)
    data = load_codeif_data(options.selection.data)
    tasks = data.catalog.select(options.selection.ids, None, False)
    if not tasks:
        raise ConvtuiError(
            "the task selection is empty: check --ids (convtui tasks list --suite codeif)"
        )
    tasks = runnable_here(tasks)
    settings = CodeifSettings(
        options.mode, preprocess=options.protocol == "codeif", prompting=options.prompting
    )
    config = _config(options.models.model, most_rounds(tasks, settings), options.models.max_tokens)
    selection = f"{settings.selection_prefix};data={data.sha256};ids={options.selection.ids or ''}"
    new = codeif_run(settings, config, selection, tasks)
    run_id, resumed, failed, played = asyncio.run(
        _execute(options, settings, new, tasks, data=data)
    )
    _print_played(options, options.mode, run_id, resumed, failed, played)
    return 0 if failed == 0 else 1


def runnable_here(tasks: Sequence[Task]) -> list[Task]:
    """``tasks`` without the repository tasks whose project is not usable here, which are
    named in one warning line; refused in one line when that leaves nothing."""
    unusable = {t.id: p for t in tasks if t.site and (p := task_problem(t)) is not None}
    if not unusable:
        return list(tasks)
    if len(unusable) == len(tasks):
        first = next(iter(unusable.items()))
        raise ConvtuiError(
            f"none of the {counted(len(tasks), 'selected task')} can run here "
            f"({first[0]}: {first[1]}); {FETCH_HINT}"
        )
    projects = {t.site.project_path for t in tasks if t.id in unusable and t.site}
    warn(
        f"{counted(len(unusable), 'repository task')} left out, their "
        f"{counted(len(projects), 'project')} not usable here (convtui doctor --suite codeif "
        f"says why per task); {FETCH_HINT}"
    )
    return [t for t in tasks if t.id not in unusable]


def _replay_command(options: CodeifOptions, logs: Path) -> int:
    """``--logs``: people's recorded conversations replayed against the model."""
    if options.mode != "static":
        raise ConvtuiError(
            "--logs replays recorded conversations round by round: leave out --mode dynamic"
        )
    data = load_codeif_data(options.selection.data)
    catalog = data.catalog
    ids = options.selection.ids
    wanted = {t.id for t in catalog.select(ids, None, False)} if ids else None
    settings = CodeifSettings(
        "static",
        preprocess=options.protocol == "codeif",
        replay=True,
        prompting=options.prompting,
    )
    with Store.open(options.target.db) as store:
        references = gather_references(logs, store, catalog, wanted)
    tasks = [catalog.get(r.task_id) for r in references]
    config = _config(options.models.model, most_rounds(tasks, settings), options.models.max_tokens)
    prefix = f"{settings.selection_prefix};data={data.sha256}"
    selection = replay_selection(prefix, logs, references)
    new = replay_run(config, selection, references, logs)
    run_id, resumed, failed, played = asyncio.run(
        _execute(options, settings, new, tasks, data=data)
    )
    _print_played(options, "replay", run_id, resumed, failed, played)
    return 0 if failed == 0 else 1


def _print_played(
    options: CodeifOptions, mode: str, run_id: str, resumed: bool, failed: int, played: int
) -> None:
    db = options.target.db
    failures = failure_groups(db, [run_id]) if failed else []
    if options.target.as_json:
        print_json(
            {
                "run_id": run_id,
                "resumed": resumed,
                "mode": mode,
                "protocol": options.protocol,
                "sessions_played": played,
                "failed": failed,
                "failures": [g.to_json() for g in failures],
                "db": str(db),
            }
        )
    else:
        screen = console()
        screen.print(
            f"run {run_id} (CodeIF-Bench, {mode}): {counted(played, 'conversation')} played"
            f"{', resumed' if resumed else ''}; {failed} failed on model errors. "
            f"Browse: convtui sessions list --db {db}",
            soft_wrap=True,
        )
        for line in failure_lines(failures, db):
            screen.print(line, markup=False, highlight=False, soft_wrap=True)


def _config(model: str, rounds: int, max_tokens: int | None) -> SessionConfig:
    """A CodeIF run's config: conversations of at most ``rounds`` rounds, full context."""
    return build_config(
        "convtui",
        model=model,
        feedback=FeedbackConfig(),
        simulator=None,
        turns=rounds - 1,
        context="full",
        max_tokens=max_tokens,
    )


@contextmanager
def _checking(
    options: CodeifOptions, config: SessionConfig
) -> Iterator[tuple[ExecutionBackend, SessionConfig]]:
    """The executor that checks every round, and ``config`` with its isolation recorded."""
    with options.executor.open() as executor:
        label = executor.isolation.label
        warning = verdict_warning(label)
        if warning is not None:
            warn(warning)
        yield executor, replace(config, isolation=label)


async def _execute(
    options: CodeifOptions,
    settings: CodeifSettings,
    new: NewRun,
    tasks: Sequence[Task],
    *,
    data: CodeifData,
) -> tuple[str, bool, int, int]:
    models = open_models(new.config, options.models.options())
    try:
        await models.check()
        with (
            _checking(options, new.config) as (executor, config),
            Store.open(options.target.db) as store,
        ):
            run_id, resumed = _open(store, replace(new, config=config), options, data)
            sessions = store.run_sessions(run_id)
            with progress_bar("conversations", quiet=options.target.as_json) as bar:
                what = "resuming run" if resumed else "run"
                tick = sessions_task(bar, f"{what} {run_id}", sessions)

                def progress(event: CodeifProgress) -> None:
                    if event.round is None:
                        bar.advance(tick, 1)
                        return
                    plan = event.round.plan
                    mark = "✓" if event.round.checked[plan.instruction.category] else "✗"
                    bar.update(
                        tick,
                        description=f"{event.task_id} round {plan.number} {plan.kind} "
                        f"{plan.instruction.category} {mark}",
                    )

                player = CodeifPlayer(
                    store,
                    run_id,
                    config,
                    settings,
                    models.coder,
                    cached_execute(executor, store.execution_cache()),
                    progress,
                )
                if settings.replay:
                    player.scripts = replay_scripts(store, run_id, {t.id: t for t in tasks})
                concurrency = options.target.concurrency or default_concurrency(
                    options.models.model
                )
                played = await run_codeif(player, tasks, concurrency)
            return run_id, resumed, played.failed, played.sessions
    finally:
        await models.aclose()


def _open(store: Store, new: NewRun, options: CodeifOptions, data: CodeifData) -> tuple[str, bool]:
    """Open the run, and record its data file and metric definition beside it (not part of
    what makes it the same run: another --metrics reports the same rounds another way)."""
    opened = open_run(store, new)
    store.update_run_settings(opened.run_id, {**data.settings(), "metrics": options.metrics})
    return opened.run_id, opened.resumed


def _score_command(options: CodeifOptions, path: Path) -> int:
    """``--score-only``: the file read and checked first (nothing is created on bad input),
    then its rounds executed and recorded as one run."""
    if options.mode != "static":
        raise ConvtuiError(
            "--score-only scores static conversations (each round checked on the instructions "
            "given up to it): leave out --mode dynamic"
        )
    if options.selection.ids:
        raise ConvtuiError("--score-only scores every task in the file: leave out --ids")
    data = load_codeif_data(options.selection.data)
    scored = read_completions(path, data.catalog)
    settings = CodeifSettings("static", preprocess=options.protocol == "codeif")
    config = _config(scored.model, scored.most_rounds, options.models.max_tokens)
    selection = scored.selection(settings, data.sha256)
    tasks = [t.task for t in scored.tasks]
    with _checking(options, config) as (executor, config), Store.open(options.target.db) as store:
        new = codeif_run(settings, config, selection, tasks)
        run_id, resumed = _open(store, new, options, data)
        sessions = store.run_sessions(run_id)
        with progress_bar("conversations", quiet=options.target.as_json) as bar:
            what = "resuming scoring run" if resumed else "scoring run"
            tick = sessions_task(bar, f"{what} {run_id}", sessions)
            scorer = CodeifScorer(
                store,
                run_id,
                config,
                settings,
                cached_execute(executor, store.execution_cache()),
                scored,
            )
            concurrency = options.target.concurrency or executor.jobs
            scored_now = asyncio.run(
                score_codeif(scorer, concurrency, lambda *_: bar.advance(tick, 1))
            )
    _print_scored(options, scored, run_id, resumed, scored_now, tasks)
    return 0


def _print_scored(
    options: CodeifOptions,
    scored: CompletionsFile,
    run_id: str,
    resumed: bool,
    sessions: int,
    tasks: Sequence[Task],
) -> None:
    if options.target.as_json:
        print_json(
            {
                "run_id": run_id,
                "resumed": resumed,
                "mode": "static",
                "protocol": options.protocol,
                "scored": str(scored.path),
                "model": scored.model,
                "tasks": len(tasks),
                "rounds": scored.rounds,
                "sessions_scored": sessions,
                "db": str(options.target.db),
            }
        )
        return
    console().print(
        f"run {run_id} (CodeIF-Bench, static, scored from {scored.path.name} as "
        f"{scored.model}): {counted(sessions, 'conversation')} scored"
        f"{', resumed' if resumed else ''}, {counted(scored.rounds, 'round')} in the file. "
        f"Tables: convtui report --db {options.target.db}",
        soft_wrap=True,
    )
