"""``convtui check``: one candidate against a task's tests, and the feedback a model
would receive."""

from __future__ import annotations

import typer

from convtui.core.execution.choice import LOCAL
from convtui.errors import user_errors
from convtui.option_groups import ExecutorGroup
from convtui.options import (
    FULL_EF,
    DataOpt,
    ExecutorOpt,
    ExtractOpt,
    IsolationOpt,
    JsonOpt,
    PartialRuleOpt,
    ProtocolOpt,
    PythonOpt,
    SuiteOpt,
)
from convtui.play_options import CheckCodeOpt, CheckFeedbackOpt, CheckTaskOpt


def check(
    task_id: CheckTaskOpt,
    code: CheckCodeOpt,
    feedback: CheckFeedbackOpt = FULL_EF,
    protocol: ProtocolOpt = "convtui",
    partial_rule: PartialRuleOpt = None,
    extract: ExtractOpt = None,
    suite: SuiteOpt = "all",
    data: DataOpt = None,
    # The executor group but --jobs: one candidate runs.
    python: PythonOpt = None,
    isolation: IsolationOpt = "auto",
    executor: ExecutorOpt = LOCAL,
    as_json: JsonOpt = False,
) -> None:
    """Run one candidate against a task's tests and print the feedback a model would receive.

    --protocol convcodeworld shows what a default `bench live` run sends (its lossy code
    parser cuts a reply at its first two blank lines).

    Example:
    [bold]convtui check --task BigCodeBench/13 --code reply.md --feedback CF,EF:partial[/bold]"""
    with user_errors():
        from convtui.benchmarks.commands.check import check_command
        from convtui.benchmarks.settings import ProtocolSettings, TaskSelection

        exit_code = check_command(
            task_id,
            code,
            ProtocolSettings(
                protocol, partial_rule=partial_rule, extract=extract, feedback=feedback
            ),
            TaskSelection(suite, data),
            ExecutorGroup(python, 1, isolation, executor).settings(),
            as_json,
        )
    raise typer.Exit(exit_code)
