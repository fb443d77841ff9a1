"""Rich renderings for the headless commands: check results and doctor reports, and the
test-status cells that ``sessions show`` reuses (benchmarks/commands/records/session_views.py).

Foreign text (code, tracebacks, reasons) is always passed as ``Text``/``Syntax``, never
interpolated into markup, since it is full of square brackets."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from convtui.benchmarks.runs.doctor import DoctorReport
from convtui.core.catalog.tasks import Task
from convtui.core.execution.types import ExecResult, TestOutcome
from convtui.core.plural import counted
from convtui.core.projects.checkout import FETCH_HINT

_STATUS_STYLE = {
    "pass": ("✓ PASS", "green"),
    "fail": ("✗ FAIL", "red"),
    "error": ("! ERROR", "red"),
    "timeout": ("⏱ TIMEOUT", "yellow"),
    "crash": ("✗ CRASH", "magenta"),
    "env_error": ("? ENV_ERROR", "yellow"),
    "skipped": ("- SKIPPED", "yellow"),
    "missing": ("? MISSING", "magenta"),
    "not_run": ("- NOT RUN", "dim"),
}


def status_text(status: str) -> Text:
    label, style = _STATUS_STYLE.get(status, (status.upper(), "bold"))
    return Text(label, style=style)


def seconds(test: TestOutcome) -> str:
    """A test's duration, or ``-`` for one that never ran."""
    return "-" if test.status in ("not_run", "missing") else f"{test.duration_s:.3f}"


def check_view(
    task: Task,
    result: ExecResult,
    compile_text: str,
    execution_text: str | None,
    feedback_label: str,
) -> RenderableType:
    table = Table(header_style="bold", expand=False, title=Text(f"{task.id} · tests"))
    table.add_column("test", no_wrap=True)
    table.add_column("status")
    table.add_column("seconds", justify="right")
    for test in result.tests:
        table.add_row(Text(test.name), status_text(test.status), seconds(test))
    passed, total = result.counts()
    head = Text.assemble(
        status_text(result.status),
        f"  {passed}/{total} tests passed · ",
        f"{result.duration_s:.2f} s · isolation {result.isolation}",
    )
    parts: list[RenderableType] = [head]
    if result.detail:
        parts.append(Text(result.detail, style="italic"))
    if result.tests:
        parts.append(table)
    parts.append(Panel(Text(compile_text), title="compilation feedback", title_align="left"))
    if execution_text is not None:
        parts.append(
            Panel(
                Syntax(execution_text or "(empty)", "pytb", word_wrap=True, theme="ansi_dark"),
                title=Text(f"execution feedback · {feedback_label}"),
                title_align="left",
            )
        )
    return Group(*parts)


def _repository_table(rows: list[dict]) -> Table:
    valid = sum(r["valid"] for r in rows)
    table = Table(
        title=f"CodeIF-Bench repository tasks: {valid} of {len(rows)} valid here",
        header_style="bold",
        caption=None if all(r["usable"] for r in rows) else FETCH_HINT,
    )
    table.add_column("id", no_wrap=True)
    table.add_column("level", justify="right")
    table.add_column("project", no_wrap=True)
    table.add_column("valid here")
    table.add_column("why not", overflow="fold", ratio=3)
    for row in rows:
        table.add_row(
            Text(row["id"]),
            f"L-{row['level']}",
            Text(row["project"]),
            Text("yes", style="green") if row["valid"] else Text("no", style="red"),
            Text(row["why"]),
        )
    return table


def doctor_view(report: DoctorReport) -> RenderableType:
    summary = Table.grid(padding=(0, 2))
    summary.add_row("solutions", report.solution)
    summary.add_row("tasks", str(report.total))
    summary.add_row(
        "passed",
        f"{report.passed} ({report.pass_rate:.1%}; "
        f"{report.valid_pass_rate():.1%} of tasks whose libraries are installed)",
    )
    for name in ("failed", "error", "timeout", "crash", "env_error"):
        summary.add_row(name, str(getattr(report, name)))
    if report.nodes:  # a cluster: each node's own sandbox and interpreter
        summary.add_row("nodes", str(len(report.nodes)))
        for node in report.nodes:
            summary.add_row(
                Text(f"  {node['host']} {node['node'][:8]}"),
                Text(
                    f"{counted(node['slots'], 'slot')} · {node['isolation_detail']} · "
                    f"{node['python']}"
                ),
            )
    else:
        summary.add_row("isolation", report.isolation_detail or report.isolation)
        summary.add_row("interpreter", report.python)
    summary.add_row("wall time", f"{report.wall_s:.1f} s")
    parts: list[RenderableType] = [Panel(summary, title="convtui doctor", title_align="left")]
    if report.missing_modules:
        missing = Table(
            title="missing libraries (env_error: not the solution's fault)", header_style="bold"
        )
        missing.add_column("module")
        missing.add_column("tasks", justify="right")
        missing.add_column("ids", overflow="fold")
        for module, ids in report.missing_modules.items():
            missing.add_row(Text(module), str(len(ids)), Text(", ".join(ids)))
        parts.append(missing)
    if report.repository:
        parts.append(_repository_table(report.repository))
    unexpected = report.unexpected
    if unexpected:
        want = "pass" if report.solution == "ground-truth" else "fail"
        table = Table(title=f"tasks that did not {want}", header_style="bold")
        table.add_column("id", no_wrap=True)
        table.add_column("status")
        table.add_column("why", overflow="fold", ratio=3)
        table.add_column("failing tests", overflow="fold", ratio=2)
        for o in unexpected:
            failing = ", ".join(o.failing_tests[:3]) + (" …" if len(o.failing_tests) > 3 else "")
            table.add_row(Text(o.id), status_text(o.status), Text(o.reason), Text(failing))
        parts.append(table)
    return Group(*parts)
