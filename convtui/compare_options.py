"""The options of ``convtui compare``, each declared once (the shared ones are in
convtui/options.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from convtui.benchmarks.settings import CompareBy, CompareKind
from convtui.core.settings.omega import FeedbackChoice
from convtui.options import feedback_choice, runs_option

CompareDbOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--db",
        help="SQLite file that records every turn (must exist); repeat to compare sessions "
        "of several files (default: results.db).",
        show_default=False,
    ),
]
CompareByOpt = Annotated[
    CompareBy | None,
    typer.Option(
        "--by",
        help="What splits the sessions into sides: model, feedback (Ω: what verbal feedback "
        "adds), run, db, annotator or log-set. Default: db when several --db are given, else "
        "model.",
        show_default=False,
    ),
]
CompareSideOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--side",
        metavar="NAME=RUN[,RUN…]",
        help="A side named by its runs (ids or prefixes); repeat for each side, two or more. "
        "Instead of --by.",
        show_default=False,
    ),
]
CompareModelOpt = Annotated[
    list[str] | None,
    typer.Option("--model", help="Only sessions of this model (repeatable).", show_default=False),
]
CompareFeedbackOpt = Annotated[
    list[FeedbackChoice] | None,
    typer.Option(
        "--feedback",
        parser=feedback_choice,
        help="Only sessions under this Ω, e.g. CF,EF:full (repeatable).",
        show_default=False,
    ),
]
CompareRunOpt = Annotated[
    list[str] | None, runs_option("Only sessions of these runs (ids or prefixes; repeatable).")
]
CompareKindOpt = Annotated[
    CompareKind | None,
    typer.Option(
        "--kind",
        help="live (bench live) or static (bench static replays) sessions; default: live "
        "where the selection holds any.",
        show_default=False,
    ),
]
CompareMetricOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--metric",
        help="Only these metrics (repeatable): pass1-tN (Pass@1 at turn N), mrr, recall. "
        "Default: all.",
        show_default=False,
    ),
]
CompareSeedOpt = Annotated[
    int, typer.Option("--seed", min=0, help="Seed of the bootstrap: the same seed, the same.")
]
CompareResamplesOpt = Annotated[
    int, typer.Option("--resamples", min=1, help="Bootstrap resamples of the tasks.")
]
PlanOpt = Annotated[
    bool,
    typer.Option(
        "--plan",
        help="Size a comparison before running it, with no database: what --tasks tasks "
        "detect, and the tasks --difference needs, at 80% power.",
    ),
]
PlanTasksOpt = Annotated[
    int | None,
    typer.Option("--tasks", min=1, help="--plan: the number of tasks.", show_default=False),
]
PlanBaselineOpt = Annotated[
    float | None,
    typer.Option(
        "--baseline",
        min=0.0,
        max=1.0,
        help="--plan: the share of tasks solved (0-1; default 0.5, the hardest to detect at).",
        show_default=False,
    ),
]
PlanCorrelationOpt = Annotated[
    float | None,
    typer.Option(
        "--correlation",
        min=-1.0,
        max=1.0,
        help="--plan: correlation of the two sides' per-task outcomes (default 0.5).",
        show_default=False,
    ),
]
PlanDifferenceOpt = Annotated[
    float | None,
    typer.Option(
        "--difference",
        min=0.0,
        max=1.0,
        help="--plan: the difference to detect (0-1: 0.02 is 2 points).",
        show_default=False,
    ),
]
ComparePlotOpt = Annotated[
    Path | None,
    typer.Option(
        "--plot",
        help="Folder for a figure (PNG and SVG) of each pair's differences with their "
        "intervals, a metric a row (needs the exec extra's matplotlib).",
        show_default=False,
    ),
]
