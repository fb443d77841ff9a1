"""What ``convtui study fidelity`` found (study_fidelity.py computes it;
study_fidelity_views.py prints it, fidelity_plots.py draws it), in a module of its own so that
neither imports the body."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from convtui.core.studies.feedback_words import WordsReport
from convtui.core.studies.fidelity_rows import FidelityReport
from convtui.core.studies.fidelity_states import SimulatorIdentity, State


@dataclass(frozen=True)
class FidelityResult:
    """What the report shows: the states, the tables, the words, who each simulated source
    is, and how this run went (calls it made, steps that failed)."""

    db: Path
    states: tuple[State, ...]
    targets: tuple[str, ...]
    report: FidelityReport
    words: WordsReport
    identities: dict[str, SimulatorIdentity]
    asked: int
    played: int
    failed: tuple[str, ...]
    # spec -> the names its server answered as: a URL names a server, not a model.
    served: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        """``FidelityReport.to_json()`` plus the words, the identities and the run."""
        return {
            **self.report.to_json(),
            "words": self.words.to_json(),
            "simulators": [
                {
                    "source": source,
                    "model": who.model,
                    "served_as": list(self.served.get(who.model, ())),
                    "persona": who.persona,
                    "protocol": who.protocol,
                    "prompt_sha256": who.prompt_sha256,
                }
                for source, who in self.identities.items()
            ],
            "targets": list(self.targets),
            "states": [
                {
                    "state": s.state_id,
                    "session_id": s.session_id,
                    "turn": s.turn_idx,
                    "task_id": s.task_id,
                    "annotator": s.annotator,
                    "user_kind": s.user_kind,
                }
                for s in self.states
            ],
            "run": {"simulator_steps": self.asked, "target_turns": self.played},
            "failed": list(self.failed),
        }
