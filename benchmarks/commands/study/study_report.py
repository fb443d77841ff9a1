"""Wiring for ``convtui study report``: a study's progress, each annotator's MRR and Recall
(with the study's model, and replayed against each ``--target``) beside the simulated users'
on the same tasks, the annotators' agreement on the tasks several of them did, and each
annotator's time per turn (core/studies/person_times.py).

The store is read in sessions/studies/study_results.py, the replays are ``bench static``'s
(benchmarks/commands/static.py ``replay_log_sets``: recorded in the study database, so the
same report again replays nothing), the scores are ``convtui report``'s and core/metrics/scores.py's
(benchmarks/commands/study/study_scores.py), the agreement core/studies/agreement.py's. Printed by
benchmarks/commands/study/study_report_views.py; drawn by study_plots.py."""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from convtui.benchmarks.commands.report import need, read_replayed
from convtui.benchmarks.commands.static import ReplayedSet, StaticOptions, replay_log_sets
from convtui.benchmarks.commands.study.study_admin import study_progress
from convtui.benchmarks.commands.study.study_report_result import StudyReport
from convtui.benchmarks.commands.study.study_report_views import print_report, report_json
from convtui.benchmarks.commands.study.study_scores import (
    Scoring,
    Simulated,
    live_terms,
    score_groups,
    static_scores,
    static_terms,
)
from convtui.benchmarks.output import print_json
from convtui.benchmarks.reports.static_report import Replayed
from convtui.benchmarks.settings import (
    ExecutorSettings,
    ModelSettings,
    RunTarget,
    TaskSelection,
    suite_for,
)
from convtui.core.metrics.stats import Bootstrap
from convtui.core.settings.persona import STUDY_BASELINE
from convtui.core.studies.agreement import agreement
from convtui.core.studies.outcomes import TaskOutcome, live_scores
from convtui.core.studies.person_times import summarize
from convtui.sessions import Store
from convtui.sessions.reading.log_sets import LogSet, LogSetFilter
from convtui.sessions.reading.results import session_turn_passes
from convtui.sessions.studies.study_results import (
    annotator_log_sets,
    finished_sessions,
    simulated_log_sets,
)
from convtui.sessions.studies.study_rows import StudyRow, open_study


@dataclass(frozen=True)
class ReplayOptions:
    """How ``--target`` replays run: the data, the executor, sessions at once."""

    data: Path | None = None
    concurrency: int | None = None
    executor: ExecutorSettings = field(default_factory=ExecutorSettings)


def build_report(
    db: Path,
    targets: Sequence[str],
    replay: ReplayOptions,
    quiet: bool = False,
    bootstrap: Bootstrap | None = None,
) -> StudyReport:
    """Read the study at ``db``, replay its finished sessions against each of ``targets``
    (and the simulated users' logs on its tasks, to set beside them), and score it all, with
    intervals drawn as ``bootstrap`` says (the defaults: 2,000 resamples, seed 0)."""
    boot = bootstrap or Bootstrap()
    with open_study(db) as (store, study):
        progress = study_progress(store, study)
        tasks = [t.task_id for t in progress.tasks]
        sessions = finished_sessions(store, study.id)
        simulated = simulated_log_sets(store, tasks)
        sim_passes = session_turn_passes(store, [r.id for s in simulated for r in s.sessions])
        log_sets = annotator_log_sets(store, sessions)
        times = store.human_turn_times(s.session.id for s in sessions)
    names = [p.name for p in progress.annotators]
    per_turn = {
        name: summarize(
            (t.shown_to_sent_s, t.typing_s)
            for s in sessions
            if s.annotator == name
            for t in times.get(s.session.id, {}).values()
        )
        for name in names
    }
    outcomes = {
        name: [
            TaskOutcome(s.session.task_id, s.passes, s.session.max_turns)
            for s in sessions
            if s.annotator == name
        ]
        for name in names
    }
    sims = tuple(Simulated.of(s) for s in simulated)
    own = Scoring(
        study.config.model,
        False,
        sims,
        score_groups(
            names,
            {name: {o.task_id: o for o in mine} for name, mine in outcomes.items()},
            [
                {
                    r.task_id: TaskOutcome(r.task_id, sim_passes.get(r.id, ()), r.max_turns)
                    for r in s.sessions
                }
                for s in simulated
            ],
            live_scores,
            live_terms,
            boot,
        ),
        bootstrap=boot,
    )
    replayed = _replayed(db, targets, names, log_sets, simulated, sims, replay, quiet, boot)
    return StudyReport(
        study,
        db,
        progress,
        outcomes,
        (own, *replayed),
        agreement({name: mine for name, mine in outcomes.items() if mine}),
        None if simulated else record_simulated_command(study, tasks, db),
        per_turn,
    )


