"""Wiring for ``convtui bench codeif``: the run's config and selection from the options, the
model and the executor checked before any work, then the conversations under a progress bar
(benchmarks/codeif.py)."""

from __future__ import annotations

import asyncio
import os
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

from convtui.benchmarks.codeif import (
    CodeifPlayer,
    CodeifProgress,
    CodeifSettings,
    most_rounds,
    plan_codeif_run,
    run_codeif,
)
from convtui.benchmarks.live import default_concurrency
from convtui.benchmarks.output import console, print_json, warn
from convtui.core.codeif.conversation import Mode
from convtui.core.errors import ConvtuiError
from convtui.core.isolation import verdict_warning
from convtui.core.loaders import load_catalog
from convtui.core.loop import cached_execute
from convtui.core.omega import FeedbackConfig
from convtui.core.protocol import build_config
from convtui.core.services import ModelOptions, open_executor, open_models
from convtui.sessions import Store


@dataclass(frozen=True)
class CodeifOptions:
    mode: Mode
    protocol: str  # codeif (the benchmark's pre-processing) or convtui
    model: str
    model_name: str | None
    chat_template: Path | None
    ids: str | None
    db: Path
    data: Path | None
    max_tokens: int | None
    concurrency: int | None
    python: str | None
    jobs: int | None
    isolation: str
    quiet: bool


def bench_codeif_command(options: CodeifOptions) -> int:
    """Exit code 0 when every conversation was played, 1 when some failed on model errors."""
    tasks = load_catalog("codeif", options.data).select(options.ids, None, False)
    if not tasks:
        raise ConvtuiError(
            "the task selection is empty: check --ids (convtui tasks list --suite codeif)"
        )
    settings = CodeifSettings(options.mode, preprocess=options.protocol == "codeif")
    config = build_config(
        "convtui",
        model=options.model,
        feedback=FeedbackConfig(),
        simulator=None,
        turns=most_rounds(tasks, options.mode) - 1,
        context="full",
        max_tokens=options.max_tokens,
    )
    selection = f"{settings.selection_prefix};ids={options.ids or ''}"
    run_id, resumed, failed, played = asyncio.run(
        _execute(options, settings, config, selection, tasks)
    )
    if options.quiet:
        print_json(
            {
                "run_id": run_id,
                "resumed": resumed,
                "mode": options.mode,
                "protocol": options.protocol,
                "sessions_played": played,
                "failed": failed,
                "db": str(options.db),
            }
        )
    else:
        console().print(
            f"run {run_id} (CodeIF-Bench, {options.mode}): {played} conversation(s) played"
            f"{', resumed' if resumed else ''}; {failed} failed on model errors. "
            f"Browse: convtui sessions list --db {options.db}",
            soft_wrap=True,
        )
    return 0 if failed == 0 else 1


async def _execute(options, settings, config, selection, tasks) -> tuple[str, bool, int, int]:
    models = open_models(config, ModelOptions(options.model_name, options.chat_template))
    try:
        await models.check()
        executor = open_executor(
            python=options.python, jobs=options.jobs, isolation=options.isolation
        )
        with executor:
            label = executor.isolation.label
            warning = verdict_warning(label)
            if warning is not None:
                warn(warning)
            config = replace(config, isolation=label)
            with Store.open(options.db) as store:
                run_id, resumed = plan_codeif_run(store, config, selection, tasks)
                pending = store.pending_sessions(run_id)
                sessions = store.run_sessions(run_id)
                with _bar(options.quiet) as bar:
                    what = "resuming run" if resumed else "run"
                    tick = bar.add_task(
                        f"{what} {run_id}",
                        total=len(sessions),
                        completed=sum(s.finished for s in sessions),
                    )

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
                    concurrency = options.concurrency or default_concurrency(options.model)
                    failed = await run_codeif(player, tasks, concurrency)
                return run_id, resumed, failed, len(pending)
    finally:
        await models.aclose()


def _bar(quiet: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("conversations"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console(stderr=True),
        disable=quiet or os.environ.get("CI") == "true",
    )
