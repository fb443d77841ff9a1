"""A session's configuration, its turns, and the journals the turn loop writes through.

The loop (loop.py) is pure library code: it never touches SQLite. It reports every model call
and execution through the small protocols below, which the store implements; that is how a
resumed run finds a finished model call again instead of paying for it twice."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Literal, Protocol

from convtui.core.execution.types import ExecResult, Limits
from convtui.core.models.extract import ExtractMode
from convtui.core.models.types import (
    Attempt,
    CallKind,
    CallPurpose,  # defined with the model types (CallInfo), imported from here by most callers
    ChatMessage,
    Completion,
    GenerationParams,
)
from convtui.core.settings.omega import FeedbackConfig, PartialRule

ContextMode = Literal["markov", "full"]
# Whose rules a session follows: ConvCodeWorld's reference exactly, or our own design
# (protocol.py holds what each one sets).
ProtocolName = Literal["convcodeworld", "convtui"]
__all__ = ["ContextMode", "ExtractMode", "PartialRule", "ProtocolName"]  # for the front ends
SessionStatus = Literal[
    "planned", "running", "solved", "exhausted", "stalled", "failed", "accepted", "abandoned"
]
# Who gives a played session's verbal feedback: a person, a simulated novice or expert, or a
# simulator that drafts for the person (``session --user``); and where a recorded session's
# came from (``sessions list --user``). Declared here, where the app, the store and
# ``convtui --help`` (which must stay light) all read them.
UserMode = Literal["human", "novice", "expert", "assist:novice", "assist:expert"]
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


@dataclass(frozen=True)
class CallRequest:
    """A model call as the journal records it before it is made: the turn it belongs to, its
    purpose, its request (hashed and whole) and the model. ``seq`` is its position among the
    turn's calls; a ``text`` call's one prompt is ``messages[0].content``."""

    turn_idx: int
    purpose: CallPurpose
    request_hash: str
    messages: tuple[ChatMessage, ...]
    params: GenerationParams
    model: str
    seq: int = 0
    kind: CallKind = "chat"


class CallJournal(Protocol):
    """Where model calls are recorded as they happen (the store implements it).

    ``session_id`` names the session the calls belong to; the loop passes it to the backend
    (``CallInfo.session``) so a scripted backend can keep one script position per session."""

    session_id: str

    def find(
        self, turn_idx: int, purpose: CallPurpose, request_hash: str, *, seq: int = 0
    ) -> Completion | None:
        """A finished call with this request, to reuse instead of calling again (recorded as
        a reuse at position ``seq`` of the turn)."""

    def started(self, call: CallRequest) -> str:
        """Record a call before it is made; returns its id."""

    def attempt(self, call_id: str, attempt: Attempt) -> None:
        """Record one attempt (retries included)."""

    def finished(self, call_id: str, completion: Completion | None, error: str = "") -> None:
        """Record the outcome of a call."""


class ExecutionCache(Protocol):
    """Results keyed by the executor's cache key (the store's executions table)."""

    def get(self, key: str) -> ExecResult | None: ...

    def put(self, key: str, task_id: str, code: str, result: ExecResult) -> None: ...


def request_hash(
    model: str,
    messages: tuple[ChatMessage, ...],
    params: GenerationParams,
    kind: CallKind = "chat",
) -> str:
    """The identity of a model request: same hash, same answer at temperature 0. A raw-text
    call (its prompt as the one message) never shares a hash with a chat call."""
    request: dict = {
        "model": model,
        "messages": [asdict(m) for m in messages],
        "params": asdict(params),
    }
    if kind != "chat":  # chat hashes stay as they were before text calls existed
        request["kind"] = kind
    blob = json.dumps(request, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def text_request_hash(model: str, prompt: str, params: GenerationParams) -> str:
    """``request_hash`` of a raw-text call (``ModelBackend.complete_text``), its prompt
    journaled as the one message: a raw prompt and a chat message of the same words are
    different requests (no chat template on one), so they never share a hash."""
    return request_hash(model, (ChatMessage("user", prompt),), params, "text")
