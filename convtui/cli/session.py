"""``convtui session``: a task played in the app, or with ``--study`` an annotator's next
assignment."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from convtui.errors import user_errors
from convtui.option_groups import ExecutorGroup, ModelGroup, TurnGroup, takes_groups
from convtui.options import NOVICE_USER, DataOpt, DbOpt, MaxTokensOpt, SuiteOpt
from convtui.play_options import (
    AnnotatorOpt,
    ResumeOpt,
    SessionFeedbackOpt,
    SessionSimulatorOpt,
    SessionStartTaskOpt,
    UserOpt,
)
from convtui.study_options import SessionStudyOpt

if TYPE_CHECKING:
    from convtui.tui.launch import MachineOptions


@takes_groups
def session(
    *,
    ctx: typer.Context,
    task: SessionStartTaskOpt = None,
    resume: ResumeOpt = None,
    user: UserOpt = "human",
    model: ModelGroup,
    simulator: SessionSimulatorOpt = None,
    feedback: SessionFeedbackOpt = NOVICE_USER,
    turn: TurnGroup,
    max_tokens: MaxTokensOpt = None,
    db: DbOpt = Path("results.db"),
    suite: SuiteOpt = "all",
    data: DataOpt = None,
    executor: ExecutorGroup,
    annotator: AnnotatorOpt = None,
    study: SessionStudyOpt = None,
) -> None:
    """Play one task in the terminal app: the model codes, the tests run, you give feedback.

    Every turn is saved as it ends; quit any time and continue with --resume. f1 lists the
    keys, ctrl+p every command. In a study, --study DB --annotator NAME opens your next
    assignment.

    Example: [bold]convtui session --task BigCodeBench/123 --db results.db[/bold]"""
    machine = executor.machine(suite, data, model.model_name, model.chat_template)
    if study is not None:
        with user_errors():
            exit_code = _study_session(ctx, study, annotator, machine)
        raise typer.Exit(exit_code)
    with user_errors():
        from convtui.core.catalog.loaders import load_catalog
        from convtui.tui.entry import run_session
        from convtui.tui.launch import SessionOptions

        options = SessionOptions(
            task,
            resume,
            model.model,
            model.model_name,
            simulator,
            feedback,
            user,
            turn.turns,
            turn.context,
            max_tokens,
            db,
            executor.python,
            executor.jobs,
            executor.isolation,
            turn.protocol,
            turn.partial_rule,
            turn.extract,
            model.chat_template,
            annotator,
            suite,
            data,
            executor.executor,
        )
        exit_code = run_session(options, load_catalog(suite, data))
    raise typer.Exit(exit_code)


# What a study decides for its sessions: with --study these options are refused, not ignored.
_STUDY_DECIDES = (
    "task",
    "resume",
    "user",
    "model",
    "simulator",
    "feedback",
    "protocol",
    "turns",
    "context",
    "partial_rule",
    "extract",
    "max_tokens",
    "db",
)


def _study_session(
    ctx: typer.Context, study: Path, annotator: str | None, machine: MachineOptions
) -> int:
    """``session --study DB --annotator NAME``: the annotator's next assignment, under the
    study's config; this machine still decides the model's name and chat template and how
    candidates run."""
    from convtui.core.errors import ConvtuiError

    given = [
        f"--{name.replace('_', '-')}"
        for name in _STUDY_DECIDES
        if (source := ctx.get_parameter_source(name)) is not None
        and source.name not in ("DEFAULT", "DEFAULT_MAP")
    ]
    if given:
        raise ConvtuiError(
            f"--study decides the task, model, feedback, turns, protocol and user of its "
            f"sessions and records into the study database: drop {', '.join(given)}"
        )
    if not annotator:
        raise ConvtuiError("--study needs --annotator NAME: whose assignments to open")
    from convtui.tui.entry import run_study_session
    from convtui.tui.launch import StudySessionOptions

    return run_study_session(StudySessionOptions(study, annotator, machine))
