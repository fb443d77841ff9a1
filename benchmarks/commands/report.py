"""Wiring for ``convtui report``: read outcomes from the store, build, write and print the
tables; with ``--correlate`` the live-vs-static rank correlations, with ``--plot`` the figures
(benchmarks/reports/plots.py, imported only then: matplotlib is slow to import). Every number
comes with its interval over tasks unless ``--no-intervals`` (benchmarks/reports/intervals.py,
imported only for them: numpy is slow to import too)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

from convtui.benchmarks.output import console, print_json, print_table, warning_line
from convtui.benchmarks.reports.codeif_report import (
    CodeifGroup,
    CodeifSession,
    build_groups,
    categories_csv,
    codeif_json,
    codeif_tables,
    metrics_notes,
    read_codeif,
    rounds_csv,
)
from convtui.benchmarks.reports.correlate import (
    INTERVAL_UNIT,
    NO_STATIC,
    CorrelationRow,
    correlate_columns,
    correlation_json,
    correlation_table,
)
from convtui.benchmarks.reports.report import (
    Outcome,
    Report,
    StaticColumn,
    build_report,
    model_notes,
    pass_table,
    report_file_names,
    summary_table,
)
from convtui.benchmarks.reports.static_report import (
    Replayed,
    build_static_columns,
    static_pass_csv,
    static_pass_table,
    static_summary_csv,
    static_summary_table,
)
from convtui.core.errors import ConvtuiError
from convtui.core.plural import noun
from convtui.sessions import Store
from convtui.sessions.reading.results import (
    SessionOutcome,
    run_outcomes,
    run_turn_passes,
    session_turn_passes,
    static_outcomes,
)

if TYPE_CHECKING:  # the classes only: importing stats imports numpy
    from rich.table import Table

    from convtui.benchmarks.reports.codeif_standings import Standings
    from convtui.core.metrics.stats import Bootstrap


@dataclass(frozen=True)
class Uncertainty:
    """How ``report`` draws its intervals (``--seed``, ``--resamples``), or that it draws none
    (``--no-intervals``: no bootstrap work, and numpy is never imported)."""

    intervals: bool = True
    seed: int = 0
    resamples: int = 2000

    def bootstrap(self) -> Bootstrap | None:
        if not self.intervals:
            return None
        from convtui.core.metrics.stats import Bootstrap

        try:
            return Bootstrap(resamples=self.resamples, seed=self.seed)
        except ValueError as exc:  # a library caller's bad value: one line, as the CLI's
            raise ConvtuiError(str(exc)) from None


def report_command(
    db: Path,
    run_ids: Sequence[str] | None,
    out: Path | None,
    as_json: bool,
    correlate: bool = False,
    plot: Path | None = None,
    metrics: str | None = None,
    uncertainty: Uncertainty = Uncertainty(),
) -> None:
    if not db.exists():
        raise ConvtuiError(f"no results database at {db}: run convtui bench live first")
    bootstrap = uncertainty.bootstrap()
    steps = 4 + bool(bootstrap) + bool(correlate or plot) + bool(plot)
    with report_progress(steps, show=not as_json) as step:
        step("reading live results")
        report = make_report(db, run_ids)
        step("reading static (replayed) results")
        static = static_results(db, run_ids)
        step("reading CodeIF-Bench rounds")
        codeif = codeif_results(db, run_ids, metrics)
        if not report.columns and not static and not codeif[0]:
            raise ConvtuiError(
                f"no benchmark sessions in {db}"
                + (f" for {noun(len(run_ids), 'run')} {', '.join(run_ids)}" if run_ids else "")
                + ": run convtui bench live, bench static or bench codeif first"
            )
        if bootstrap is not None:
            step("drawing intervals over tasks")
            report, static, codeif = add_intervals(report, static, codeif, bootstrap)
        # Drawn once: the files, the JSON and the tables all show the same standings.
        standings = codeif_standings(codeif[0], bootstrap) if bootstrap and codeif[0] else None
        step("writing tables")
        files = write_files(report, static, out or db.parent, db.stem, codeif, bootstrap, standings)
        correlations: tuple[CorrelationRow, ...] = ()
        if correlate or (plot and static):
            # scipy comes with the exec extra; the message names it rather than a traceback.
            need("scipy", "--correlate" if correlate else "--plot")
            step("correlating live and static scores")
            correlations = correlate_columns(report.columns, static, bootstrap)
        plots: list[Path] = []
        plot_notes: list[str] = []
        if plot is not None:
            need("matplotlib", "--plot")
            step("drawing plots")
            from convtui.benchmarks.reports.plots import write_plots

            plots, plot_notes = write_plots(
                report, static, correlations, plot, db.stem, codeif_groups=codeif[0]
            )
    if as_json:
        data = {
            **report_json(report, static, codeif, bootstrap, standings),
            "files": [str(f) for f in files],
        }
        if correlate:
            data["correlation"] = correlation_json(correlations, len(static), bootstrap)
        if plot is not None:
            data["plots"] = [str(p) for p in plots]
            data["plots_skipped"] = plot_notes
        print_json(data)
        return
    screen = console()
    for warning in report.warnings:  # a header above the tables they qualify
        screen.print(warning_line(warning), soft_wrap=True)
    models = [
        *(c.model for c in report.columns),
        *(c.model for c in static),
        *(g.model for g in codeif[0]),
    ]
    for note in model_notes(models):
        screen.print(Text.assemble(("note: ", "bold"), note), soft_wrap=True)
    method = bootstrap.method() if bootstrap else ""
    if report.columns:
        print_table(screen, pass_table(report, method))
        print_table(
            screen,
            summary_table(
                report,
                [
                    "MRR: mean of 1/(k+1) over tasks, k the first passing turn (0 if never).",
                    "Recall: share of tasks solved at some turn. Turns count from 0.",
                ],
                method,
            ),
        )
    if static:
        print_table(screen, static_pass_table(static, method))
        print_table(screen, static_summary_table(static, method))
    if codeif[0]:
        for table in codeif_tables(codeif[0], method):
            print_table(screen, table)
        if standings is not None and bootstrap is not None:
            for table in codeif_ranking_tables(standings, bootstrap):
                print_table(screen, table)
        for note in metrics_notes(codeif[0]).values():
            screen.print(note, soft_wrap=True)
    if correlate:
        if static:
            unit = INTERVAL_UNIT
            print_table(
                screen,
                correlation_table(correlations, bootstrap.method(unit) if bootstrap else ""),
            )
        else:  # the same reason on every row: one line says it
            screen.print(f"live vs static rank correlation: {NO_STATIC}", soft_wrap=True)
    screen.print(f"written: {', '.join(str(f) for f in files)}", soft_wrap=True)
    for note in plot_notes:
        screen.print(note, soft_wrap=True)
    if plots:
        screen.print(f"plots: {', '.join(str(p) for p in plots)}", soft_wrap=True)


@contextmanager
def report_progress(steps: int, show: bool) -> Iterator[Callable[[str], None]]:
    """A progress bar over the report's ``steps`` on stderr (reading a large database and
    drawing plots take a while), gone once done; none for ``--json`` or in CI."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=console(stderr=True),
        transient=True,
        disable=not show or os.environ.get("CI") == "true",
    ) as progress:
        task = progress.add_task("report", total=steps)
        started = False

        def step(what: str) -> None:
            nonlocal started
            progress.update(task, description=what, advance=1 if started else 0)
            started = True

        yield step
        progress.update(task, completed=steps)


