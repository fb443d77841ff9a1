"""The options of ``convtui study …`` and of ``convtui session --study``, declared once (as
convtui/options.py declares the others)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

StudyFileArg = Annotated[
    Path,
    typer.Argument(
        metavar="STUDY.toml",
        help="The study file (TOML): name, tasks (ids, or a table that filters them), model, "
        "feedback, "
        "turns, protocol, user, annotators, overlap, seed; the README's Studies section shows "
        "one.",
        show_default=False,
    ),
]
StudyInitDbOpt = Annotated[
    Path,
    typer.Option(
        "--db",
        help="SQLite file to hold the study and every session of it (a new file, or a convtui "
        "database without a study).",
        show_default=False,
    ),
]
StudyDbOpt = Annotated[
    Path,
    typer.Option(
        "--db", help="The study's database (made by convtui study init).", show_default=False
    ),
]
AnnotatorNameArg = Annotated[
    str, typer.Argument(metavar="NAME", help="The annotator's name.", show_default=False)
]
AddTasksOpt = Annotated[
    int,
    typer.Option(
        "--tasks",
        min=0,
        help="How many tasks to give them: the least covered of those they do not have.",
    ),
]
SessionStudyOpt = Annotated[
    Path | None,
    typer.Option(
        "--study",
        help="Annotate in a study: open --annotator's next assignment from this study "
        "database, under the study's model, feedback, turns, protocol and user (f10: the next "
        "assignment, f4: the list). Records into the study database.",
        show_default=False,
    ),
]
