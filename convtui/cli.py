"""The convtui command line: parse, call, print. Each command names its options (declared in
convtui/options.py, a choice's values in the library's own Literal), groups their values as
its front end takes them (benchmarks/settings.py) and calls its body: the headless front
end's in benchmarks/commands/, the catalog's and the store's (tasks, sessions) in
convtui/commands/. Bodies are imported inside commands so that ``convtui --help`` stays
fast."""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path

import typer

from convtui.core.execution.choice import LOCAL, ExecutorChoice
from convtui.errors import OneLineErrors, user_errors
from convtui.options import (
    FULL_EF,
    NOVICE_USER,
    AnnotatorOpt,
    ChatTemplateOpt,
    CheckCodeOpt,
    CheckFeedbackOpt,
    CheckTaskOpt,
    CodeifLogsOpt,
    CodeifMetricsOpt,
    CodeifModeOpt,
    CodeifPromptingOpt,
    CodeifProtocolOpt,
    CodeifScoreOnlyOpt,
    ConcurrencyOpt,
    ContextOpt,
    CorrelateOpt,
    DataOpt,
    DbOpt,
    ExecutorOpt,
    ExportAllOpt,
    ExportFormatOpt,
    ExportModelNameOpt,
    ExportOutOpt,
    ExportRunOpt,
    ExtractOpt,
    FailUnderOpt,
    IdsOpt,
    ImportDbOpt,
    ImportDirArg,
    IncludeUnfinishedOpt,
    InstructionsOpt,
    IsolationOpt,
    JobsOpt,
    JsonOpt,
    LibOpt,
    LimitOpt,
    LiveFeedbackOpt,
    LiveSimulatorOpt,
    LogsOpt,
    LogUserOpt,
    MaxTokensOpt,
    MergeDbOpt,
    MergeSourcesArg,
    ModelNameOpt,
    ModelOpt,
    PartialRuleOpt,
    PlotOpt,
    ProjectNamesArg,
    ProjectsDirOpt,
    ProjectTreeOpt,
    ProtocolOpt,
    PythonOpt,
    RefModelOpt,
    ReportMetricsOpt,
    ReportOutOpt,
    ReportRunOpt,
    ResumeOpt,
    SessionDbOpt,
    SessionFeedbackOpt,
    SessionIdArg,
    SessionIdsArg,
    SessionSimulatorOpt,
    SessionStartTaskOpt,
    SessionStatusOpt,
    SessionTaskOpt,
    SessionUserOpt,
    SolutionOpt,
    StaticContextOpt,
    StaticDbOpt,
    StaticFeedbackOpt,
    StaticProtocolOpt,
    StaticRunOpt,
    StaticTurnsOpt,
    StdlibOpt,
    SuiteOpt,
    TaskIdArg,
    TurnsOpt,
    UserOpt,
)
from convtui.project_options import ArchiveSha256Opt, ArchiveUrlOpt, KeepArchiveOpt
from convtui.study_options import (
    AddTasksOpt,
    AnnotatorNameArg,
    FinishedOnlyOpt,
    ServeHostOpt,
    ServeMaxAppsOpt,
    ServePortOpt,
    SessionStudyOpt,
    StudyDbOpt,
    StudyExportForceOpt,
    StudyExportFormatOpt,
    StudyExportOutOpt,
    StudyFileArg,
    StudyInitDbOpt,
    StudyPlotOpt,
    StudyTargetOpt,
)

