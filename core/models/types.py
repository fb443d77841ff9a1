"""The values that cross the model layer: messages in, completions and attempts out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from convtui.core.errors import ConvtuiError

Role = Literal["system", "user", "assistant"]
AttemptStatus = Literal["ok", "rate_limit", "transient", "fatal", "timeout"]
ErrorKind = Literal["rate_limit", "transient", "fatal", "context_length", "timeout"]
# Why the turn loop calls a model. Code calls: ``generate`` is a turn's first code call;
# ``repair`` a further one in the same turn after the code did not compile (ConvCodeWorld makes
# up to 3 code calls a turn); ``stale_ef`` an extra code call carrying the previous turn's
# execution feedback (ConvCodeWorld under EF:full). ``simulate``: the model plays the user.
CallPurpose = Literal["generate", "repair", "stale_ef", "simulate"]
# How a request reaches the model: chat messages, or one raw prompt string (``complete_text``;
# the completions endpoint, no chat template, as ConvCodeWorld sent feedback turns through
# DSPy 2.4's HFClientVLLM).
CallKind = Literal["chat", "text"]


@dataclass(frozen=True)
class ChatMessage:
    role: Role
    content: str


@dataclass(frozen=True)
class GenerationParams:
    """Sampling settings for one call. The defaults are the benchmark's: greedy and seeded,
    so a temperature-0 call can be cached and replayed."""

    temperature: float = 0.0
    max_tokens: int = 1024
    stop: tuple[str, ...] = ()
    seed: int | None = 0


@dataclass(frozen=True)
class CallInfo:
    """Where a call sits: which session (a key stable for the session's life, e.g. its
    store id), which turn, why, and its position among the turn's calls. The turn loop
    passes it with every call; models ignore it (it is not part of the request, nor of its
    hash), except the scripted ``mock:`` backend, whose answer is the next row of the
    session's script.

    ``seq`` tells apart the calls of one turn: 0 for the first, then counting up in the
    order the turn makes them (e.g. generate 0, repair 1, repair 2, stale_ef 3). Callers that
    make one call per purpose and turn leave it at 0."""

    session: str
    turn_idx: int
    purpose: CallPurpose
    seq: int = 0


@dataclass(frozen=True)
class Completion:
    """One finished call. Token counts are None where the backend did not report them
    (llama.cpp's server sends no usage when streaming): 0 would read as a count.
    ``latency_s`` is the successful attempt's time; queueing, failed attempts and backoff
    waits are not in it (each attempt's time is reported through ``on_attempt``).
    ``attempts`` counts every try, this one included. ``resolved_model`` is what the server
    says answered (e.g. a dated snapshot).
    ``endpoint`` is the base URL of the server that gave the answer (one of several replicas
    of an ``http://`` spec); None for models that are not behind a URL."""

    text: str
    finish_reason: str
    input_tokens: int | None
    output_tokens: int | None
    latency_s: float
    attempts: int
    model: str
    resolved_model: str | None
    cached: bool = False
    endpoint: str | None = None


@dataclass(frozen=True)
class Attempt:
    """One try at a call, reported as it ends so callers can log every one. ``endpoint``:
    the base URL the try went to (the tries of one call may go to different replicas)."""

    number: int
    status: AttemptStatus
    latency_s: float
    error: str
    retry_after_s: float | None
    endpoint: str | None = None


class ModelError(ConvtuiError):
    """A call that failed for good, or a backend that cannot work at all (kind "fatal").

    ``attempts`` is how many tries were made; 0 for errors raised before any request."""

    def __init__(self, message: str, *, kind: ErrorKind = "fatal", attempts: int = 0) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.attempts = attempts
