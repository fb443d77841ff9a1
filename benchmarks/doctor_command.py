"""Wiring for ``convtui doctor``: run the tasks' solutions under a progress bar, print the
report, and say whether enough of the tasks behaved as expected."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from convtui.benchmarks.doctor import DoctorReport, Solution, TaskOutcome, run_doctor
from convtui.benchmarks.output import console, print_json, warn
from convtui.benchmarks.views import doctor_view
from convtui.core.executor import Executor
from convtui.core.isolation import verdict_warning
from convtui.core.loaders import load_catalog
from convtui.core.tasks import Task


def doctor_command(
    *,
    suite: str,
    data: Path | None,
    ids: str | None,
    lib: list[str] | None,
    stdlib_only: bool,
    solution: Solution,
    python: str | None,
    jobs: int | None,
    isolation: str,
    fail_under: float,
    as_json: bool,
) -> int:
    """Exit code 1 when fewer than ``fail_under`` of the checked tasks behaved as expected."""
    tasks = load_catalog(suite, data).select(ids, lib, stdlib_only)
    with Executor(python=python, jobs=jobs, isolation=isolation) as executor:
        warning = verdict_warning(executor.isolation.label)
        if warning is not None:
            warn(warning)
        report = _with_progress(tasks, executor, solution, quiet=as_json)
    if as_json:
        print_json(report.to_json())
    else:
        console().print(doctor_view(report))
    checked = report.total - report.env_error
    behaved = 1 - len(report.unexpected) / checked if checked else 1.0
    return 0 if behaved >= fail_under else 1


def _with_progress(
    tasks: Sequence[Task], executor: Executor, solution: Solution, quiet: bool
) -> DoctorReport:
    """run_doctor under a progress bar on stderr (none when ``quiet`` or not a tty)."""
    err = console(stderr=True)
    disable = (quiet and not err.is_terminal) or os.environ.get("CI") == "true"
    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err,
        disable=disable,
        transient=True,
    ) as progress:
        bar = progress.add_task("running", total=len(tasks))
        failed = 0

        def tick(outcome: TaskOutcome) -> None:
            nonlocal failed
            failed += outcome.status != "pass"
            progress.update(bar, advance=1, description=f"{outcome.id} · {failed} not passing")

        return run_doctor(tasks, executor, solution=solution, progress=tick)
