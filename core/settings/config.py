"""A session's configuration: what decides what a session does, recorded and hashed with every
run. Its turns and the journals the turn loop writes through are in core/turns."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Literal, TypeAlias

from convtui.core.execution.types import Limits
from convtui.core.models.extract import ExtractMode
from convtui.core.models.types import (
    GenerationParams,
)
from convtui.core.settings.omega import FeedbackConfig, PartialRule
from convtui.core.settings.persona import PERSONAS

ContextMode = Literal["markov", "full"]
# Whose rules a session follows: ConvCodeWorld's reference exactly, or our own design
# (protocol.py holds what each one sets).
ProtocolName = Literal["convcodeworld", "convtui"]
__all__ = ["ContextMode", "ExtractMode", "PartialRule", "ProtocolName"]  # for the front ends
SessionStatus = Literal[
    "planned", "running", "solved", "exhausted", "stalled", "failed", "accepted", "abandoned"
]
# Who gives a played session's verbal feedback: a person, a simulated persona, or a
# simulator of a persona that drafts for the person (``session --user``); and where a
# recorded session's came from (``sessions list --user``). Declared here, where the app, the
# store and ``convtui --help`` (which must stay light) all read them; derived from the
# personas (persona.py). "assist:<persona>" has no Literal a type checker can derive, so
# UserMode is a Literal at run time (typer's choices and --help) and str to mypy: a value
# from outside is checked against USER_MODES.
ASSIST_MODES: tuple[str, ...] = tuple(f"assist:{p}" for p in PERSONAS)
USER_MODES: tuple[str, ...] = ("human", *PERSONAS, *ASSIST_MODES)
if TYPE_CHECKING:
    UserMode: TypeAlias = str
else:
    UserMode = Literal[USER_MODES]
UserKind = Literal["human", "simulator", "assist", "none"]
# A person may end a session early: ``accepted`` (the code is good enough although tests fail)
# or ``abandoned`` (gave up). Neither counts as solved in any metric: that takes passing tests.
ClosingStatus = Literal["accepted", "abandoned"]


@dataclass(frozen=True)
class SessionConfig:
    """Everything that decides what a session does; recorded with every run and hashed so
    that runs with different settings never mix in one table."""

    model: str
    protocol: ProtocolName = "convtui"
    feedback: FeedbackConfig = field(default_factory=FeedbackConfig)
    simulator: str | None = None
    context: ContextMode = "markov"
    partial_rule: PartialRule = "ccw"
    extract: ExtractMode = "robust"
    # Generations in all: turn 0 plus the feedback turns (``--turns`` counts the latter).
    max_turns: int = 11
    # Quote the candidate's own source lines in execution feedback tracebacks (BigCodeBench's
    # tracebacks cannot: see feedback.without_candidate_source).
    ef_source_lines: bool = True
    params: GenerationParams = field(default_factory=GenerationParams)
    simulator_params: GenerationParams = field(default_factory=GenerationParams)
    limits: Limits = field(default_factory=Limits)
    # The executor's isolation label (isolation.py), set by the front end once the executor
    # is open: verdicts differ between levels, so runs under different ones never mix.
    isolation: str = ""

    def to_dict(self) -> dict:
        data = asdict(self)
        data["feedback"] = self.feedback.label
        if not self.isolation:  # unrecorded: configs from before the field keep their hash
            del data["isolation"]
        return data

    @property
    def config_hash(self) -> str:
        blob = json.dumps(self.to_dict(), sort_keys=True, default=list)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]
