"""The commands that run code: ``convtui check`` (one candidate), ``doctor`` (the task
environment), ``session`` (a task played in the app) and ``bench`` (headless benchmarks, live
or replayed, and CodeIF-Bench's conversations)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from convtui.bench_options import (
    CodeifLogsOpt,
    CodeifModeOpt,
    CodeifPromptingOpt,
    CodeifProtocolOpt,
    CodeifScoreOnlyOpt,
    LiveFeedbackOpt,
    LiveSimulatorOpt,
    LogsOpt,
    LogUserOpt,
    RefModelOpt,
    StaticContextOpt,
    StaticDbOpt,
    StaticFeedbackOpt,
    StaticProtocolOpt,
    StaticRunOpt,
    StaticTurnsOpt,
)
from convtui.core.execution.choice import LOCAL
from convtui.errors import user_errors
from convtui.option_groups import (
    CONVCODEWORLD_TURNS,
    ExecutorGroup,
    ModelGroup,
    SelectionGroup,
    TurnGroup,
    takes_groups,
)
from convtui.options import (
    FULL_EF,
    NOVICE_USER,
    CodeifMetricsOpt,
    ConcurrencyOpt,
    DataOpt,
    DbOpt,
    ExecutorOpt,
    ExtractOpt,
    IdsOpt,
    IsolationOpt,
    JsonOpt,
    MaxTokensOpt,
    PartialRuleOpt,
    ProtocolOpt,
    PythonOpt,
    SuiteOpt,
)
from convtui.play_options import (
    AnnotatorOpt,
    AuditOpt,
    CheckCodeOpt,
    CheckFeedbackOpt,
    CheckTaskOpt,
    CompletionsOpt,
    ErrataOpt,
    FailUnderOpt,
    InstructionsOpt,
    ResumeOpt,
    SessionFeedbackOpt,
    SessionSimulatorOpt,
    SessionStartTaskOpt,
    SolutionOpt,
    UserOpt,
)
from convtui.study_options import SessionStudyOpt

if TYPE_CHECKING:
    from convtui.tui.launch import MachineOptions


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
        from convtui.tui.launch import SessionOptions, run_session

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
    from convtui.tui.launch import StudySessionOptions, run_study_session

    return run_study_session(StudySessionOptions(study, annotator, machine))


bench_app = typer.Typer(no_args_is_help=True, help="Headless benchmarks: live or replayed.")


@bench_app.command("codeif")
@takes_groups
def bench_codeif(
    *,
    mode: CodeifModeOpt = "static",
    model: ModelGroup,
    protocol: CodeifProtocolOpt = "codeif",
    ids: IdsOpt = None,
    max_tokens: MaxTokensOpt = None,
    db: DbOpt = Path("results.db"),
    data: DataOpt = None,
    concurrency: ConcurrencyOpt = None,
    executor: ExecutorGroup,
    as_json: JsonOpt = False,
    score_only: CodeifScoreOnlyOpt = None,
    logs: CodeifLogsOpt = None,
    metrics: CodeifMetricsOpt = "authors",
    prompting: CodeifPromptingOpt = "direct",
) -> None:
    """Run CodeIF-Bench conversations: does the model keep following every instruction as
    they accumulate? Each round is a recorded turn (sessions list/show browse them).

    Killed or failed? Run the same command again: it continues where it stopped.
    With --score-only FILE no model is called: the file's completions are scored instead.
    With --logs DB the conversations people recorded in the app are replayed against --model.

    Task ids are the benchmark's own: CodeIF/11 to CodeIF/60 (--ids 11-20 takes ten).

    Example: [bold]convtui bench codeif --mode dynamic --ids 11-20 --db codeif.db[/bold]"""
    with user_errors(), _interruptible(db):
        from convtui.benchmarks.commands.codeif import CodeifOptions, bench_codeif_command
        from convtui.benchmarks.settings import RunTarget, TaskSelection

        exit_code = bench_codeif_command(
            CodeifOptions(
                mode,
                protocol,
                model.settings(max_tokens),
                TaskSelection("codeif", data, ids),
                executor.settings(),
                RunTarget(db, concurrency, as_json),
                score_only=score_only,
                logs=logs,
                metrics=metrics,
                prompting=prompting,
            )
        )
    raise typer.Exit(exit_code)


@bench_app.command("live")
@takes_groups
def bench_live(
    *,
    model: ModelGroup,
    simulator: LiveSimulatorOpt = None,
    feedback: LiveFeedbackOpt = FULL_EF,
    turn: TurnGroup = CONVCODEWORLD_TURNS,
    max_tokens: MaxTokensOpt = None,
    db: DbOpt = Path("results.db"),
    selection: SelectionGroup,
    concurrency: ConcurrencyOpt = None,
    executor: ExecutorGroup,
    as_json: JsonOpt = False,
) -> None:
    """Run a live benchmark: the model codes, the harness and a simulated user give feedback.

    Killed or failed? Run the same command again: it continues where it stopped.

    Example: [bold]convtui bench live --ids 0-19 --feedback all --turns 10 --db results.db[/bold]"""
    with user_errors(), _interruptible(db):
        from convtui.benchmarks.commands.live import bench_live_command
        from convtui.benchmarks.settings import ProtocolSettings, RunTarget

        exit_code = bench_live_command(
            selection.settings(),
            model.settings(max_tokens),
            ProtocolSettings(
                turn.protocol,
                turn.turns,
                turn.context,
                turn.partial_rule,
                turn.extract,
                simulator,
                feedback=feedback,
            ),
            executor.settings(),
            RunTarget(db, concurrency, as_json),
        )
    raise typer.Exit(exit_code)


@bench_app.command("static")
@takes_groups
def bench_static(
    *,
    logs: LogsOpt,
    model: ModelGroup,
    db: StaticDbOpt = Path("results.db"),
    protocol: StaticProtocolOpt = None,
    turns: StaticTurnsOpt = None,
    context: StaticContextOpt = None,
    max_tokens: MaxTokensOpt = None,
    feedback: StaticFeedbackOpt = None,
    run: StaticRunOpt = None,
    ref_model: RefModelOpt = None,
    user: LogUserOpt = None,
    ids: IdsOpt = None,
    data: DataOpt = None,
    concurrency: ConcurrencyOpt = None,
    executor: ExecutorGroup,
    as_json: JsonOpt = False,
) -> None:
    """Replay recorded sessions against a model (ConvCodeBench): no user is asked again.

    Each log set (one reference model under one feedback setting, or one annotator's
    sessions) becomes a run. Turn 0 is the target's own; at turn t it gets the reference's
    turn t-1 code, its recorded verdict and feedback, and writes the next code, which is run
    and recorded as its own session, linked to the reference's. Where the reference's turn
    t-1 passed, that code is the target's turn t. Killed? Run the same command again.

    Example: [bold]convtui bench static --logs live.db --db replay.db[/bold]"""
    with user_errors(), _interruptible(db):
        from convtui.benchmarks.commands.static import StaticOptions, bench_static_command
        from convtui.benchmarks.settings import RunTarget, TaskSelection
        from convtui.sessions.reading.log_sets import LogSetFilter

        exit_code = bench_static_command(
            StaticOptions(
                logs,
                model.settings(max_tokens),
                LogSetFilter(runs=tuple(run or ()), ref_model=ref_model, user=user),
                TaskSelection("all", data, ids),  # --ids across the suites: 13 is BigCodeBench/13
                executor.settings(),
                RunTarget(db, concurrency, as_json),
                protocol=protocol,
                turns=turns,
                context=context,
                feedback=tuple(feedback or ()),
            )
        )
    raise typer.Exit(exit_code)


def _interruptible(db: Path) -> AbstractContextManager[None]:
    """Ctrl+C in a bench command: what was kept and the command that goes on (exit 130)."""
    from convtui.interrupted import on_interrupt

    return on_interrupt(db)
