"""The options of ``convtui bench live``, ``static`` and ``codeif``, each declared once (the
shared ones are in convtui/options.py, the groups in convtui/option_groups.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from convtui.core.codeif.conversation import BenchMode, Prompting
from convtui.core.codeif.programs import CodeifProtocol
from convtui.core.settings.config import ContextMode, ProtocolName
from convtui.core.settings.omega import FeedbackChoice, FeedbackSource
from convtui.options import feedback_choice, runs_option

LiveSimulatorOpt = Annotated[
    str | None,
    typer.Option(
        "--simulator",
        help="Model that plays the novice or expert user, any --model spec (default: --model).",
        show_default=False,
    ),
]
LiveFeedbackOpt = Annotated[
    FeedbackChoice,
    typer.Option(
        "--feedback",
        help="Feedback configuration, e.g. CF,EF:partial,VF:novice, or all for the 9 combinations.",
        parser=feedback_choice,
        metavar="<str>",
    ),
]
LogsOpt = Annotated[
    Path,
    typer.Option(
        "--logs",
        help="Where the reference's logs are: a convtui database (a bench live or session "
        "--db; may be the same file as --db).",
    ),
]
StaticDbOpt = Annotated[
    Path,
    typer.Option(
        "--db",
        help="SQLite file the replays are recorded in; reference sessions from another "
        "database are copied in first, so the report can set the two side by side.",
    ),
]
StaticProtocolOpt = Annotated[
    ProtocolName | None,
    typer.Option(
        "--protocol",
        help="Must be the one the logs were recorded under (the default): convcodeworld "
        "replays as ConvCodeBench (the target plays on after its own pass, per-turn Pass@1); "
        "convtui stops at the target's first pass (cumulative Pass@1).",
        show_default=False,
    ),
]
StaticTurnsOpt = Annotated[
    int | None,
    typer.Option(
        "--turns",
        min=0,
        max=50,
        help="Feedback turns after turn 0 (default: the reference's).",
        show_default=False,
    ),
]
StaticContextOpt = Annotated[
    ContextMode | None,
    typer.Option(
        "--context",
        help="markov: at turn t the target sees the reference's turn t-1 and its feedback "
        "(ConvCodeBench). full: every reference turn before t (convtui protocol only). "
        "Default: the reference's.",
        show_default=False,
    ),
]
StaticFeedbackOpt = Annotated[
    list[FeedbackChoice] | None,
    typer.Option(
        "--feedback",
        help="Only log sets under these feedback configurations (repeatable; e.g. "
        "CF,EF:full,VF:novice, or all).",
        show_default=False,
        parser=feedback_choice,
        metavar="<list[str]>",
    ),
]
StaticRunOpt = Annotated[
    list[str] | None,
    runs_option("Only sessions of these runs of the logs database (ids or prefixes; repeatable)."),
]
RefModelOpt = Annotated[
    str | None,
    typer.Option(
        "--ref-model", help="Only log sets of this reference model spec.", show_default=False
    ),
]
LogUserOpt = Annotated[
    FeedbackSource | None,
    typer.Option(
        "--user",
        help="Only log sets whose feedback came from: human (people, one log set per "
        "annotator), novice or expert (simulators), none (no verbal feedback).",
        show_default=False,
    ),
]
CodeifModeOpt = Annotated[
    BenchMode,
    typer.Option(
        "--mode",
        help="static: every instruction in the task's order, the model's own answers as "
        "context, no feedback (the paper's static conversation); dynamic: the first "
        "instruction the code does not follow, a feedback round after a miss, dropped after "
        "two; under --protocol codeif exactly as the authors' dynamic script plays it (the "
        "task's prompt alone first, Functionality Extension left out, each instruction on its "
        "own tests, at most 2 x requirements + 2 turns), under convtui by convtui's rules "
        "(every instruction, at most twice as many rounds as instructions).",
        case_sensitive=False,
    ),
]
CodeifProtocolOpt = Annotated[
    CodeifProtocol,
    typer.Option(
        "--protocol",
        help="codeif: check candidates as CodeIF-Bench's evaluation does (indented docstrings "
        "and blank lines removed first; dynamic conversations as the authors' dynamic script "
        "plays and checks them); convtui: check the code as written.",
        case_sensitive=False,
    ),
]
CodeifLogsOpt = Annotated[
    Path | None,
    typer.Option(
        "--logs",
        help="Replay the CodeIF-Bench conversations people recorded in the app (convtui "
        "session --task CodeIF/N) in this database against --model: each round's words as "
        "the person sent them, every instruction checked; one per task (the newest).",
        show_default=False,
    ),
]
CodeifScoreOnlyOpt = Annotated[
    Path | None,
    typer.Option(
        "--score-only",
        help="Call no model: score this completions file (CodeIF-Bench's layout: JSON lines "
        "of task_id, requirement and completion, as sessions export --format codeif writes "
        "them; a task's first record is its base answer) as static conversations, and record "
        "them as a run that report shows. The model is the file's, else scored:<file stem>.",
        show_default=False,
    ),
]
CodeifPromptingOpt = Annotated[
    Prompting,
    typer.Option(
        "--prompting",
        help="direct: each round's message as the benchmark words it; cot: each round also "
        "asks the model to reason step by step before giving the code (the paper's RQ4 "
        "Chain-of-Thought setting; its prompt is unpublished, so the words are convtui's). "
        "Recorded with the run; report keeps the two apart.",
        case_sensitive=False,
    ),
]
