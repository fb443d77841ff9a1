"""Wiring for ``convtui compare``: read the sessions of one database or several (live
BigCodeBench runs through sessions/reading/results.py, static replays as ``report`` reads them),
keep the selection, make the sides, compare them (benchmarks/reports/compare.py) and print. With
``--plan``, size a comparison without any database (benchmarks/reports/compare_plan.py). Nothing is
written."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich.text import Text

from convtui.benchmarks.commands.report import read_replayed
from convtui.benchmarks.output import console, print_json
from convtui.benchmarks.reports.compare import (
    KIND_NAMES,
    CompareResult,
    Played,
    Side,
    build_comparison,
    split_sides,
)
from convtui.benchmarks.reports.compare_plan import plan, plan_json, plan_lines
from convtui.benchmarks.reports.compare_tables import (
    compare_json,
    comparison_table,
    flip_lines,
    header_lines,
    ranks_table,
)
from convtui.benchmarks.settings import CompareBy, CompareKind
from convtui.core.catalog.loaders import parse_id_spec
from convtui.core.errors import ConvtuiError
from convtui.core.metrics.stats import Bootstrap
from convtui.core.plural import counted
from convtui.sessions import Store
from convtui.sessions.reading.results import run_outcomes, run_turn_passes


@dataclass(frozen=True)
class Selection:
    """``--model``, ``--feedback`` (canonical labels), ``--run`` (ids or prefixes) and
    ``--ids``: the sessions kept; empty keeps all."""

    models: tuple[str, ...] = ()
    feedback: tuple[str, ...] = ()
    runs: tuple[str, ...] = ()
    ids: str | None = None


@dataclass(frozen=True)
class CompareRequest:
    dbs: tuple[Path, ...]
    selection: Selection
    by: CompareBy | None = None
    sides: tuple[str, ...] = ()  # NAME=RUN[,RUN...]
    kind: CompareKind | None = None
    metrics: tuple[str, ...] = ()
    bootstrap: Bootstrap = field(default_factory=Bootstrap)
    as_json: bool = False
    plot: Path | None = None  # a folder for the differences' figure


def compare_command(request: CompareRequest) -> None:
    """Compare and print; every refusal is a ConvtuiError raised before anything prints."""
    for db in request.dbs:
        if not db.exists():
            raise ConvtuiError(f"no results database at {db}")
    if request.by is not None and request.sides:
        raise ConvtuiError("give --by or --side, not both: --side names the sides itself")
    explicit = [_side_spec(s) for s in request.sides]
    names = [name for name, _ in explicit]
    if len(set(names)) < len(names):
        raise ConvtuiError(f"--side names must differ: {', '.join(names)}")
    played = [p for db in request.dbs for p in read_played(db)]
    _check_runs([run for _, runs in explicit for run in runs], played, request.dbs)
    kept = select(played, request.selection, request.dbs)
    kind = request.kind or _default_kind(kept, request.dbs)
    of_kind = [p for p in kept if p.kind == kind]
    by = None if explicit else request.by or ("db" if len(request.dbs) > 1 else "model")
    if explicit:
        sides = [
            Side(
                name,
                f"runs {', '.join(runs)}",
                tuple(p for p in of_kind if p.run_id.startswith(runs)),
            )
            for name, runs in explicit
        ]
    else:
        assert by is not None
        if by == "annotator" and not any(p.annotator for p in of_kind):
            raise ConvtuiError(
                f"--by annotator: no {KIND_NAMES[kind]} session of the selection names an "
                "annotator (replays of people's sessions do: --kind static)"
            )
        sides = split_sides(of_kind, by, [str(db) for db in request.dbs])
    result = build_comparison(kind, sides, by, request.bootstrap, request.metrics)
    others = sorted({p.kind for p in kept} - {kind})
    also = [
        f"also held: {counted(sum(p.kind == k for p in kept), 'session')} of {KIND_NAMES[k]}, "
        f"not compared here (--kind {k})"
        for k in others
    ]
    plots = _plot(result, request)
    if request.as_json:
        print_json({**compare_json(result), "also_held": also, "plots": [str(p) for p in plots]})
        return
    screen = console()
    for line in header_lines(result):
        screen.print(Text(line), soft_wrap=True)
    screen.print(comparison_table(result))
    flips = flip_lines(result)
    if flips:
        screen.print(Text("tasks that flip:", style="bold"))
        for line in flips:
            screen.print(Text(f"  {line}"), soft_wrap=True)
    if len(result.sides) > 2:
        screen.print(ranks_table(result))
    for line in also:
        screen.print(Text(line), soft_wrap=True)
    if plots:
        screen.print(Text(f"plots: {', '.join(str(p) for p in plots)}"), soft_wrap=True)


def _plot(result: CompareResult, request: CompareRequest) -> list[Path]:
    """The differences' figure under ``request.plot``, named after the first database."""
    if request.plot is None:
        return []
    from convtui.benchmarks.reports.compare_plots import write_compare_plot

    return write_compare_plot(result, request.plot, request.dbs[0].stem)


