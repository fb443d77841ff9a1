"""What ``convtui study report`` found (study_report.py computes it; study_report_views.py
prints it, study_plots.py draws it), in a module of its own so that neither imports the body."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from convtui.benchmarks.commands.study.study_admin import StudyProgress
from convtui.benchmarks.commands.study.study_scores import Scoring
from convtui.core.studies.agreement import Agreement
from convtui.core.studies.outcomes import TaskOutcome
from convtui.core.studies.person_times import TimeSummary
from convtui.sessions.studies.study_rows import StudyRow


@dataclass(frozen=True)
class StudyReport:
    """Everything ``study report`` shows. ``outcomes``: annotator -> their finished sessions
    (every annotator, in enrolment order); ``record_simulated``: the command that records
    simulated users' logs, when the database holds none for the study's tasks; ``times``:
    annotator -> their time per turn over the turns of those sessions."""

    study: StudyRow
    db: Path
    progress: StudyProgress
    outcomes: dict[str, list[TaskOutcome]]
    scorings: tuple[Scoring, ...]
    agreement: Agreement
    record_simulated: str | None
    times: dict[str, TimeSummary] = field(default_factory=dict)

    @property
    def tasks(self) -> list[str]:
        return [t.task_id for t in self.progress.tasks]