CodeifResults = tuple[tuple[CodeifGroup, ...], tuple[CodeifSession, ...]]


def report_json(
    report: Report,
    static: Sequence[StaticColumn],
    codeif: CodeifResults = ((), ()),
    bootstrap: Bootstrap | None = None,
    standings: Standings | None = None,
) -> dict:
    """The report as JSON; ``uncertainty`` says how the ``*_interval`` keys were drawn (None:
    ``--no-intervals``, and there are none); ``standings`` the CodeIF-Bench models ranked (None:
    none drawn)."""
    data = {**report.to_json(), "static": [c.to_json() for c in static]}
    if codeif[0]:
        data["codeif"] = codeif_json(*codeif)
        if standings is not None:
            data["codeif"]["standings"] = standings.to_json()
    data["uncertainty"] = bootstrap.to_json() if bootstrap else None
    return data


def codeif_standings(groups: Sequence[CodeifGroup], bootstrap: Bootstrap) -> Standings:
    """The CodeIF-Bench models ranked per cell and each model's protocol shift (numpy is
    imported only here)."""
    from convtui.benchmarks.reports.codeif_standings import standings

    return standings(groups, bootstrap)


def codeif_ranking_tables(standings: Standings, bootstrap: Bootstrap) -> list[Table]:
    from convtui.benchmarks.reports.codeif_standings import ranking_tables

    return ranking_tables(standings, bootstrap.method())


def add_intervals(
    report: Report,
    static: Sequence[StaticColumn],
    codeif: CodeifResults,
    bootstrap: Bootstrap,
) -> tuple[Report, tuple[StaticColumn, ...], CodeifResults]:
    """Every column and group of the report with its intervals over tasks."""
    from convtui.benchmarks.reports import intervals

    groups = tuple(intervals.codeif_with_intervals(g, bootstrap) for g in codeif[0])
    return (
        intervals.report_with_intervals(report, bootstrap),
        intervals.static_with_intervals(static, bootstrap),
        (groups, codeif[1]),
    )


def codeif_results(
    db: Path, run_ids: Sequence[str] | None, metrics: str | None = None
) -> CodeifResults:
    """The CodeIF-Bench groups and sessions of ``db`` (or of ``run_ids``), scored by
    ``metrics`` (None: each run's recorded definition)."""
    with Store.open(db) as store:
        sessions = read_codeif(store, run_ids, metrics)
    return build_groups(sessions), sessions


