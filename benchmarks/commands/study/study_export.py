"""``convtui study export``: a study's transcripts written for sharing
(sessions/studies/study_share.py), and a line or a JSON object saying what was written."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from convtui.benchmarks.output import console, print_json
from convtui.benchmarks.settings import StudyExportFormat
from convtui.core.plural import counted
from convtui.sessions.studies.study_rows import open_study
from convtui.sessions.studies.study_share import StudyExport, export_study


def export_command(
    db: Path, out: Path, fmt: StudyExportFormat, *, force: bool, finished_only: bool, as_json: bool
) -> StudyExport:
    # One format so far (the option's choices check it); the summary names it.
    with open_study(db) as (store, _study):
        done = export_study(store, out, force=force, finished_only=finished_only)
    if as_json:
        print_json(
            {
                "study": done.study,
                "format": fmt,
                "out": str(done.out),
                "files": [str(path) for path in done.files],
                "rows": done.rows,
                "sessions": done.sessions,
                "unfinished_sessions": done.unfinished_sessions,
                "annotators": list(done.annotators),
                "tasks": list(done.tasks),
            }
        )
        return done
    still_open = f", {done.unfinished_sessions} still open" if done.unfinished_sessions else ""
    console().print(
        Text(
            f"Study {done.study!r}: {counted(done.rows, 'turn')} of "
            f"{counted(done.sessions, 'session')}{still_open} by "
            f"{counted(len(done.annotators), 'annotator')} over "
            f"{counted(len(done.tasks), 'task')} → "
            f"{', '.join(str(path) for path in done.files)}"
        ),
        soft_wrap=True,
    )
    return done
