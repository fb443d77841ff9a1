"""``convtui doctor``: the task environment, checked by running ground-truth solutions."""

from __future__ import annotations

import typer

from convtui.errors import user_errors
from convtui.option_groups import ExecutorGroup, SelectionGroup, takes_groups
from convtui.options import JsonOpt
from convtui.play_options import (
    AuditOpt,
    CompletionsOpt,
    ErrataOpt,
    FailUnderOpt,
    InstructionsOpt,
    SolutionOpt,
)


@takes_groups
def doctor(
    *,
    selection: SelectionGroup,
    solution: SolutionOpt = "ground-truth",
    executor: ExecutorGroup,
    fail_under: FailUnderOpt = 0.0,
    as_json: JsonOpt = False,
    instructions: InstructionsOpt = False,
    audit: AuditOpt = False,
    errata: ErrataOpt = None,
    completions: CompletionsOpt = None,
) -> None:
    """Check the task environment: run ground-truth solutions and report what fails and why.

    Example: [bold]convtui doctor --stdlib-only[/bold]; CodeIF-Bench's instruction tests:
    [bold]convtui doctor --suite codeif --instructions[/bold]; every instruction test
    audited: [bold]convtui doctor --suite codeif --audit --errata errata.csv[/bold]"""
    with user_errors():
        from convtui.benchmarks.commands.doctor import doctor_command

        exit_code = doctor_command(
            selection.settings(),
            executor.settings(),
            solution=solution,
            fail_under=fail_under,
            as_json=as_json,
            instructions=instructions,
            audit=audit,
            errata=errata,
            completions=completions,
        )
    raise typer.Exit(exit_code)