def plan_command(
    tasks: int | None,
    baseline: float,
    correlation: float,
    difference: float | None,
    as_json: bool,
) -> None:
    p = plan(tasks, baseline, correlation, difference)
    if as_json:
        print_json(plan_json(p))
        return
    screen = console()
    for line in plan_lines(p):
        screen.print(Text(line), soft_wrap=True)


PLAN_BASELINE = 0.5  # the rate whose differences vary most: the safe side of a plan
PLAN_CORRELATION = 0.5


def plan_defaults(baseline: float | None, correlation: float | None) -> tuple[float, float]:
    """``--baseline`` and ``--correlation``, or their defaults."""
    return (
        PLAN_BASELINE if baseline is None else baseline,
        PLAN_CORRELATION if correlation is None else correlation,
    )


def refuse_plan_options(values: Sequence[object]) -> None:
    """--tasks, --baseline, --correlation and --difference size a plan: without --plan they
    would be ignored, so they are refused."""
    if any(v is not None for v in values):
        raise ConvtuiError(
            "--tasks, --baseline, --correlation and --difference size a plan: add --plan"
        )


def _side_spec(spec: str) -> tuple[str, tuple[str, ...]]:
    """``NAME=RUN[,RUN...]`` as a name and its run ids or prefixes."""
    name, sep, runs = spec.partition("=")
    found = tuple(r.strip() for r in runs.split(",") if r.strip())
    if not sep or not name.strip() or not found:
        raise ConvtuiError(f"--side {spec!r}: write NAME=RUN[,RUN...], e.g. --side new=01jv3k8m")
    return name.strip(), found


def _check_runs(prefixes: Sequence[str], played: Sequence[Played], dbs: Sequence[Path]) -> None:
    runs = {p.run_id for p in played}
    for prefix in prefixes:
        if not any(r.startswith(prefix) for r in runs):
            where = ", ".join(str(db) for db in dbs)
            raise ConvtuiError(f"no run {prefix!r} with BigCodeBench sessions in {where}")


def select(played: Sequence[Played], selection: Selection, dbs: Sequence[Path]) -> list[Played]:
    """The sessions of ``played`` that ``selection`` keeps; a --run that names no run is
    refused."""
    _check_runs(selection.runs, played, dbs)
    wanted = _task_filter(selection.ids)
    return [
        p
        for p in played
        if (not selection.models or p.model in selection.models)
        and (not selection.feedback or p.feedback in selection.feedback)
        and (not selection.runs or p.run_id.startswith(selection.runs))
        and wanted(p.task_id)
    ]


def _task_filter(ids: str | None) -> Callable[[str], bool]:
    if ids is None:
        return lambda task_id: True
    ranges, full = parse_id_spec(ids)

    def keep(task_id: str) -> bool:
        number = task_id.rsplit("/", 1)[-1]
        return task_id in full or (
            number.isdecimal() and any(lo <= int(number) <= hi for lo, hi in ranges)
        )

    return keep


def _default_kind(kept: Sequence[Played], dbs: Sequence[Path]) -> CompareKind:
    """Live sessions when the selection holds any, else static ones."""
    kinds = {p.kind for p in kept}
    for kind in ("live", "static"):
        if kind in kinds:
            return kind  # type: ignore[return-value]
    where = ", ".join(str(db) for db in dbs)
    raise ConvtuiError(
        f"no BigCodeBench session (live or static) in {where} matches this selection: run "
        "convtui bench live or bench static first (compare reads BigCodeBench sessions; "
        "convtui report gives CodeIF-Bench's metrics with their intervals)"
    )


def read_played(db: Path) -> list[Played]:
    """Every BigCodeBench session of ``db``'s runs, live and replayed, with its verdicts."""
    with Store.open(db) as store:
        return [*_live(store, str(db)), *_static(store, str(db))]


def _live(store: Store, db: str) -> list[Played]:
    outcomes = run_outcomes(store)
    runs = {r: store.run(r) for r in {o.run_id for o in outcomes}}
    live = sorted(
        r for r, row in runs.items() if row.benchmark == "bigcodebench" and row.mode == "live"
    )
    if not live:
        return []
    passes = run_turn_passes(store, live)
    chosen = set(live)
    return [
        Played(
            kind="live",
            db=db,
            run_id=o.run_id,
            task_id=o.task_id,
            model=o.model,
            feedback=o.feedback,
            protocol=runs[o.run_id].config.protocol,
            max_turns=o.max_turns,
            verdicts=passes.get(o.session_id, ()),
        )
        for o in outcomes
        if o.run_id in chosen
    ]


def _static(store: Store, db: str) -> list[Played]:
    return [
        Played(
            kind="static",
            db=db,
            run_id=r.run_id,
            task_id=r.task_id,
            model=r.model,
            feedback=r.feedback,
            protocol=r.protocol,
            max_turns=r.max_turns,
            verdicts=r.target,
            reference=r.reference,
            log_set=", ".join(x for x in (r.reference_model, r.context, r.source) if x),
            annotator=r.annotator,
        )
        for r in read_replayed(store, None)
    ]
