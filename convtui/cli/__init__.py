"""The convtui command line: parse, call, print. Each command names its options (declared once
in convtui/options.py, those that travel together as groups in convtui/option_groups.py),
hands their values to its front end and calls its body: the app's in tui/ (``session``,
``serve``), every other in benchmarks/commands/. Bodies are imported inside commands so that
``convtui --help`` stays fast. Each command, or group of commands, has a module of its own in
this package; this one makes the app."""

from __future__ import annotations

import typer

from convtui.cli import bench, check, doctor, projects, records, serve, session, study_group, tasks
from convtui.errors import OneLineErrors

app = typer.Typer(
    cls=OneLineErrors,
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    help="convtui: how well does a code LLM use feedback? Run, record and replay multi-turn "
    "code generation on BigCodeBench and CodeIF-Bench.",
)


@app.callback()
def main() -> None:
    """convtui: how well does a code LLM use feedback?"""


# `convtui --help` lists the commands in this order, then the groups below.
for command in (
    check.check,
    doctor.doctor,
    session.session,
    records.report,
    records.compare,
    serve.serve,
):
    app.command()(command)
app.add_typer(tasks.app, name="tasks")
app.add_typer(bench.bench_app, name="bench")
app.add_typer(records.sessions_app, name="sessions")
app.add_typer(study_group.app, name="study")
app.add_typer(projects.app, name="projects")
