"""The progress bar the headless runs (bench live, static and codeif, doctor) draw on stderr
while they work: one look for all of them, and one rule for when it is left out."""

from __future__ import annotations

import os
from collections.abc import Sequence

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from convtui.benchmarks.output import console
from convtui.sessions import SessionRow


def progress_bar(
    unit: str | None = None, *, quiet: bool = False, transient: bool = False
) -> Progress:
    """A bar on stderr: its line's description, the bar, done/total (followed by ``unit``, what
    is counted, when given), time taken and time left; ``transient``: gone once done. Not
    drawn when ``quiet`` (the command prints JSON) or on CI, whose log it would only fill."""
    columns: list[ProgressColumn] = [
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
    ]
    if unit is not None:
        columns.append(TextColumn(unit))
    return Progress(
        *columns,
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console(stderr=True),
        disable=quiet or os.environ.get("CI") == "true",
        transient=transient,
    )


def sessions_task(bar: Progress, description: str, sessions: Sequence[SessionRow]) -> TaskID:
    """The bar's line for a run's sessions, those a resumed run finished already counted."""
    return bar.add_task(
        description, total=len(sessions), completed=sum(s.finished for s in sessions)
    )
