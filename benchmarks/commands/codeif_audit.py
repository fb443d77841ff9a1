"""Wiring for ``convtui doctor --suite codeif --audit``: the audit under a progress bar on
stderr, its tables (per level and category, per task) or ``--json``, and ``--errata``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from convtui.benchmarks.output import console, print_json, warn
from convtui.benchmarks.progress import progress_bar
from convtui.benchmarks.runs.codeif_audit import (
    audit_tasks,
    category_order,
    published_completions,
    run_audit,
    summary,
    write_errata,
)
from convtui.benchmarks.settings import ExecutorSettings, TaskSelection
from convtui.core.codeif.audit import AUDIT_CLASSES, AuditRow
from convtui.core.errors import ConvtuiError
from convtui.core.execution.isolation import verdict_warning


def audit_command(
    selection: TaskSelection,
    executor: ExecutorSettings,
    *,
    as_json: bool,
    errata: Path | None,
    completions: Path | None = None,
) -> int:
    """Exit 0: the audit is a report, its findings are not the machine's fault."""
    tasks = audit_tasks(selection.data, selection.ids)
    published = None
    if completions is not None:
        if not completions.is_dir():
            raise ConvtuiError(f"--completions {completions}: no such folder; name one")
        published = published_completions(completions)
    quiet = as_json and not console(stderr=True).is_terminal
    with executor.open(model_code=False) as running:
        warning = verdict_warning(running.isolation.label)
        if warning is not None:
            warn(warning)
        with progress_bar(quiet=quiet, transient=True) as progress:
            bar = progress.add_task("auditing", total=len(tasks))

            def tick(task_id: str) -> None:
                progress.update(bar, advance=1, description=f"{task_id}")

            rows = run_audit(tasks, running, progress=tick, completions=published)
    if errata is not None:
        write_errata(rows, errata)
    if as_json:
        print_json({**summary(rows), "tests": [r.to_json() for r in rows]})
        return 0
    out = console()
    for data in dict.fromkeys(r.data for r in rows):
        mine = [r for r in rows if r.data == data]
        out.print(_by_category(data, mine))
        out.print(_by_defect(data, mine))
        out.print(_by_task(data, mine))
    if errata is not None:
        out.print(f"errata: {len(rows)} tests written to {errata}")
    return 0


def _class_table(title: str, first: str, groups: dict[tuple[str, str], list[AuditRow]]):
    from rich.table import Table

    table = Table(title=title, header_style="bold")
    table.add_column("level")
    table.add_column(first)
    for name in (*AUDIT_CLASSES, "tests"):
        table.add_column(name, justify="right")
    for (level, key), rows in groups.items():
        found = [sum(r.verdict == c for r in rows) for c in AUDIT_CLASSES]
        table.add_row(level, key, *(str(n) if n else "-" for n in found), str(len(rows)))
    return table


def _group(rows: Sequence[AuditRow], key: str) -> dict[tuple[str, str], list[AuditRow]]:
    groups: dict[tuple[str, str], list[AuditRow]] = {}
    for row in rows:
        groups.setdefault((row.level, getattr(row, key)), []).append(row)
    return groups


def _by_category(data: str, rows: Sequence[AuditRow]):
    groups = _group(rows, "category")
    ordered = dict(sorted(groups.items(), key=lambda kv: (kv[0][0], category_order(kv[0][1]))))
    return _class_table(f"{data}: instruction tests by category", "category", ordered)


def _by_task(data: str, rows: Sequence[AuditRow]):
    return _class_table(f"{data}: instruction tests by task", "task", _group(rows, "task"))


def _by_defect(data: str, rows: Sequence[AuditRow]):
    from rich.table import Table

    table = Table(
        title=f"{data}: defects found",
        header_style="bold",
        caption="convtui: the repair --protocol convtui makes; 'left out': a test to leave out "
        "of its scores, which scoring does not do yet",
    )
    for name in ("level", "defect", "class", "convtui", "tests"):
        table.add_column(name, justify="right" if name == "tests" else "left")
    found: dict[tuple[str, str, str, str], int] = {}
    for row in rows:
        if row.defect:
            group = (row.level, row.defect, str(row.verdict), row.convtui)
            found[group] = found.get(group, 0) + 1
    for group, n in sorted(found.items()):
        table.add_row(*group, str(n))
    return table
