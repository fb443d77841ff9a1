"""Who may open the served study: a token is checked against the study's stored hashes on
every request, so a token that `study token` replaced or `study reassign` retired stops
working at once, with no session state in the server to fall out of date."""

from __future__ import annotations

from dataclasses import dataclass

from convtui.sessions import Store
from convtui.sessions.studies.study_rows import StudyRow, who_holds


@dataclass(frozen=True)
class StudyGate:
    """The study a server serves and the store that holds its tokens."""

    store: Store
    study: StudyRow

    def annotator_for(self, token: str | None) -> str | None:
        """The active annotator holding ``token``; None for a missing or unknown one."""
        if not token:
            return None
        return who_holds(self.store, self.study.id, token)