def need(module: str, flag: str, extra: str = "exec") -> None:
    """Refuse in one line, before any work, when ``flag`` needs a package of an extra that
    is not installed."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise ConvtuiError(f'{flag} needs {module}: pip install -e ".[{extra}]"')


def static_results(db: Path, run_ids: Sequence[str] | None) -> tuple[StaticColumn, ...]:
    """The static (replayed, ConvCodeBench) columns of ``db``: every static run's sessions
    (or those among ``run_ids``), each paired with the reference session it replayed."""
    with Store.open(db) as store:
        replayed = read_replayed(store, run_ids)
    return build_static_columns(replayed) if replayed else ()


def read_replayed(store: Store, run_ids: Sequence[str] | None) -> list[Replayed]:
    """The replayed BigCodeBench sessions of the static runs of ``store`` (or those among
    ``run_ids``), each with its verdicts and its reference's."""
    outcomes = static_outcomes(store, list(run_ids) if run_ids else None)
    # CodeIF-Bench replays have their own tables (codeif_results).
    benchmarks = {r: store.run(r).benchmark for r in {o.run_id for o in outcomes}}
    outcomes = [o for o in outcomes if benchmarks[o.run_id] == "bigcodebench"]
    if not outcomes:
        return []
    passes = session_turn_passes(
        store,
        [o.session_id for o in outcomes] + [o.reference_session_id for o in outcomes],
    )
    configs = {r: store.run(r).config for r in {o.run_id for o in outcomes}}
    return [
        Replayed(
            run_id=o.run_id,
            model=o.model,
            feedback=o.feedback,
            protocol=configs[o.run_id].protocol,
            context=configs[o.run_id].context,
            task_id=o.task_id,
            reference_model=o.reference_model,
            user_kind=o.user_kind,
            simulator=o.simulator,
            annotator=o.annotator,
            max_turns=o.max_turns,
            target=passes.get(o.session_id, ()),
            reference=passes.get(o.reference_session_id, ()),
            reference_session_id=o.reference_session_id,
        )
        for o in outcomes
    ]


def make_report(db: Path, run_ids: Sequence[str] | None) -> Report:
    with Store.open(db) as store:
        outcomes = run_outcomes(store, list(run_ids) if run_ids else None)
        # Replays (static runs) are not live results: static_results reads them; CodeIF-Bench
        # runs have their own tables (codeif_results).
        runs = {r: store.run(r) for r in {o.run_id for o in outcomes}}
        live = {
            r for r, row in runs.items() if row.benchmark == "bigcodebench" and row.mode == "live"
        }
        outcomes = [o for o in outcomes if o.run_id in live]
        if not outcomes:  # a database of replays only: the static tables stand alone
            return Report((), 0)
        # The newest run wins when several runs hold the same task under the same setting.
        newest: dict[tuple[str, str, str], SessionOutcome] = {}
        for o in sorted(outcomes, key=lambda o: o.run_id):
            newest[(o.model, o.feedback, o.task_id)] = o
        # Only the runs whose sessions made it into the tables: their isolation is reported.
        used = sorted({o.run_id for o in newest.values()})
        isolation = {r: store.run(r).config.isolation for r in used}
        passes = run_turn_passes(store, used)
        # A config recorded before protocols existed reads as convtui (SessionConfig's
        # default): those runs followed our own rules, not the reference's.
        protocols = {r: store.run(r).config.protocol for r in used}
    report = build_report(
        Outcome(
            model=o.model,
            feedback=o.feedback,
            task_id=o.task_id,
            turn_passes=passes.get(o.session_id, ()),
            max_turns=o.max_turns,
            status=o.status,
            protocol=protocols[o.run_id],
        )
        for o in newest.values()
    )
    return replace(report, isolation=isolation)


def write_files(
    report: Report,
    static: Sequence[StaticColumn],
    folder: Path,
    stem: str,
    codeif: CodeifResults = ((), ()),
    bootstrap: Bootstrap | None = None,
    standings: Standings | None = None,
) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    texts: dict[str, str] = {}
    if report.columns:
        texts["pass-at-turn.csv"] = report.pass_csv()
        texts["mrr-recall.csv"] = report.summary_csv()
    if static:
        texts["static-pass-at-turn.csv"] = static_pass_csv(static)
        texts["static-mrr-recall.csv"] = static_summary_csv(static)
    if codeif[0]:
        texts["codeif-rounds.csv"] = rounds_csv(codeif[0])
        texts["codeif-categories.csv"] = categories_csv(codeif[0])
    data = report_json(report, static, codeif, bootstrap, standings)
    texts["report.json"] = json.dumps(data, indent=2) + "\n"
    names = report_file_names(stem, [name.rsplit(".", 1)[0] for name in texts])
    files: list[Path] = []
    for name, text in texts.items():
        base, extension = name.rsplit(".", 1)
        path = folder / f"{names[base]}.{extension}"
        path.write_text(text, encoding="utf-8")
        files.append(path)
    return files