def _replayed(
    db: Path,
    targets: Sequence[str],
    names: Sequence[str],
    log_sets: dict[str, LogSet],
    simulated: Sequence[LogSet],
    sims: tuple[Simulated, ...],
    options: ReplayOptions,
    quiet: bool,
    boot: Bootstrap,
) -> list[Scoring]:
    """A scoring per target: the annotators' log sets and the simulated ones replayed."""
    # bench static replays BigCodeBench's feedback turns; CodeIF-Bench conversations are
    # bench codeif's to replay.
    mine = {name: _bigcodebench(s) for name, s in log_sets.items()}
    theirs = [_bigcodebench(s) for s in simulated]
    # An annotator's set is keyed by their name, a simulated one by its position.
    keyed: list[tuple[str | int, LogSet]] = [(n, s) for n, s in mine.items() if s.sessions]
    keyed += [(i, s) for i, s in enumerate(theirs) if s.sessions]
    scorings = []
    for target in dict.fromkeys(targets):
        done = asyncio.run(_replay(db, target, [s for _k, s in keyed], options, quiet))
        replayed = _replayed_by_run(db, done)
        units = {key: replayed.get(r.run_id, {}) for (key, _s), r in zip(keyed, done, strict=True)}
        scorings.append(
            Scoring(
                target,
                True,
                sims,
                score_groups(
                    names,
                    {name: units.get(name, {}) for name in mine},
                    [units.get(i, {}) for i in range(len(theirs))],
                    static_scores,
                    static_terms,
                    boot,
                ),
                runs=tuple(r.run_id for r in done),
                failed=sum(r.failed for r in done),
                bootstrap=boot,
            )
        )
    return scorings


def _bigcodebench(log_set: LogSet) -> LogSet:
    kept = tuple(r for r in log_set.sessions if suite_for(r.task_id, "all") == "bigcodebench")
    return replace(log_set, sessions=kept)


async def _replay(
    db: Path, target: str, sets: Sequence[LogSet], options: ReplayOptions, quiet: bool
) -> list[ReplayedSet]:
    """``sets`` replayed against ``target`` into ``db`` (in their order; none for none)."""
    if not sets:
        return []
    static = StaticOptions(
        logs=db,
        models=ModelSettings(target),
        wanted=LogSetFilter(),
        selection=TaskSelection("all", options.data),
        executor=options.executor,
        target=RunTarget(db, options.concurrency, quiet),
    )
    with Store.open(db) as store:
        return await replay_log_sets(store, static, sets)


def _replayed_by_run(db: Path, done: Sequence[ReplayedSet]) -> dict[str, dict[str, Replayed]]:
    """Run id -> the run's replayed sessions by task, for the runs of ``done``."""
    if not done:  # read_replayed reads every static run when given none
        return {}
    with Store.open(db) as store:
        replayed = read_replayed(store, [r.run_id for r in done])
    by_run: dict[str, dict[str, Replayed]] = {}
    for r in replayed:
        by_run.setdefault(r.run_id, {})[r.task_id] = r
    return by_run


def record_simulated_command(study: StudyRow, tasks: Sequence[str], db: Path) -> str:
    """The command that records an expert simulated user on the study's tasks under its
    model, protocol, execution feedback and budget, into the study database."""
    config = study.config
    omega = replace(config.feedback, verbal=STUDY_BASELINE).label
    bcb = "BigCodeBench/"
    ids = ",".join(t.removeprefix(bcb) for t in tasks)
    suite = [] if all(t.startswith(bcb) for t in tasks) else ["--suite", "all"]
    argv = ["convtui", "bench", "live", "--model", config.model, "--protocol", config.protocol,
            "--feedback", omega, "--turns", str(config.max_turns - 1), *suite, "--ids", ids,
            "--db", str(db)]  # fmt: skip
    return shlex.join(argv)


def report_command(
    db: Path,
    targets: Sequence[str],
    as_json: bool,
    plot: Path | None,
    replay: ReplayOptions,
    bootstrap: Bootstrap | None = None,
) -> int:
    """Print the report; 1 when some replayed session failed on model errors (the same
    command again retries them), else 0."""
    if plot is not None:
        need("matplotlib", "--plot")  # before the replays, not after them
    report = build_report(db, targets, replay, quiet=as_json, bootstrap=bootstrap)
    plots: list[Path] = []
    if plot is not None:
        from convtui.benchmarks.commands.study.study_plots import write_study_plots

        plots = write_study_plots(report, plot)
    if as_json:
        data = report_json(report)
        if plot is not None:
            data["plots"] = [str(p) for p in plots]
        print_json(data)
    else:
        print_report(report, plots)
    return 1 if any(s.failed for s in report.scorings) else 0
