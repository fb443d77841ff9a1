"""``convtui study``: many annotators (init, status, token, add-annotator, reassign, export,
report, fidelity)."""

from __future__ import annotations

import typer

from convtui.errors import user_errors
from convtui.option_groups import ExecutorGroup, takes_groups
from convtui.options import ConcurrencyOpt, DataOpt, JsonOpt
from convtui.study_options import (
    AddTasksOpt,
    AnnotatorNameArg,
    FidelityDbOpt,
    FidelityPersonaOpt,
    FidelityPromptsOpt,
    FidelityProtocolOpt,
    FidelitySimulatorOpt,
    FidelityTargetOpt,
    FiguresOpt,
    FinishedOnlyOpt,
    ReportResamplesOpt,
    ReportSeedOpt,
    ResamplesOpt,
    SeedOpt,
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
    no_args_is_help=True,
    help="Human-feedback studies: tasks dealt to annotators, their tokens and progress.",
)


@app.command("init")
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
        from convtui.benchmarks.commands.study.study_admin import init_command

        init_command(spec, db, data, as_json)


@app.command("status")
def study_status(db: StudyDbOpt, as_json: JsonOpt = False) -> None:
    """Progress per annotator (done, started, pending, reassigned) and per task.

    Example: [bold]convtui study status --db study.db[/bold]"""
    with user_errors():
        from convtui.benchmarks.commands.study.study_admin import status_command

        status_command(db, as_json)


@app.command("report")
@takes_groups
def study_report(
    *,
    db: StudyDbOpt,
    target: StudyTargetOpt = None,
    as_json: JsonOpt = False,
    plot: StudyPlotOpt = None,
    data: DataOpt = None,
    concurrency: ConcurrencyOpt = None,
    executor: ExecutorGroup,
    seed: ReportSeedOpt = 0,
    resamples: ReportResamplesOpt = 2000,
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
        from convtui.benchmarks.commands.study.study_report import ReplayOptions, report_command
        from convtui.core.metrics.stats import Bootstrap

        exit_code = report_command(
            db,
            tuple(target or ()),
            as_json,
            plot,
            ReplayOptions(data, concurrency, executor.settings()),
            Bootstrap(resamples=resamples, seed=seed),
        )
    raise typer.Exit(exit_code)


@app.command("token")
def study_token(name: AnnotatorNameArg, db: StudyDbOpt, as_json: JsonOpt = False) -> None:
    """Issue an annotator a new token (printed this once); their old one stops working.

    Example: [bold]convtui study token ana --db study.db[/bold]"""
    with user_errors():
        from convtui.benchmarks.commands.study.study_admin import token_command

        token_command(db, name, as_json)


@app.command("add-annotator")
def study_add_annotator(
    name: AnnotatorNameArg,
    db: StudyDbOpt,
    tasks: AddTasksOpt = 0,
    as_json: JsonOpt = False,
) -> None:
    """Enrol an annotator, with a token and --tasks N assignments (the least covered tasks).

    Example: [bold]convtui study add-annotator dee --tasks 4 --db study.db[/bold]"""
    with user_errors():
        from convtui.benchmarks.commands.study.study_admin import add_annotator_command

        add_annotator_command(db, name, tasks, as_json)


@app.command("reassign")
def study_reassign(name: AnnotatorNameArg, db: StudyDbOpt, as_json: JsonOpt = False) -> None:
    """An annotator leaves: their unfinished assignments go to others.

    Their token stops working; each assignment they had not finished goes to the least
    loaded annotator who does not have that task.

    Example: [bold]convtui study reassign ben --db study.db[/bold]"""
    with user_errors():
        from convtui.benchmarks.commands.study.study_admin import reassign_command

        reassign_command(db, name, as_json)


@app.command("export")
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
        from convtui.benchmarks.commands.study.study_export import export_command

        export_command(db, out, fmt, force=force, finished_only=finished_only, as_json=as_json)


@app.command("fidelity")
@takes_groups
def study_fidelity(
    *,
    db: FidelityDbOpt,
    simulator: FidelitySimulatorOpt = None,
    target: FidelityTargetOpt = None,
    persona: FidelityPersonaOpt = None,
    protocol: FidelityProtocolOpt = None,
    prompts: FidelityPromptsOpt = None,
    as_json: JsonOpt = False,
    seed: SeedOpt = 0,
    resamples: ResamplesOpt = 2000,
    figures: FiguresOpt = None,
    data: DataOpt = None,
    concurrency: ConcurrencyOpt = None,
    executor: ExecutorGroup,
) -> None:
    """Is the simulated user a person? Each simulator's feedback on the states where a person
    gave theirs, and what each feedback is worth when a target model acts on it.

    For every turn of a human or assisted session that carries a person's words (in a study
    or not), each --simulator is asked for its feedback on exactly what the person saw; then
    the person's words, each simulator's, an assisted session's draft and none at all (the
    control) are each handed to each --target for one turn, whose code runs in the sandbox.
    Report: per source the gain over none, per annotator the worth of their words, the
    person against each simulator on the same states (bootstrap intervals, sign test), and
    what the words are (length, failing test or error named, reference given away, the same
    problem pointed at: lexical only). Everything is recorded beside the sessions, which
    stay as they were: the same command again asks and runs nothing.

    Example: [bold]convtui study fidelity --db study.db --simulator http://127.0.0.1:8000/v1
    --target http://127.0.0.1:8001/v1[/bold]"""
    with user_errors():
        from convtui.benchmarks.commands.study.study_fidelity import (
            FidelityOptions,
            fidelity_command,
        )

        options = FidelityOptions(
            db,
            tuple(simulator or ()),
            tuple(target or ()),
            tuple(persona or ()),  # type: ignore[arg-type]  # click checked each
            protocol,
            data,
            concurrency,
            executor.settings(),
            seed,
            resamples,
            quiet=as_json,
            prompts=tuple(prompts or ("convtui",)),  # type: ignore[arg-type]  # click checked each
        )
        exit_code = fidelity_command(options, as_json, figures)
    raise typer.Exit(exit_code)
