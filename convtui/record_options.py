"""The options of ``convtui report`` and ``convtui sessions``, each declared once (the
shared ones are in convtui/options.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from convtui.benchmarks.settings import ExportFormat
from convtui.core.settings.config import UserKind
from convtui.options import runs_option

SessionDbOpt = Annotated[
    Path, typer.Option("--db", help="SQLite file that records every turn (must exist).")
]
SessionTaskOpt = Annotated[
    str | None, typer.Option("--task", help="Only sessions of this task id.", show_default=False)
]
SessionStatusOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--status",
        help="Only sessions in this status (repeatable or comma-separated: solved, exhausted, "
        "stalled, failed, accepted, abandoned, planned, running).",
        show_default=False,
    ),
]
SessionUserOpt = Annotated[
    UserKind | None,
    typer.Option(
        "--user",
        help="Only sessions whose feedback came from: human, simulator, assist or none.",
        show_default=False,
    ),
]
ReportRunOpt = Annotated[
    list[str] | None,
    runs_option(
        "Only these run ids (repeatable; default: every run, newest first for repeated tasks)."
    ),
]
ReportOutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out",
        help="Folder for the CSV and JSON files (default: beside the database).",
        show_default=False,
    ),
]
CorrelateOpt = Annotated[
    bool,
    typer.Option(
        "--correlate",
        help="Per feedback setting, Spearman and Kendall rank correlation between live and "
        "static (replayed) MRR and Recall over the models that have both.",
    ),
]
PlotOpt = Annotated[
    Path | None,
    typer.Option(
        "--plot",
        help="Folder for figures (PNG and SVG): Pass@1 per turn, a panel per feedback "
        "setting; a live-vs-static MRR scatter when some model has both.",
        show_default=False,
    ),
]
IntervalSeedOpt = Annotated[
    int,
    typer.Option(
        "--seed",
        min=0,
        help="Seed of the bootstrap intervals over tasks: the same seed gives the same bytes.",
    ),
]
IntervalResamplesOpt = Annotated[
    int,
    typer.Option("--resamples", min=1, help="Bootstrap resamples of the tasks per interval."),
]
NoIntervalsOpt = Annotated[
    bool,
    typer.Option(
        "--no-intervals",
        help="Print the numbers alone, without their 95% intervals over tasks (no bootstrap).",
    ),
]
LimitOpt = Annotated[
    int | None,
    typer.Option("--limit", min=1, help="Show at most this many.", show_default=False),
]
SessionIdArg = Annotated[
    str,
    typer.Argument(
        help="Session id, or a unique prefix of at least 6 characters (sessions list "
        "shows the shortest unique one)."
    ),
]
SessionIdsArg = Annotated[
    list[str] | None,
    typer.Argument(help="Session ids or unique prefixes.", show_default=False),
]
ExportFormatOpt = Annotated[
    ExportFormat,
    typer.Option(
        "--format",
        help="jsonl (one object per session, every turn and prompt), convcodebench "
        "(static log sets: a folder per model and Ω, a file per turn, a manifest) or codeif "
        "(CodeIF-Bench's completions file: one object per round with task_id, requirement "
        "and completion; by default every CodeIF-Bench conversation).",
    ),
]
ExportOutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out",
        help="jsonl: a file, or - for stdout (the default). convcodebench: a folder "
        "(default: <db name>-static-logs beside the database). codeif: a folder, one set of "
        "the benchmark's files per run (base.jsonl and n_round.jsonl as its scripts read "
        "them; default: <db name>-codeif beside the database), or a .jsonl file or - for one "
        "stream, one conversation per task.",
        show_default=False,
    ),
]
ExportAllOpt = Annotated[bool, typer.Option("--all", help="Every recorded session.")]
ExportModelNameOpt = Annotated[
    str | None,
    typer.Option(
        "--model-name",
        help="convcodebench: the model's name in the files, what ConvCodeWorld's "
        "print_results.py and run.py take as --model_name (e.g. an http:// server's "
        "Qwen/Qwen2.5-Coder-7B-Instruct); default: the spec, made file-safe. One model per "
        "export.",
        show_default=False,
    ),
]
ExportRunOpt = Annotated[
    list[str] | None, runs_option("Only sessions of these runs (ids or prefixes; repeatable).")
]
IncludeUnfinishedOpt = Annotated[
    bool,
    typer.Option("--include-unfinished", help="Also export sessions still planned or running."),
]
ImportDirArg = Annotated[
    Path,
    typer.Argument(
        help="A folder in ConvCodeWorld's static layout: the one holding results/v0.3.6/ "
        "(bigcodebench_<model>_CF..._ITER=k.jsonl and their _eval_results.json) and "
        "bigcodebench/sanitized_calibrated_samples/instruct/ (turn 0), e.g. the published "
        "ConvCodeBench logs or a sessions export --format convcodebench.",
        show_default=False,
    ),
]
ImportDbOpt = Annotated[
    Path, typer.Option("--db", help="SQLite file to load the logs into (created if missing).")
]
MergeSourcesArg = Annotated[
    list[Path] | None,
    typer.Argument(help="convtui databases to merge from (left unchanged).", show_default=False),
]
MergeDbOpt = Annotated[
    Path, typer.Option("--db", help="SQLite file to merge into (created if missing).")
]
MergeAnnotatorOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--annotator",
        metavar="NAME",
        help="Who recorded the files (who handed them in): every session they add or link "
        "must name them. Needed to merge into a study's database files whose sessions name "
        "annotators; repeat it for a file two people recorded in.",
        show_default=False,
    ),
]
MergeDryRunOpt = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="Check each file and say what it would add (sessions, turns, assignments linked, "
        "fidelity rows); write nothing.",
    ),
]
MergeUndoOpt = Annotated[
    bool,
    typer.Option(
        "--undo",
        help="Take back the last merge into --db (every file it took), and nothing recorded "
        "since; refused when something recorded since builds on it.",
    ),
]
# The caps' defaults are sessions/merging/merge_limits.py's DEFAULT_MAX_*, written out here so that
# --help does not load the store (tests/test_cli_sessions.py keeps the two the same).
MergeMaxSessionsOpt = Annotated[
    int, typer.Option("--max-sessions", min=0, help="Most sessions one file may add.")
]
MergeMaxTurnsOpt = Annotated[
    int, typer.Option("--max-turns", min=0, help="Most turns the sessions one file adds may hold.")
]
MergeMaxBytesOpt = Annotated[
    int,
    typer.Option(
        "--max-bytes",
        min=1,
        help="Largest file taken, with the -wal beside it, in bytes (1073741824 is 1 GiB).",
    ),
]
MergeMaxSecondsOpt = Annotated[
    float,
    typer.Option(
        "--max-seconds",
        min=0,
        help="Longest one file may take to copy, check and write; past it its write is "
        "rolled back.",
    ),
]
