"""``convtui report``, ``convtui compare`` and ``convtui sessions``: what was recorded."""

from __future__ import annotations

from pathlib import Path

import typer

from convtui.compare_options import (
    CompareByOpt,
    CompareDbOpt,
    CompareFeedbackOpt,
    CompareKindOpt,
    CompareMetricOpt,
    CompareModelOpt,
    ComparePlotOpt,
    CompareResamplesOpt,
    CompareRunOpt,
    CompareSeedOpt,
    CompareSideOpt,
    PlanBaselineOpt,
    PlanCorrelationOpt,
    PlanDifferenceOpt,
    PlanOpt,
    PlanTasksOpt,
)
from convtui.errors import user_errors
from convtui.options import DataOpt, DbOpt, IdsOpt, JsonOpt, ReportMetricsOpt
from convtui.record_options import (
    CorrelateOpt,
    ExportAllOpt,
    ExportFormatOpt,
    ExportModelNameOpt,
    ExportOutOpt,
    ExportRunOpt,
    ImportDbOpt,
    ImportDirArg,
    IncludeUnfinishedOpt,
    IntervalResamplesOpt,
    IntervalSeedOpt,
    LimitOpt,
    MergeAnnotatorOpt,
    MergeDbOpt,
    MergeDryRunOpt,
    MergeMaxBytesOpt,
    MergeMaxSecondsOpt,
    MergeMaxSessionsOpt,
    MergeMaxTurnsOpt,
    MergeSourcesArg,
    MergeUndoOpt,
    NoIntervalsOpt,
    PlotOpt,
    ReportOutOpt,
    ReportRunOpt,
    SessionDbOpt,
    SessionIdArg,
    SessionIdsArg,
    SessionStatusOpt,
    SessionTaskOpt,
    SessionUserOpt,
)

sessions_app = typer.Typer(
    no_args_is_help=True, help="Browse and export recorded sessions (TUI and benchmark runs)."
)


def report(
    db: DbOpt = Path("results.db"),
    run: ReportRunOpt = None,
    out: ReportOutOpt = None,
    as_json: JsonOpt = False,
    correlate: CorrelateOpt = False,
    plot: PlotOpt = None,
    metrics: ReportMetricsOpt = None,
    seed: IntervalSeedOpt = 0,
    resamples: IntervalResamplesOpt = 2000,
    no_intervals: NoIntervalsOpt = False,
) -> None:
    """Print ConvCodeWorld's tables: Pass@1 per turn, and MRR/Recall, per feedback setting,
    each number with its 95% bootstrap interval over tasks.

    Example: [bold]convtui report --db results.db --correlate --plot figures[/bold]"""
    with user_errors():
        from convtui.benchmarks.commands.report import Uncertainty, report_command

        report_command(
            db,
            run,
            out,
            as_json,
            correlate=correlate,
            plot=plot,
            metrics=metrics,
            uncertainty=Uncertainty(not no_intervals, seed, resamples),
        )


def compare(
    db: CompareDbOpt = None,
    by: CompareByOpt = None,
    side: CompareSideOpt = None,
    model: CompareModelOpt = None,
    feedback: CompareFeedbackOpt = None,
    run: CompareRunOpt = None,
    ids: IdsOpt = None,
    kind: CompareKindOpt = None,
    metric: CompareMetricOpt = None,
    seed: CompareSeedOpt = 0,
    resamples: CompareResamplesOpt = 2000,
    as_json: JsonOpt = False,
    plan: PlanOpt = False,
    tasks: PlanTasksOpt = None,
    baseline: PlanBaselineOpt = None,
    correlation: PlanCorrelationOpt = None,
    difference: PlanDifferenceOpt = None,
    plot: ComparePlotOpt = None,
) -> None:
    """Is a difference real? Compare models, feedback settings, runs, databases,
    annotators or log sets, paired on the tasks they share: per metric each side's value, the
    difference with its bootstrap interval over tasks, an exact paired test, the tasks that
    flip each way, ranks and groups for more than two sides, and the smallest difference the
    tasks would detect. With --plan, what a planned number of tasks can detect.

    Example: [bold]convtui compare --db results.db --by model[/bold]"""
    with user_errors():
        from convtui.benchmarks.commands import compare as body

        sizing = (tasks, baseline, correlation, difference)
        if plan:
            body.plan_command(
                tasks, *body.plan_defaults(baseline, correlation), difference, as_json
            )
            return
        body.refuse_plan_options(sizing)
        body.compare_command(
            body.CompareRequest(
                dbs=tuple(db or [Path("results.db")]),
                selection=body.Selection(
                    models=tuple(model or ()),
                    feedback=tuple(label for f in feedback or () for label in f.labels),
                    runs=tuple(run or ()),
                    ids=ids,
                ),
                by=by,
                sides=tuple(side or ()),
                kind=kind,
                metrics=tuple(
                    m.strip() for item in metric or () for m in item.split(",") if m.strip()
                ),
                bootstrap=body.Bootstrap(resamples=resamples, seed=seed),
                as_json=as_json,
                plot=plot,
            )
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
        from convtui.benchmarks.commands.records.sessions import list_command

        list_command(db, task=task, status=status, user=user, limit=limit, as_json=as_json)


@sessions_app.command("show")
def sessions_show(
    session_id: SessionIdArg,
    db: SessionDbOpt = Path("results.db"),
    as_json: JsonOpt = False,
) -> None:
    """Show one session as a transcript: each turn's code, tests and feedback.

    Example: [bold]convtui sessions show 01jv3k8mw2xq[/bold]"""
    with user_errors():
        from convtui.benchmarks.commands.records.sessions import show_command

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
        from convtui.benchmarks.commands.records.imports import import_command

        import_command(folder, db, as_json, data)


@sessions_app.command("merge")
def sessions_merge(
    sources: MergeSourcesArg = None,
    db: MergeDbOpt = Path("results.db"),
    annotator: MergeAnnotatorOpt = None,
    dry_run: MergeDryRunOpt = False,
    undo: MergeUndoOpt = False,
    max_sessions: MergeMaxSessionsOpt = 2_000,
    max_turns: MergeMaxTurnsOpt = 20_000,
    max_bytes: MergeMaxBytesOpt = 1024**3,
    max_seconds: MergeMaxSecondsOpt = 120.0,
    as_json: JsonOpt = False,
) -> None:
    """Bring sessions recorded in other databases (an annotator's own file, recorded
    offline) into --db, under their ids, with their runs, turns, model calls, executions and
    study assignment links. Merging again adds nothing; a session that differs between the
    files is refused and the target left as it was. The sources are only read, and one holding
    what convtui could not have written (a link to another annotator's session, a status its
    turns do not bear out, a text under another's hash) is refused whole, as is one past a
    cap (--max-sessions, --max-turns, --max-bytes, --max-seconds) or holding sessions of
    someone other than --annotator. --dry-run says what would be added; --undo takes the
    last merge back.

    Example: [bold]convtui sessions merge ana.db --annotator ana --db study.db[/bold]"""
    with user_errors():
        from convtui.benchmarks.commands.records.merge import merge_command, undo_command
        from convtui.sessions.merging.merge import MergeOptions
        from convtui.sessions.merging.merge_limits import MergeLimits

        if undo:
            undo_command(list(sources or ()), db, dry_run=dry_run, as_json=as_json)
            return
        limits = MergeLimits(max_sessions, max_turns, max_bytes, max_seconds)
        options = MergeOptions(limits, frozenset(annotator or ()), dry_run)
        merge_command(list(sources or ()), db, options, as_json)


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
        from convtui.benchmarks.commands.records.sessions import ExportOptions, export_command

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
