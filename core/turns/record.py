"""One turn as data: the model's reply, its code and verdict, and the feedback it received
(docs/design.md#vocabulary)."""

from __future__ import annotations

from dataclasses import dataclass

from convtui.core.execution.types import ExecResult
from convtui.core.models.types import ChatMessage, Completion


@dataclass(frozen=True)
class TurnFeedback:
    """The feedback a turn's code calls were given, where the protocol produces it inside the
    turn: ConvCodeWorld compiles the previous code, repairs it, asks the simulator about the
    repaired code and records these three fields with the turn's solution (its ``run.py``).
    None in a field: that feedback was not given."""

    compilation: str | None = None
    execution: str | None = None
    user: str | None = None
    user_source: str = "none"


@dataclass(frozen=True)
class Turn:
    """One model reply plus the feedback it received (docs/design.md#vocabulary).

    ``execution_feedback`` and ``verbal_feedback`` are what the *next* turn's prompt carries
    about this turn's code; ``feedback_source`` says who gave the verbal part
    (``human``, ``simulator:<model>``) or ``none``. ``feedback_draft`` is a simulator's draft
    that a person was shown before sending (``--user assist:*``); an edited draft is sent as
    ``human``, so the label never claims words the simulator did not write."""

    idx: int
    reply: str
    code: str
    compiled: bool
    compile_feedback: str
    execution: ExecResult | None
    execution_feedback: str | None = None
    verbal_feedback: str | None = None
    feedback_source: str = "none"
    generate_call: Completion | None = None
    simulate_call: Completion | None = None
    prompt: tuple[ChatMessage, ...] = ()
    prompt_hash: str = ""
    notes: tuple[str, ...] = ()
    feedback_draft: str | None = None
    received: TurnFeedback | None = None

    @property
    def feedback_edited(self) -> bool | None:
        """Whether the person changed the simulator's draft; None when there was no draft."""
        if self.feedback_draft is None:
            return None
        return self.feedback_draft != (self.verbal_feedback or "")

    @property
    def passed(self) -> bool:
        return self.execution is not None and self.execution.passed
