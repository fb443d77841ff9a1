"""Wiring for ``convtui doctor``: run the tasks' solutions under a progress bar, print the
report, and say whether enough of the tasks behaved as expected."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from convtui.benchmarks.output import console, print_json, warn
from convtui.benchmarks.progress import progress_bar
from convtui.benchmarks.runs.codeif_doctor import (
    codeif_doctor_ok,
    codeif_doctor_table,
    run_codeif_doctor,
)
from convtui.benchmarks.runs.doctor import DoctorReport, TaskOutcome, run_doctor
from convtui.benchmarks.settings import ExecutorSettings, TaskSelection
from convtui.benchmarks.views import doctor_view
from convtui.core.catalog.tasks import Task
from convtui.core.errors import ConvtuiError
from convtui.core.execution.backend import ExecutionBackend
from convtui.core.execution.isolation import verdict_warning
from convtui.core.execution.requests import Solution


def doctor_command(
    selection: TaskSelection,
    executor: ExecutorSettings,
    *,
    solution: Solution,
    fail_under: float,
    as_json: bool,
    instructions: bool = False,
    audit: bool = False,
    errata: Path | None = None,
    completions: Path | None = None,
) -> int:
    """Exit code 1 when fewer than ``fail_under`` of the checked tasks behaved as expected."""
    if (errata is not None or completions is not None) and not audit:
        raise ConvtuiError("--errata and --completions belong to the audit: add --audit")
    if audit:
        if selection.suite != "codeif":
            raise ConvtuiError("--audit checks CodeIF-Bench tasks: add --suite codeif")
        from convtui.benchmarks.commands.codeif_audit import audit_command

        return audit_command(
            selection, executor, as_json=as_json, errata=errata, completions=completions
        )
    tasks = selection.tasks()
    if instructions:
        if selection.suite != "codeif":
            raise ConvtuiError("--instructions checks CodeIF-Bench tasks: add --suite codeif")
        return _instructions(tasks, executor, as_json)
    # The dataset's own (or deliberately broken) solutions: no model code to confine.
    with executor.open(model_code=False) as running:
        warning = verdict_warning(running.isolation.label)
        if warning is not None:
            warn(warning)
        report = _with_progress(tasks, running, solution, quiet=as_json)
    if as_json:
        print_json(report.to_json())
    else:
        console().print(doctor_view(report))
    checked = report.total - report.env_error
    behaved = 1 - len(report.unexpected) / checked if checked else 1.0
    return 0 if behaved >= fail_under else 1


def _instructions(tasks: Sequence[Task], executor: ExecutorSettings, as_json: bool) -> int:
    """The per-category check of CodeIF-Bench's instruction tests, as written and after the
    benchmark's pre-processing; exit 1 when a reference fails or an assert does not compile."""
    with executor.open(model_code=False) as running:
        found = {
            preprocess: run_codeif_doctor(tasks, running, preprocess=preprocess)
            for preprocess in (False, True)
        }
    if as_json:
        print_json(
            {
                "as_written": [c.to_json() for c in found[False]],
                "preprocessed": [c.to_json() for c in found[True]],
            }
        )
    else:
        for preprocess, checks in found.items():
            console().print(codeif_doctor_table(checks, preprocess))
    return 0 if all(codeif_doctor_ok(c) for c in found.values()) else 1


def _with_progress(
    tasks: Sequence[Task], executor: ExecutionBackend, solution: Solution, quiet: bool
) -> DoctorReport:
    """run_doctor under a progress bar on stderr; ``quiet`` (--json) leaves it out only where
    stderr is not a terminal, since the JSON goes to stdout."""
    quiet = quiet and not console(stderr=True).is_terminal
    with progress_bar(quiet=quiet, transient=True) as progress:
        bar = progress.add_task("running", total=len(tasks))
        failed = 0

        def tick(outcome: TaskOutcome) -> None:
            nonlocal failed
            failed += outcome.status != "pass"
            progress.update(bar, advance=1, description=f"{outcome.id} · {failed} not passing")

        return run_doctor(tasks, executor, solution=solution, progress=tick)