app = typer.Typer(
    cls=OneLineErrors,
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    help="convtui: how well does a code LLM use feedback? Run, record and replay multi-turn "
    "code generation on BigCodeBench and CodeIF-Bench.",
)
tasks_app = typer.Typer(no_args_is_help=True, help="Browse the task catalog.")
app.add_typer(tasks_app, name="tasks")
bench_app = typer.Typer(no_args_is_help=True, help="Headless benchmarks: live or replayed.")
app.add_typer(bench_app, name="bench")
sessions_app = typer.Typer(
    no_args_is_help=True, help="Browse and export recorded sessions (TUI and benchmark runs)."
)
app.add_typer(sessions_app, name="sessions")
study_app = typer.Typer(
    no_args_is_help=True,
    help="Human-feedback studies: tasks dealt to annotators, their tokens and progress.",
)
app.add_typer(study_app, name="study")
projects_app = typer.Typer(
    no_args_is_help=True,
    help="DevEval projects for CodeIF-Bench's repository tasks: get them, check them.",
)
app.add_typer(projects_app, name="projects")


@app.callback()
def main() -> None:
    """convtui: how well does a code LLM use feedback?"""


# --- convtui tasks: the catalog -----------------------------------------------------------------


@tasks_app.command("list")
def tasks_list(
    suite: SuiteOpt = "bigcodebench",
    data: DataOpt = None,
    ids: IdsOpt = None,
    lib: LibOpt = None,
    stdlib_only: StdlibOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """List tasks, filtered by number, library or standard-library-only.

    Example: [bold]convtui tasks list --lib pandas --ids 0-99[/bold]"""
    from convtui.benchmarks.settings import TaskSelection
    from convtui.commands.tasks import list_tasks

    with user_errors():
        list_tasks(TaskSelection(suite, data, ids, lib or (), stdlib_only), as_json)


@tasks_app.command("show")
def tasks_show(
    task_id: TaskIdArg,
    suite: SuiteOpt = "all",
    data: DataOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show a task: prompt, code header, libraries, tests and ground truth."""
    from convtui.benchmarks.settings import TaskSelection
    from convtui.commands.tasks import show_task

    with user_errors():
        show_task(task_id, TaskSelection(suite, data), as_json)


# --- convtui check and doctor: candidates and the task environment -------------------------------


@app.command()
def check(
    task_id: CheckTaskOpt,
    code: CheckCodeOpt,
    feedback: CheckFeedbackOpt = FULL_EF,
    protocol: ProtocolOpt = "convtui",
    partial_rule: PartialRuleOpt = None,
    extract: ExtractOpt = None,
    suite: SuiteOpt = "all",
    data: DataOpt = None,
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
        from convtui.benchmarks.settings import ExecutorSettings, ProtocolSettings, TaskSelection

        exit_code = check_command(
            task_id,
            code,
            ProtocolSettings(protocol, feedback, partial_rule=partial_rule, extract=extract),
            TaskSelection(suite, data),
            ExecutorSettings(python, 1, isolation, executor),  # one candidate
            as_json,
        )
    raise typer.Exit(exit_code)


@app.command()
def doctor(
    suite: SuiteOpt = "bigcodebench",
    data: DataOpt = None,
    ids: IdsOpt = None,
    lib: LibOpt = None,
    stdlib_only: StdlibOpt = False,
    solution: SolutionOpt = "ground-truth",
    python: PythonOpt = None,
    jobs: JobsOpt = None,
    isolation: IsolationOpt = "auto",
    executor: ExecutorOpt = LOCAL,
    fail_under: FailUnderOpt = 0.0,
    as_json: JsonOpt = False,
    instructions: InstructionsOpt = False,
) -> None:
    """Check the task environment: run ground-truth solutions and report what fails and why.

    Example: [bold]convtui doctor --stdlib-only[/bold]; CodeIF-Bench's instruction tests:
    [bold]convtui doctor --suite codeif --instructions[/bold]"""
    with user_errors():
        from convtui.benchmarks.commands.doctor import doctor_command
        from convtui.benchmarks.settings import ExecutorSettings, TaskSelection

        exit_code = doctor_command(
            TaskSelection(suite, data, ids, lib or (), stdlib_only),
            ExecutorSettings(python, jobs, isolation, executor),
            solution=solution,
            fail_under=fail_under,
            as_json=as_json,
            instructions=instructions,
        )
    raise typer.Exit(exit_code)


# --- convtui session and bench live: play sessions -----------------------------------------------


@app.command()
def session(
    ctx: typer.Context,
    task: SessionStartTaskOpt = None,
    resume: ResumeOpt = None,
    user: UserOpt = "human",
    model: ModelOpt = "local:smollm2",
    model_name: ModelNameOpt = None,
    chat_template: ChatTemplateOpt = None,
    simulator: SessionSimulatorOpt = None,
    feedback: SessionFeedbackOpt = NOVICE_USER,
    protocol: ProtocolOpt = "convtui",
    turns: TurnsOpt = 10,
    context: ContextOpt = None,
    partial_rule: PartialRuleOpt = None,
    extract: ExtractOpt = None,
    max_tokens: MaxTokensOpt = None,
    db: DbOpt = Path("results.db"),
    suite: SuiteOpt = "all",
    data: DataOpt = None,
    python: PythonOpt = None,
    jobs: JobsOpt = None,
    isolation: IsolationOpt = "auto",
    executor: ExecutorOpt = LOCAL,
    annotator: AnnotatorOpt = None,
    study: SessionStudyOpt = None,
) -> None:
    """Play one task in the terminal app: the model codes, the tests run, you give feedback.

    Every turn is saved as it ends; quit any time and continue with --resume. f1 lists the
    keys, ctrl+p every command. In a study, --study DB --annotator NAME opens your next
    assignment.

    Example: [bold]convtui session --task BigCodeBench/123 --db results.db[/bold]"""
    if study is not None:
        with user_errors():
            exit_code = _study_session(
                ctx,
                study,
                annotator,
                suite,
                data,
                model_name=model_name,
                chat_template=chat_template,
                python=python,
                jobs=jobs,
                isolation=isolation,
                executor=executor,
            )
        raise typer.Exit(exit_code)
    with user_errors():
        from convtui.core.catalog.loaders import load_catalog
        from convtui.tui.launch import SessionOptions, run_session

        options = SessionOptions(
            task,
            resume,
            model,
            model_name,
            simulator,
            feedback,
            user,
            turns,
            context,
            max_tokens,
            db,
            python,
            jobs,
            isolation,
            protocol,
            partial_rule,
            extract,
            chat_template,
            annotator,
            suite,
            data,
            executor,
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
    ctx: typer.Context,
    study: Path,
    annotator: str | None,
    suite: str,
    data: Path | None,
    *,
    model_name: str | None,
    chat_template: Path | None,
    python: str | None,
    jobs: int | None,
    isolation: str,
    executor: ExecutorChoice,
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
    from convtui.tui.launch import MachineOptions, StudySessionOptions, run_study_session

    machine = MachineOptions(
        suite, data, model_name, chat_template, python, jobs, isolation, executor
    )
    return run_study_session(StudySessionOptions(study, annotator, machine))


@bench_app.command("codeif")
def bench_codeif(
    mode: CodeifModeOpt = "static",
    model: ModelOpt = "local:smollm2",
    model_name: ModelNameOpt = None,
    chat_template: ChatTemplateOpt = None,
    protocol: CodeifProtocolOpt = "codeif",
    ids: IdsOpt = None,
    max_tokens: MaxTokensOpt = None,
    db: DbOpt = Path("results.db"),
    data: DataOpt = None,
    concurrency: ConcurrencyOpt = None,
    python: PythonOpt = None,
    jobs: JobsOpt = None,
    isolation: IsolationOpt = "auto",
    executor: ExecutorOpt = LOCAL,
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
        from convtui.benchmarks.settings import (
            ExecutorSettings,
            ModelSettings,
            RunTarget,
            TaskSelection,
        )

        exit_code = bench_codeif_command(
            CodeifOptions(
                mode,
                protocol,
                ModelSettings(model, model_name, chat_template, max_tokens),
                TaskSelection("codeif", data, ids),
                ExecutorSettings(python, jobs, isolation, executor),
                RunTarget(db, concurrency, as_json),
                score_only=score_only,
                logs=logs,
                metrics=metrics,
                prompting=prompting,
            )
        )
    raise typer.Exit(exit_code)


@bench_app.command("live")
def bench_live(
    model: ModelOpt = "local:smollm2",
    model_name: ModelNameOpt = None,
    chat_template: ChatTemplateOpt = None,
    simulator: LiveSimulatorOpt = None,
    feedback: LiveFeedbackOpt = FULL_EF,
    protocol: ProtocolOpt = "convcodeworld",
    turns: TurnsOpt = 10,
    context: ContextOpt = None,
    partial_rule: PartialRuleOpt = None,
    extract: ExtractOpt = None,
    max_tokens: MaxTokensOpt = None,
    db: DbOpt = Path("results.db"),
    suite: SuiteOpt = "bigcodebench",
    data: DataOpt = None,
    ids: IdsOpt = None,
    lib: LibOpt = None,
    stdlib_only: StdlibOpt = False,
    concurrency: ConcurrencyOpt = None,
    python: PythonOpt = None,
    jobs: JobsOpt = None,
    isolation: IsolationOpt = "auto",
    executor: ExecutorOpt = LOCAL,
    as_json: JsonOpt = False,
) -> None:
    """Run a live benchmark: the model codes, the harness and a simulated user give feedback.

    Killed or failed? Run the same command again: it continues where it stopped.

    Example: [bold]convtui bench live --ids 0-19 --feedback all --turns 10 --db results.db[/bold]"""
    with user_errors(), _interruptible(db):
        from convtui.benchmarks.commands.live import bench_live_command
        from convtui.benchmarks.settings import (
            ExecutorSettings,
            ModelSettings,
            ProtocolSettings,
            RunTarget,
            TaskSelection,
        )

        exit_code = bench_live_command(
            TaskSelection(suite, data, ids, lib or (), stdlib_only),
            ModelSettings(model, model_name, chat_template, max_tokens),
            ProtocolSettings(protocol, feedback, turns, context, partial_rule, extract, simulator),
            ExecutorSettings(python, jobs, isolation, executor),
            RunTarget(db, concurrency, as_json),
        )
    raise typer.Exit(exit_code)


@bench_app.command("static")
def bench_static(
    logs: LogsOpt,
    model: ModelOpt = "local:smollm2",
    model_name: ModelNameOpt = None,
    chat_template: ChatTemplateOpt = None,
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
    python: PythonOpt = None,
    jobs: JobsOpt = None,
    isolation: IsolationOpt = "auto",
    executor: ExecutorOpt = LOCAL,
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
        from convtui.benchmarks.settings import (
            ExecutorSettings,
            ModelSettings,
            RunTarget,
            TaskSelection,
        )
        from convtui.sessions.log_sets import LogSetFilter

        exit_code = bench_static_command(
            StaticOptions(
                logs,
                ModelSettings(model, model_name, chat_template, max_tokens),
                LogSetFilter(runs=tuple(run or ()), ref_model=ref_model, user=user),
                TaskSelection("all", data, ids),  # --ids across the suites: 13 is BigCodeBench/13
                ExecutorSettings(python, jobs, isolation, executor),
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


# --- convtui report and sessions: what was recorded ----------------------------------------------


@app.command()
def report(
    db: DbOpt = Path("results.db"),
    run: ReportRunOpt = None,
    out: ReportOutOpt = None,
    as_json: JsonOpt = False,
    correlate: CorrelateOpt = False,
    plot: PlotOpt = None,
    metrics: ReportMetricsOpt = None,
) -> None:
    """Print ConvCodeWorld's tables: Pass@1 per turn, and MRR/Recall, per feedback setting.

    Example: [bold]convtui report --db results.db --correlate --plot figures[/bold]"""
    with user_errors():
        from convtui.benchmarks.commands.report import report_command

        report_command(
            db,
            run,
            out,
            as_json,
            correlate=correlate,
            plot=plot,
            metrics=metrics,
        )


@sessions_app.command("list")
def sessions_list(
    db: SessionDbOpt = Path("results.db"),
    task: SessionTaskOpt = None,
    status: SessionStatusOpt = None,
    user: SessionUserOpt = None,
    limit: LimitOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List recorded sessions, newest first.

    Example: [bold]convtui sessions list --user human --status solved[/bold]"""
    with user_errors():
        from convtui.commands.sessions import list_command

        list_command(
            db,
            task=task,
            status=status,
            user=user,
            limit=limit,
            as_json=as_json,
        )


@sessions_app.command("show")
def sessions_show(
    session_id: SessionIdArg,
    db: SessionDbOpt = Path("results.db"),
    as_json: JsonOpt = False,
) -> None:
    """Show one session as a transcript: each turn's code, tests and feedback.

    Example: [bold]convtui sessions show 01jv3k8mw2xq[/bold]"""
    with user_errors():
        from convtui.commands.sessions import show_command

        show_command(db, session_id, as_json)


@sessions_app.command("import")
def sessions_import(
    folder: ImportDirArg,
    db: ImportDbOpt = Path("results.db"),
    data: DataOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Load logs in ConvCodeWorld's static layout into the store: one run per reference
    model and Ω (--protocol convcodeworld), one session per task, browsable with sessions
    list/show and the app, and replayable with bench static. Importing again adds nothing.

    Example: [bold]convtui sessions import ConvCodeBench/ --db ccb.db[/bold]"""
    with user_errors():
        from convtui.commands.imports import import_command

        import_command(folder, db, as_json, data)


@sessions_app.command("merge")
def sessions_merge(
    sources: MergeSourcesArg,
    db: MergeDbOpt = Path("results.db"),
    as_json: JsonOpt = False,
) -> None:
    """Bring sessions recorded in other databases (an annotator's own file, recorded
    offline) into --db, under their ids, with their runs, turns, model calls, executions and
    study assignment links. Merging again adds nothing; a session that differs between the
    files is refused and the target left as it was. The sources are only read, and one holding
    what convtui could not have written (a link to another annotator's session, a status its
    turns do not bear out, a text under another's hash) is refused whole.

    Example: [bold]convtui sessions merge ana.db ben.db --db study.db[/bold]"""
    with user_errors():
        from convtui.commands.merge import merge_command

        merge_command(list(sources), db, as_json)


@sessions_app.command("export")
def sessions_export(
    ids: SessionIdsArg = None,
    db: SessionDbOpt = Path("results.db"),
    fmt: ExportFormatOpt = "jsonl",
    out: ExportOutOpt = None,
    all_sessions: ExportAllOpt = False,
    task: SessionTaskOpt = None,
    status: SessionStatusOpt = None,
    user: SessionUserOpt = None,
    include_unfinished: IncludeUnfinishedOpt = False,
    run: ExportRunOpt = None,
    model_name: ExportModelNameOpt = None,
) -> None:
    """Export sessions as JSONL transcripts, as ConvCodeBench-style static logs, or as
    CodeIF-Bench's completions file (--format codeif; bench codeif --score-only reads it).

    Example: [bold]convtui sessions export --user human --format convcodebench --out logs[/bold]"""
    with user_errors():
        from convtui.commands.sessions import ExportOptions, export_command

        export_command(
            ExportOptions(
                db=db,
                format=fmt,
                out=out,
                ids=tuple(ids or ()),
                all=all_sessions,
                task=task,
                status=tuple(status or ()),
                user=user,
                include_unfinished=include_unfinished,
                runs=tuple(run or ()),
                model_name=model_name,
            )
        )


@app.command()
def serve(
    db: StudyDbOpt,
    host: ServeHostOpt = "127.0.0.1",
    port: ServePortOpt = 8000,
    max_apps: ServeMaxAppsOpt = 32,
    data: DataOpt = None,
    model_name: ModelNameOpt = None,
    chat_template: ChatTemplateOpt = None,
    python: PythonOpt = None,
    jobs: JobsOpt = None,
    isolation: IsolationOpt = "auto",
    executor: ExecutorOpt = LOCAL,
) -> None:
    """Serve a study's app to annotators' browsers: each gives their token and gets their
    own assignments, in the same app as `session --study`.

    A wrong or missing token gets a refusal page and no app; each annotator's app is theirs
    alone (a second tab replaces the first). Loopback by default: put a reverse proxy with
    TLS in front to reach people elsewhere (README, Studies). The page loads nothing from
    outside this server.

    Example: [bold]convtui serve --db study.db --port 8000[/bold]"""
    with user_errors():
        from convtui.commands.serve import ServeOptions, serve_command
        from convtui.tui.launch import MachineOptions

        machine = MachineOptions(
            "all", data, model_name, chat_template, python, jobs, isolation, executor
        )
        serve_command(ServeOptions(db, host, port, machine, max_apps))


# --- convtui study: many annotators ---------------------------------------------------------------


@study_app.command("init")
def study_init(
    spec: StudyFileArg,
    db: StudyInitDbOpt,
    data: DataOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Create a study from its file, with each annotator's token, printed this once.

    Each task goes to `overlap` annotators, loads balanced and reproducible by the seed.

    Example: [bold]convtui study init STUDY.toml --db study.db[/bold]"""
    with user_errors():
        from convtui.commands.study import init_command

        init_command(spec, db, data, as_json)


@study_app.command("status")
def study_status(db: StudyDbOpt, as_json: JsonOpt = False) -> None:
    """Progress per annotator (done, started, pending, reassigned) and per task.

    Example: [bold]convtui study status --db study.db[/bold]"""
    with user_errors():
        from convtui.commands.study import status_command

        status_command(db, as_json)


@study_app.command("report")
def study_report(
    db: StudyDbOpt,
    target: StudyTargetOpt = None,
    as_json: JsonOpt = False,
    plot: StudyPlotOpt = None,
    data: DataOpt = None,
    concurrency: ConcurrencyOpt = None,
    python: PythonOpt = None,
    jobs: JobsOpt = None,
    isolation: IsolationOpt = "auto",
) -> None:
    """Progress, each annotator's MRR and Recall beside the simulated users', agreement.

    Scores: the annotators' own sessions with the study's model; with --target M, their
    sessions replayed against M (bench static), recorded in the study database. Simulated
    users' logs on the study's tasks (bench live ... --db study.db) are scored on the same
    tasks beside each annotator. Agreement on the tasks two or more annotators finished:
    Krippendorff's alpha on solved within the budget (nominal) and on turns to solve
    (interval; an unsolved session counts as the budget + 1).

    Example: [bold]convtui study report --db study.db --target http://127.0.0.1:8081/v1[/bold]"""
    with user_errors():
        from convtui.commands.study_report import ReplayOptions, report_command

        exit_code = report_command(
            db,
            tuple(target or ()),
            as_json,
            plot,
            ReplayOptions(data, concurrency, python, jobs, isolation),
        )
    raise typer.Exit(exit_code)


@study_app.command("token")
def study_token(name: AnnotatorNameArg, db: StudyDbOpt, as_json: JsonOpt = False) -> None:
    """Issue an annotator a new token (printed this once); their old one stops working.

    Example: [bold]convtui study token ana --db study.db[/bold]"""
    with user_errors():
        from convtui.commands.study import token_command

        token_command(db, name, as_json)


@study_app.command("add-annotator")
def study_add_annotator(
    name: AnnotatorNameArg,
    db: StudyDbOpt,
    tasks: AddTasksOpt = 0,
    as_json: JsonOpt = False,
) -> None:
    """Enrol an annotator, with a token and --tasks N assignments (the least covered tasks).

    Example: [bold]convtui study add-annotator dee --tasks 4 --db study.db[/bold]"""
    with user_errors():
        from convtui.commands.study import add_annotator_command

        add_annotator_command(db, name, tasks, as_json)


@study_app.command("reassign")
def study_reassign(name: AnnotatorNameArg, db: StudyDbOpt, as_json: JsonOpt = False) -> None:
    """An annotator leaves: their unfinished assignments go to others.

    Their token stops working; each assignment they had not finished goes to the least
    loaded annotator who does not have that task.

    Example: [bold]convtui study reassign ben --db study.db[/bold]"""
    with user_errors():
        from convtui.commands.study import reassign_command

        reassign_command(db, name, as_json)


@study_app.command("export")
def study_export(
    db: StudyDbOpt,
    out: StudyExportOutOpt,
    fmt: StudyExportFormatOpt = "parquet",
    force: StudyExportForceOpt = False,
    finished_only: FinishedOnlyOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Write the study's transcripts for sharing: one row per turn as Parquet, with a
    Hugging Face dataset card (README.md) so that datasets.load_dataset(OUT) reads them.

    Sessions still open are included with their status unless --finished-only.

    Example: [bold]convtui study export --db study.db --out pilot-dataset[/bold]"""
    with user_errors():
        from convtui.commands.study_export import export_command

        export_command(db, out, fmt, force=force, finished_only=finished_only, as_json=as_json)


# --- convtui projects: DevEval's projects ------------------------------------------------------


@projects_app.command("rebuild")
def projects_rebuild(
    names: ProjectNamesArg = None,
    projects: ProjectsDirOpt = None,
    tree: ProjectTreeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Rebuild DevEval's projects from PyPI source distributions, where a release holds every
    task's reference code at its recorded lines (core/projects/releases.toml says which), and
    build each one's environment. Needs PyPI, not the Hugging Face Hub. A project whose
    release lacks its tests takes them from its history: check out the commit releases.toml
    names and pass that folder with --tree.

    Example: [bold]convtui projects rebuild sqlitedict[/bold]"""
    with user_errors():
        from convtui.commands.project_builds import rebuild_command

        exit_code = rebuild_command(names or [], projects, as_json, tree)
    raise typer.Exit(exit_code)


@projects_app.command("list")
def projects_list(projects: ProjectsDirOpt = None, as_json: JsonOpt = False) -> None:
    """List the 42 projects the repository tasks need: their levels and tasks, where the copy
    here came from, whether its environment is built, and how many of its tasks can run.

    Example: [bold]convtui projects list[/bold]"""
    with user_errors():
        from convtui.commands.project_builds import list_command

        list_command(projects, as_json)


@projects_app.command("fetch")
def projects_fetch(
    projects: ProjectsDirOpt = None,
    url: ArchiveUrlOpt = None,
    sha256: ArchiveSha256Opt = None,
    keep_archive: KeepArchiveOpt = False,
) -> None:
    """Download DevEval's archive of the 42 projects the repository tasks run inside
    (Source_Code.tar.gz, about 0.9 GB, from the Hugging Face dataset LJ0815/DevEval) and
    unpack it as Source_Code/ under the projects root (--projects, else
    $CONVTUI_PROJECTS_DIR, else ~/.cache/convtui/projects). An interrupted download resumes
    where it stopped when run again; an archive whose SHA-256 differs is deleted and nothing
    is unpacked. Needs the Hub (or a mirror); without it, `convtui projects rebuild`.

    Example: [bold]convtui projects fetch[/bold]"""
    with user_errors():
        from convtui.commands.projects import fetch_command

        fetch_command(projects, url, sha256, keep_archive)
